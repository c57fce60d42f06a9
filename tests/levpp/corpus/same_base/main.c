/* same_base - two inputs with the same base name in different folders
 * (a/util.c and b/util.c, as brotli's dec/static_init.c and
 * enc/static_init.c), each including its own util.h: static functions,
 * file-scope statics and static locals of the same names in both, each
 * reaching safe points (their loops poll) with its state live. levpp
 * writes a/util.lev.c and b/util.lev.c, and each header is found beside
 * its own source.
 * usage: same_base [ROUNDS]   (default 3; 0: until killed)
 * Exit status: the total modulo 100. */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

long a_round(int round);
long b_round(int round);
long a_total(void);
long b_total(void);

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (rounds < 0)
        return 99;
    long sum = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        long a = a_round(r), b = b_round(r);
        sum += a - b;
        printf("round %d: a %ld b %ld totals %ld %ld\n", r, a, b, a_total(), b_total());
        fflush(stdout);
    }
    printf("sum %ld\n", sum);
    return (int)((sum % 100 + 100) % 100);
}
