/* macro_loops.c - loops and statements written by macros in
 * checkpointable functions: whole loops with no call (kept as written,
 * polled after them or by the enclosing loop, their locals C locals),
 * FOREACH-like macros whose body is written here (polled in the body,
 * which may call checkpointable functions), `do { } while (0)` macros with
 * a call in their first expression, and calls in macro arguments that the
 * macro evaluates once and first.
 * Exit status: the number of calls of visit() modulo 100. */
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

#define SPIN_SUM(dst, n)                                                                           \
    do {                                                                                           \
        for (int spin_i = 0; spin_i < (n); spin_i++)                                               \
            (dst) += spin_i;                                                                       \
    } while (0)
#define SWAP(a, b)                                                                                 \
    do {                                                                                           \
        int swap_t = (a);                                                                          \
        (a) = (b);                                                                                 \
        (b) = swap_t;                                                                              \
    } while (0)
#define UPTO(i, n) for ((i) = 0; (i) < (n); (i)++)
#define REPEAT(n) for (int rep_i = 0; rep_i < (n); rep_i++)
#define LIST_EACH(pos, head) for ((pos) = (head); (pos); (pos) = (pos)->next)
#define CHECK_POSITIVE(e)                                                                          \
    do {                                                                                           \
        if ((e) <= 0)                                                                              \
            printf("not positive\n");                                                              \
    } while (0)
#define WAIT_UNTIL(cond)                                                                           \
    while (!(cond)) {                                                                              \
    }
#define TWICE(x) (2 * (x))

struct node {
    int v;
    struct node *next;
};

static int g_visits;

static int visit(int n)
{
    int s = 0;
    for (int i = 0; i <= n; i++)
        s += i;
    g_visits++;
    return s;
}

/* Only a loop written by a macro: still checkpointable, polled after it. */
static long spin_only(int n)
{
    long acc = 0;
    SPIN_SUM(acc, n);
    return acc;
}

int main(void)
{
    struct node nodes[4];
    for (int k = 0; k < 4; k++) {
        nodes[k].v = k * 10;
        nodes[k].next = k < 3 ? &nodes[k + 1] : NULL;
    }
    long total = 0;
    int i, a = 1, b = 2;
    SPIN_SUM(total, 100);
    printf("spin %ld only %ld\n", total, spin_only(50));
    for (int round = 0; round < 3; round++) {
        SPIN_SUM(total, round + 5);
        SWAP(a, b);
        UPTO(i, round + 2) {
            total += visit(i);
            lev_checkpoint();
        }
        struct node *p;
        LIST_EACH(p, &nodes[round])
            total += visit(p->v % 7);
        REPEAT(3)
            total += rep_i;
        CHECK_POSITIVE(visit(round));
        int t = TWICE(visit(round + 1));
        int w = 0;
        WAIT_UNTIL(++w >= 4);
        /* a loop of the function whose body is a macro's statement */
        for (int k = 0; k < 3; k++)
            SWAP(a, b);
        while (w < 10)
            SPIN_SUM(w, 2);
        printf("round %d: total %ld a %d b %d i %d t %d w %d\n", round, total, a, b, i, t, w);
        fflush(stdout);
    }
    return g_visits % 100;
}
