/* signal.c - signal handlers installed by a checkpointable function, with
 * signal and with sigaction. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t s_hits;

static void on_signal(int sig)
{
    (void)sig;
    s_hits++;
}

static void install(int n)
{
    for (int i = 0; i < n; i++) {
        signal(SIGUSR1, on_signal);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGUSR2, &sa, NULL);
    }
}

int main(void)
{
    install(2);
    printf("%d\n", (int)s_hits);
    return 0;
}
