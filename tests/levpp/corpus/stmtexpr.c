/* stmtexpr.c - GNU statement expressions that call checkpointable
 * functions: as initialisers, in conditions of if, while, for and
 * do-while, in a for increment, nested, with declarations (a shadowing
 * name, an array, a pointer) and loops inside, with values of pointer,
 * struct and void type, unused, in the arms of && and ?:, in arguments,
 * in return; statement expressions from macros (a MAX evaluating a call
 * in its first argument, glibc's assert) and ones without calls.
 * Exit status: the number of calls of sq() modulo 100. */
#include <assert.h>
#include <stdio.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

#define MAX(a, b)                                                                                  \
    ({                                                                                             \
        __typeof__(a) max_a = (a);                                                                 \
        __typeof__(b) max_b = (b);                                                                 \
        max_a > max_b ? max_a : max_b;                                                             \
    })
#define SQUARE_PLAIN(x)                                                                            \
    ({                                                                                             \
        int sq_t = (x);                                                                            \
        sq_t * sq_t;                                                                               \
    })

struct pt {
    int x, y;
};

static int g_sq;
static char g_names[3][8] = {"red", "green", "blue"};

static int sq(int n)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        r += n;
    g_sq++;
    return r;
}

static char *name(int n)
{
    for (int i = 0; i < 1; i++)
        lev_checkpoint();
    return g_names[n % 3];
}

static struct pt mk(int x)
{
    struct pt p = {x, -x};
    lev_checkpoint();
    return p;
}

static int twice(int n)
{
    return ({
        int t = sq(n);
        t + t;
    });
}

int main(void)
{
    int total = 0;
    for (int n = 0; n < 5; n++) {
        /* declarations, a shadowing name, a loop and calls inside */
        int v = ({
            int n2 = n + 1, acc = 0;
            for (int i = 0; i < n2; i++)
                acc += sq(i);
            int n = acc; /* shadows the loop's n */
            n * 2;
        });
        /* an array and a pointer into it, live across calls */
        int w = ({
            int a[3] = {n, sq(n), 0};
            int *p = &a[1];
            lev_checkpoint();
            a[2] = sq(*p % 7);
            a[0] + a[1] + a[2];
        });
        printf("%d: v %d w %d\n", n, v, w);
        total += v + w;
        /* nested, in an argument of a checkpointable call */
        int z = sq(({
            int k = ({
                int j = sq(n);
                j % 5;
            });
            k + 1;
        }));
        /* conditions */
        if (({ sq(n) > 4; }))
            printf("%d: big, z %d\n", n, z);
        int left = 3;
        while (({ lev_checkpoint(); left-- > 0; }))
            total += left;
        int steps = 0;
        for (int i = 0; ({ sq(1); i < n; }); i = ({ sq(i) > 100 ? 100 : i + 1; }))
            steps++;
        int d = 0;
        do
            d++;
        while (({
            int lim = sq(2) / 2;
            d < lim;
        }));
        printf("%d: steps %d d %d left %d\n", n, steps, d, left);
        /* pointer, struct and void values; unused values */
        char *s = ({ name(n); });
        struct pt p = ({ mk(n + 1); });
        ({ sq(n); });
        (void)({
            int u = sq(2);
            u;
        });
        printf("%d: %s (%d,%d)\n", n, s, p.x, p.y);
        /* only in the arm that runs */
        int before = g_sq;
        int c = n % 2 ? ({ sq(n) + 1; }) : 0;
        int e = n > 2 && ({ sq(n) > 3; });
        printf("%d: c %d e %d calls %d twice %d\n", n, c, e, g_sq - before, twice(n));
        /* macros: a call in MAX's first argument, assert, no call */
        int m = MAX(sq(n), 5);
        assert(sq(n) == n * n);
        int q = SQUARE_PLAIN(n + 1);
        int r = MAX(n, 2);
        printf("%d: max %d sq %d max %d\n", n, m, q, r);
        fflush(stdout);
    }
    printf("total %d calls %d\n", total, g_sq);
    return g_sq % 100;
}
