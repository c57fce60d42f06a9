/* kr.c - functions defined the old way, as much C that other people wrote
 * still is: K&R definitions (an identifier list, then the parameters'
 * declarations, with char, short and float parameters that callers pass
 * promoted), definitions with an empty list `()`, calls through a
 * declaration without a prototype, and a K&R main with argc and argv.
 * All of them checkpointable (they loop or call what loops). The output
 * is compared with the native run's; exit status 0, or 1 on bad
 * arguments. */
/* levpp-test: resume 0 300 */
#include <stdio.h>
#include <stdlib.h>

static long mix(); /* no prototype: defined below */
static int s_seed = 7;

/* () definition: no parameters */
static int next()
{
    int r = 0;
    for (int i = 0; i < 3; i++)
        r = (r * 31 + s_seed++) % 1009;
    return r;
}

/* K&R: char, short and float arrive promoted to int and double */
static long mix(c, s, f, n)
    char c;
    short s;
    float f;
    long n;
{
    long acc = 0;
    for (long i = 0; i < n; i++)
        acc += c * 3 + s - (long)(f * 2) + next() % 7;
    return acc;
}

/* K&R with a pointer parameter */
static long total(v, n)
    const long *v;
    int n;
{
    long t = 0;
    for (int i = 0; i < n; i++)
        t += v[i];
    return t;
}

static long round_(r, work)
    int r;
    int work;
{
    long v[4];
    v[0] = mix('a' + r % 5, (short)(r * 3), 1.5f, (long)work);
    v[1] = mix(1, 2, 0.25f, 3L);
    v[2] = next();
    v[3] = total(v, 3);
    return total(v, 4);
}

int main(argc, argv)
    int argc;
    char **argv;
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int work = argc > 2 ? atoi(argv[2]) : 40;
    if (rounds < 0 || work < 0)
        return 1;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        printf("round %d: %ld\n", r, round_(r, work));
        fflush(stdout);
    }
    return 0;
}
