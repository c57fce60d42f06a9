/* local_decls.c - declarations inside functions that levpp must keep
 * compiling and capture whole: an enum without a tag declaring the same
 * constant in two functions (and in a nested block), static locals whose
 * initializers hold string literals (an array of pointers to them, a
 * pointer to one) in the file's first function, local arrays of
 * structs holding pointers, of one element and of several, and a
 * function declared in a block (old style: `int weight();`).
 * The output is compared with the native run's; exit status 0, or 1 on
 * bad arguments. */
/* levpp-test: resume 0 300 */
#include <stdio.h>
#include <stdlib.h>

static long names_sum(int n)
{
    static const char *names[] = {"zero", "one", "two", "three"};
    static const char *last = "last";
    enum { K = 4 };
    long s = 0;
    for (int i = 0; i < n; i++)
        s += names[i % K][i % 3] + last[i % 4];
    return s;
}

struct span {
    const char *p;
    int n;
};

static long spans(int n)
{
    enum { K = 3 }; /* the same constant as above, another value */
    struct span one[1];
    struct span many[K];
    one[0].p = "abcdef";
    one[0].n = 6;
    for (int j = 0; j < K; j++) {
        many[j].p = one[0].p + j;
        many[j].n = one[0].n - j;
    }
    long s = 0;
    for (int i = 0; i < n; i++) {
        enum { K = 2 }; /* and again in a nested block */
        s += one[0].p[i % one[0].n] * K + many[i % 3].p[i % many[i % 3].n];
    }
    return s;
}

int main(int argc, char **argv)
{
    int weight(int), scale();
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int work = argc > 2 ? atoi(argv[2]) : 50;
    if (rounds < 0 || work < 0)
        return 1;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        printf("round %d: %ld %ld %d\n", r, names_sum(work + r), spans(work + 2 * r),
               weight(r) + scale(r));
        fflush(stdout);
    }
    return 0;
}

int weight(int x) { return 3 * x + 1; }

int scale(int x) { return x * x; }
