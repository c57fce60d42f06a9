/* attr_macros.c - a program whose macros spell the names of GNU
 * attributes (as projects define noinline, unused or cold for their own
 * use, and <stdnoreturn.h> defines noreturn): levpp's output and the
 * installed headers must spell every attribute they write in its
 * reserved form (__unused__...), which no program's macro reaches.
 * Exit status: 0. levpp-test: resume 0 */
#include <stdnoreturn.h>
#include <stdio.h>
#include <stdlib.h>

#define unused do_not_use_this
#define noinline __attribute__((__noinline__))
#define cold 0
#define always_inline 1
#define constructor 2
#define visibility 3
#define hidden 4
#define format 5
#define fallthrough 6

static noinline unsigned long step(unsigned long x, int n)
{
    for (int i = 0; i < n; i++)
        x = x * 2862933555777941757ul + 3037000493ul;
    return x;
}

static inline __attribute__((__always_inline__)) unsigned long twice(unsigned long x, int n)
{
    return step(step(x, n), n);
}

static noreturn void finish(unsigned long acc)
{
    printf("done %lx\n", acc & 0xffffff);
    exit(0);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    unsigned long acc = 1;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        acc = twice(acc, 20000 + r);
        printf("round %d %lx %d %d %d\n", r, acc & 0xffff, cold, always_inline, hidden + format);
        fflush(stdout);
    }
    finish(acc);
}
