/* exit_handlers.c - functions registered with atexit, before and between
 * safe points, run at exit in the reverse order of registration (one of
 * them twice), with the state they print built while the program ran:
 * levpp keeps the list in a travelling static, so a process that resumes
 * the program runs them too (checks/exit_resume.c covers that).
 * Exit status: 3. levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

static long g_total;
static int g_rounds;

static void report(void)
{
    printf("exit: %d rounds, total %ld\n", g_rounds, g_total);
}

static void bye(void)
{
    puts("exit: bye");
}

static long work(int r)
{
    long s = 0;
    for (int i = 0; i < 5000; i++)
        s += (i * (long)r) % 97;
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 12;
    if (atexit(bye) != 0 || atexit(report) != 0)
        return 1;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        g_total += work(r);
        g_rounds = r;
        if (r == 2 && atexit(bye) != 0)
            return 1;
        printf("round %d: %ld\n", r, g_total);
        fflush(stdout);
    }
    return 3;
}
