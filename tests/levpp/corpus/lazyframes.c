/* lazyframes.c - deep chains of calls that run without frames until they
 * unwind (every local a scalar or pointer, only such callees) above
 * functions that keep a frame (an address-taken local, a callee that keeps
 * one), so that a capture lays spilled frames above pushed ones in call
 * order:
 *   main, walk, bump (frames) -> descend (lazy, DEPTH deep) -> add (lazy)
 * and a lazy recursive tree sum over pointers, and results of several
 * types.
 * Usage: lazyframes [ROUNDS [DEPTH]]; prints one line per round (ROUNDS 0: until killed).
 * Exit status: 0 if every checksum matches its closed form, else 1. */
/* levpp-test: resume 0 4000 */
#include <stdio.h>
#include <stdlib.h>

/* lazy: scalars only; a safe point in every call */
static long add(long a, long b)
{
    long s = 0;
    for (int i = 0; i < 2; i++)
        s += i ? b : a;
    return s;
}

/* lazy: recursion 'depth' deep, add at the bottom */
static long descend(int depth, long v)
{
    if (depth == 0)
        return add(v, 1);
    long r = descend(depth - 1, v + 1);
    return r + (depth & 1);
}

/* keeps a frame: the address of `acc` is taken */
static long bump(long v, int depth)
{
    long acc = v;
    long *p = &acc;
    *p = descend(depth, *p);
    return acc;
}

/* double and char results, a pointer parameter */
static double half(double x)
{
    double h = x;
    for (int i = 0; i < 1; i++)
        h /= 2.0;
    return h;
}

static char shift(const char *s, int i)
{
    char c = s[i];
    for (int k = 0; k < 1; k++)
        c = (char)(c + 1);
    return c;
}

struct node {
    long v;
    struct node *l, *r;
};

static struct node *build(int depth, long *next)
{
    struct node *n = malloc(sizeof *n);
    n->v = (*next)++;
    n->l = depth ? build(depth - 1, next) : NULL;
    n->r = depth ? build(depth - 1, next) : NULL;
    return n;
}

/* lazy: a pointer parameter */
static long tree_sum(struct node *n)
{
    if (!n)
        return 0;
    long s = 0;
    for (int i = 0; i < 1; i++)
        s += n->v;
    s += tree_sum(n->l);
    s += tree_sum(n->r);
    return s;
}

static void tree_free(struct node *n)
{
    if (!n)
        return;
    tree_free(n->l);
    tree_free(n->r);
    free(n);
}

/* keeps a frame: calls bump, which keeps one */
static long walk(int depth, long seed)
{
    long total = 0;
    for (int j = 0; j < 3; j++)
        total += bump(seed + j, depth);
    return total;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 12;
    int depth = argc > 2 ? atoi(argv[2]) : 4000;
    long counter = 0;
    struct node *root = build(6, &counter); /* 127 nodes: 0..126 */
    int bad = 0;
    const char word[] = "HAL";
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        long w = walk(depth, r);
        /* descend(d, v) = v + d + 1 + ceil(d / 2) */
        long want = 0;
        for (int j = 0; j < 3; j++)
            want += r + j + depth + 1 + (depth + 1) / 2;
        long ts = tree_sum(root);
        double h = half((double)r);
        char c = shift(word, r % 3);
        bad |= w != want || ts != 126 * 127 / 2 || h * 2.0 != (double)r || c != word[r % 3] + 1;
        printf("round %d: walk %ld tree %ld half %.1f char %c\n", r, w, ts, h, c);
        fflush(stdout);
    }
    tree_free(root);
    return bad;
}
