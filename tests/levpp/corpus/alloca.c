/* alloca.c - alloca buffers of checkpointable functions, alive across the
 * polls of the loops that use them: ints sized with sizeof in the
 * argument, structs holding pointers into other alloca buffers, a cast
 * that gives the type, a byte buffer typed by the pointer it is assigned
 * to, a size written with a macro whose body holds the sizeof (alloca
 * and malloc), __builtin_alloca, buffers taken in every pass of a loop and in
 * recursion; alloca in a function that is not checkpointable stays.
 * usage: alloca [N [ROUNDS [WORK]]]   (default 6 4 200; ROUNDS 0: until killed)
 * Exit status: the sum of the checks modulo 100. */
/* levpp-test: resume 30 0 2000 */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMS(k, T) ((k) * sizeof(T)) /* sizeof spelled in a macro's body */

struct link {
    int *value;
    struct link *next;
    char tag[4];
};

/* Not checkpointable: a byte buffer on the native stack. */
static int letters(int n)
{
    char *b = alloca((size_t)n + 1);
    memset(b, 'a', (size_t)n);
    b[n] = '\0';
    return (int)strlen(b);
}

/* Sums through a chain of links (checkpointable: it loops). */
static long walk(const struct link *l)
{
    long s = 0;
    for (; l; l = l->next)
        s += *l->value + l->tag[0];
    return s;
}

/* Each level keeps a buffer across the recursive call. */
static long deep(int level)
{
    if (level == 0)
        return 0;
    long *acc = alloca(2 * sizeof(long));
    acc[0] = level;
    acc[1] = level * 10;
    long below = deep(level - 1);
    for (int i = 0; i < 2; i++)
        below += acc[i];
    return below;
}

static long run(int n, int round, int work)
{
    int *vals = alloca(n * sizeof(int));
    struct link *links = __builtin_alloca(sizeof(struct link) * n);
    double *ws = (double *)alloca(8 * (size_t)n);
    char *name = alloca(32);
    long *twice = alloca(ELEMS(n, long));
    long *thrice = malloc(ELEMS(n, long));
    if (!thrice)
        return -1;
    for (int i = 0; i < n; i++) {
        vals[i] = i * 3 + round;
        ws[i] = i / 2.0;
        links[i].value = &vals[i];
        links[i].next = i + 1 < n ? &links[i + 1] : NULL;
        snprintf(links[i].tag, sizeof links[i].tag, "%c%d", 'a' + i % 26, i % 10);
    }
    snprintf(name, 32, "round-%d", round);
    long spin = 0;
    for (int j = 0; j < work; j++)
        spin += j % 5;
    long passes = 0;
    for (int p = 1; p <= 3; p++) {
        short *tmp = alloca(p * n * sizeof(short));
        for (int i = 0; i < p * n; i++)
            tmp[i] = (short)(p * i);
        for (int i = 0; i < p * n; i++)
            passes += tmp[i];
    }
    for (int i = 0; i < n; i++) {
        twice[i] = 2L * vals[i];
        thrice[i] = 3L * vals[i];
    }
    double wsum = 0;
    long tw = 0;
    for (int i = 0; i < n; i++) {
        wsum += ws[i];
        tw += twice[i] + thrice[i];
    }
    free(thrice);
    long chain = walk(links);
    printf("%s: chain %ld passes %ld w %.1f tw %ld deep %ld spin %ld\n", name, chain, passes,
           wsum, tw, deep(n % 4 + 2), spin);
    fflush(stdout);
    return chain + passes;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 6;
    int rounds = argc > 2 ? atoi(argv[2]) : 4;
    int work = argc > 3 ? atoi(argv[3]) : 200;
    if (n < 1 || n > 1000 || rounds < 0 || work < 0)
        return 99;
    long total = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++)
        total += run(n, r, work);
    printf("total %ld letters %d\n", total, letters(n));
    return (int)(total % 100);
}
