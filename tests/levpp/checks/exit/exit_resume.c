/* exit_resume.c - functions registered with atexit before a checkpoint
 * run when a process resumed from that checkpoint exits. Registers two
 * functions, a third at round 2, then prints a round at a time until the
 * file named by its argument exists, and returns 0; at exit the three
 * print, the last registered first, with the rounds the program ran. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int g_rounds;

static void first(void)
{
    puts("exit: first");
}

static void second(void)
{
    printf("exit: second after round %d\n", g_rounds);
}

static void third(void)
{
    puts("exit: third");
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    if (atexit(first) != 0 || atexit(second) != 0)
        return 1;
    long spin = 0;
    for (int r = 1; access(argv[1], F_OK) != 0; r++) {
        for (int i = 0; i < 100000; i++)
            spin += i % 7;
        g_rounds = r;
        if (r == 2 && atexit(third) != 0)
            return 1;
        printf("round %d %ld\n", r, spin);
        fflush(stdout);
    }
    return 0;
}
