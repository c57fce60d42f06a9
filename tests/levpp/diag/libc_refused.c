/* libc_refused.c - the C library calls of --main-task programs that levpp
 * refuses and libc_state.c does not show: the rest of the 48-bit family,
 * the state buffers of random, and the other exit handlers. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>

static char s_state[64];
static unsigned short s_seed[3] = {1, 2, 3};
static unsigned short s_param[7] = {1, 2, 3, 4, 5, 6, 7};

static void bye(void)
{
}

static void bye_status(int status, void *arg)
{
    (void)status;
    (void)arg;
}

int main(void)
{
    long a = lrand48();
    long b = mrand48();
    seed48(s_seed);
    lcong48(s_param);
    initstate(1, s_state, sizeof s_state);
    setstate(s_state);
    at_quick_exit(bye);
    on_exit(bye_status, NULL);
    printf("%ld %ld\n", a, b);
    return 0;
}
