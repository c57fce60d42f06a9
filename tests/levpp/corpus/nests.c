/* nests.c - loop nests of every shape, none of them with a call, each of
 * which must reach a safe point within a bounded amount of work: counted
 * loops three deep with trip counts from the command line, while and
 * do-while loops, loops over pointers and over a list, loops with break,
 * continue and goto, loops written by macros (a whole loop, and the head
 * of a loop whose body is written here), a counted loop holding a macro's
 * loop that polls, counted loops bounded by an array element (a body that
 * stores nowhere, and one that moves its own bound), loops over a range
 * from both ends (`lo++, hi--`). Each round prints one checksum line.
 * usage: nests [N [ROUNDS]]   (default 30 3); ROUNDS 0: rounds without end
 * Exit status: the last checksum modulo 100. */
/* levpp-test: resume 30 0 */
#include <stdio.h>
#include <stdlib.h>

struct cell {
    struct cell *next;
    long v;
};

#define FOREACH(p, head) for ((p) = (head); (p); (p) = (p)->next)
#define SUM_TO(acc, n)                                                                             \
    do {                                                                                           \
        for (long k_ = 0; k_ < (n); k_++)                                                          \
            (acc) += k_ & 3;                                                                       \
    } while (0)

static long counted3(long n, long round)
{
    long sum = 0;
    for (long i = 0; i < n; i++)
        for (long j = i; j < 2 * n; j += 2)
            for (long k = n; k > 0; k--)
                sum += (i * j + k + round) % 7;
    return sum;
}

static long whiles(long n)
{
    long sum = 0, i = 0;
    while (i < n * n) {
        long k = i % 13 + 1;
        do {
            sum += k * 3;
        } while (--k > 0);
        i++;
    }
    return sum;
}

static long pointers(const long *a, long n)
{
    long sum = 0;
    for (const long *p = a; p < a + n; p++) {
        for (const long *q = p; q < a + n; q += 3)
            sum += *q - *p;
    }
    return sum;
}

static long list(struct cell *head, long rounds)
{
    long sum = 0;
    for (long r = 0; r < rounds; r++) {
        struct cell *p = head;
        while (p) {
            sum += p->v ^ r;
            p = p->next;
        }
    }
    return sum;
}

static long jumps(long n)
{
    long sum = 0;
    for (long i = 0; i < n * n; i++) {
        if (i % 5 == 0)
            continue;
        for (long j = 0;; j++) {
            if (j > i % 17)
                break;
            sum += j;
            if (sum > 1000000000L)
                goto out;
        }
    }
out:
    return sum;
}

static long macros(struct cell *head, long n)
{
    long sum = 0;
    struct cell *p;
    for (long i = 0; i < n; i++) {
        FOREACH(p, head) { sum += p->v & 15; }
        SUM_TO(sum, n * 10);
    }
    return sum;
}

static long rows(long *start, long n)
{
    long sum = 0;
    for (long i = 0; i < n; i++) {
        for (long k = start[i]; k < start[i + 1]; k++)
            sum += (k * 7 + i) % 11;
        for (long k = start[i]; k < start[i + 1]; k += 3)
            if (k % 5 == 1 && start[i + 1] < 40 * n)
                start[i + 1]++;
    }
    return sum;
}

static long ends(long *a, long n)
{
    long sum = 0;
    for (long m = 0; m < n * 4; m++) {
        for (long lo = 0, hi = m; lo < hi; lo++, hi--) {
            long t = a[lo];
            a[lo] = a[hi];
            a[hi] = t;
        }
        signed char c = 0;
        for (signed char hi = (signed char)(m % 100 - 50), lo = (signed char)(-(m % 77)); hi > lo;
             --hi, ++lo)
            c = (signed char)(c ^ (hi + lo));
        sum = sum * 3 + a[m / 2] + c;
        sum %= 1000003;
    }
    return sum;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 30;
    long rounds = argc > 2 ? atol(argv[2]) : 3;
    if (n < 1 || n > 100000 || rounds < 0)
        return 1;
    long *a = malloc(sizeof(long) * (size_t)n * 4);
    long *start = malloc(sizeof(long) * ((size_t)n + 1));
    struct cell *head = NULL;
    for (long i = 0; i < n * 4; i++) {
        a[i] = (i * 37) % 101;
        struct cell *c = malloc(sizeof(struct cell));
        c->v = a[i];
        c->next = head;
        head = c;
    }
    for (long i = 0; i <= n; i++)
        start[i] = i * (i % 7 == 3 ? 40 : i % 29);
    long check = 0;
    for (long round = 0; rounds == 0 || round < rounds; round++) {
        long s[8] = {counted3(n, round), whiles(n),       pointers(a, n * 4), list(head, n),
                     jumps(n + round),   macros(head, n), rows(start, n)};
        s[7] = ends(a, n); /* after pointers(), which reads what it writes */
        check = 0;
        for (int i = 0; i < 8; i++)
            check = check * 31 + s[i];
        printf("round %ld: %ld %ld %ld %ld %ld %ld %ld %ld\n", round, s[0], s[1], s[2], s[3], s[4],
               s[5], s[6], s[7]);
        fflush(stdout);
    }
    return (int)((check % 100 + 100) % 100);
}
