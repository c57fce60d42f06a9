/* flexible_array.c - structs whose last member is a flexible array member
 * (`T m[]`): on the heap with room for elements (malloc of sizeof plus
 * the elements, calloc, realloc to grow, an offsetof-sized allocation, a
 * wrapper typed by its caller), elements of bytes, ints, pointers to heap
 * nodes and structs holding pointers; statics whose initializer gives the
 * array elements (GNU C); a local of such a type (no elements); the older
 * idioms, a last member `T m[0]` (GNU C) or `T m[1]` allocated with room
 * for more elements, beside an array of such structs. Pointers to the
 * objects, into their arrays and held by their elements live across
 * checkpoints and are followed after them.
 */
/* levpp-test: resume 0 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

struct vec {
    int n;
    int data[];
};

struct node {
    int v;
    struct node *next;
};

struct plist {
    long n;
    char tag;
    struct node *items[];
};

struct pair {
    long k;
    const char *name;
};

struct table {
    int n;
    struct pair e[];
};

struct bytes {
    short n;
    char s[];
};

struct strs {
    int n;
    const char *s[];
};

struct inner {
    int k[1]; /* last of its struct, not of zlist */
};

struct zlist {
    struct inner in;
    int n;
    struct node *items[0];
};

struct onelist {
    int n;
    int v[1];
};

static struct vec g_vec = {3, {7, 8, 9}};
static struct strs g_strs = {2, {"alpha", "beta"}};
static struct vec g_empty;

/* A wrapper: its caller's cast types the allocation. */
static void *xalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}

static struct node *node(int v, struct node *next)
{
    struct node *nd = malloc(sizeof *nd);
    if (!nd)
        abort();
    nd->v = v;
    nd->next = next;
    return nd;
}

static long sum_vec(const struct vec *v)
{
    long s = 0;
    for (int i = 0; i < v->n; i++)
        s += v->data[i];
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    struct vec *v = malloc(sizeof(struct vec) + 5 * sizeof(int));
    struct plist *pl = malloc(offsetof(struct plist, items) + 2 * sizeof(struct node *));
    struct table *t = calloc(1, sizeof(struct table) + 3 * sizeof(struct pair));
    struct bytes *b = (struct bytes *)xalloc(sizeof(struct bytes) + 13);
    struct vec local = {4};
    struct zlist *zl = malloc(sizeof(struct zlist) + 3 * sizeof(struct node *));
    struct onelist *ol = malloc(sizeof(struct onelist) + 4 * sizeof(int));
    struct onelist *ols = malloc(3 * sizeof(struct onelist));
    if (!v || !pl || !t || !zl || !ol || !ols)
        return 1;
    v->n = 5;
    for (int i = 0; i < 5; i++)
        v->data[i] = i * i;
    pl->n = 2;
    pl->tag = 'p';
    pl->items[0] = node(10, NULL);
    pl->items[1] = node(20, pl->items[0]);
    static const char *const names[] = {"one", "two", "three"};
    t->n = 3;
    for (int i = 0; i < 3; i++) {
        t->e[i].k = 100 + i;
        t->e[i].name = names[i];
    }
    b->n = 12;
    memcpy(b->s, "hello, world", 13);
    zl->n = 3;
    zl->in.k[0] = 77;
    for (int i = 0; i < 3; i++)
        zl->items[i] = node(40 + i, i ? zl->items[i - 1] : NULL);
    ol->n = 5;
    for (int i = 0; i < 5; i++)
        ol->v[i] = i + 1;
    for (int i = 0; i < 3; i++) /* a statement ending in a compound literal */
        ols[i] = (struct onelist){i, {i * 10}};
    int *mid = &v->data[2];
    struct node **slot = &pl->items[1];
    const char *const *gs = &g_strs.s[1];
    int *gmid = &g_vec.data[1];
    for (int i = 0; rounds == 0 || i < rounds; i++) {
        lev_checkpoint();
        /* grow the list by one node each round */
        ptrdiff_t at = slot - pl->items;
        struct plist *np =
            realloc(pl, sizeof(struct plist) + (size_t)(pl->n + 1) * sizeof(struct node *));
        if (!np)
            return 1;
        slot = &np->items[at];
        pl = np;
        pl->items[pl->n] = node(30 + i, pl->items[pl->n - 1]);
        pl->n++;
        lev_checkpoint();
        long chain = 0;
        for (struct node *nd = pl->items[pl->n - 1]; nd; nd = nd->next)
            chain += nd->v;
        *mid += 1;
        *gmid += 2;
        t->e[i % 3].k += i;
        b->s[i % 12] = (char)('a' + i % 26);
        local.n++;
        ol->v[i % 5] += zl->items[i % 3]->v;
        ols[i % 3].v[0]++;
        long zsum = 0;
        for (struct node *nd = zl->items[2]; nd; nd = nd->next)
            zsum += nd->v;
        printf("%d: zlist %ld %d one %d %d olist %d %d\n", i, zsum, zl->in.k[0], ol->v[0], ol->v[4],
               ols[1].v[0], ols[2].n);
        printf("%d: vec %ld mid %d list %ld/%c chain %ld slot %d table %ld:%s %ld:%s bytes %s "
               "gvec %ld gstrs %s/%s empty %d local %d\n",
               i, sum_vec(v), *mid, pl->n, pl->tag, chain, (*slot)->v, t->e[0].k, t->e[0].name,
               t->e[2].k, t->e[2].name, b->s, sum_vec(&g_vec), g_strs.s[0], *gs, g_empty.n,
               local.n);
        fflush(stdout);
    }
    return 0;
}
