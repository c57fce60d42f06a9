/* tree.c - a binary search tree on the heap (calloc), built, searched,
 * walked recursively and iteratively, pruned and freed.
 * Exit status: the height of the tree (10). */
#include <stdio.h>
#include <stdlib.h>

struct tree {
    int key;
    int count;
    struct tree *left, *right;
};

static struct tree *insert(struct tree *t, int key)
{
    if (!t) {
        t = (struct tree *)calloc(1, sizeof(struct tree));
        if (!t)
            return NULL;
        t->key = key;
        t->count = 1;
        return t;
    }
    struct tree *cur = t;
    for (;;) {
        if (key == cur->key) {
            cur->count++;
            return t;
        }
        struct tree **next = key < cur->key ? &cur->left : &cur->right;
        if (!*next) {
            struct tree *leaf = insert(NULL, key);
            *next = leaf;
            return t;
        }
        cur = *next;
    }
}

/* In-order walk, recursive, with a loop down the left spine. */
static void walk(const struct tree *t, int *out, int *n)
{
    while (t) {
        walk(t->left, out, n);
        out[(*n)++] = t->key;
        t = t->right;
    }
}

static int height(const struct tree *t)
{
    if (!t)
        return 0;
    int h = 0;
    for (int side = 0; side < 2; side++) {
        int s = height(side ? t->right : t->left);
        if (s > h)
            h = s;
    }
    return h + 1;
}

static const struct tree *find(const struct tree *t, int key)
{
    while (t && t->key != key)
        t = key < t->key ? t->left : t->right;
    return t;
}

/* Frees every subtree whose key is above limit; returns what is left. */
static struct tree *prune_above(struct tree *t, int limit, int *freed)
{
    if (!t)
        return NULL;
    struct tree *l = prune_above(t->left, limit, freed);
    t->left = l;
    struct tree *r = prune_above(t->right, limit, freed);
    t->right = r;
    if (t->key > limit) {
        struct tree *keep = t->left;
        t->left = NULL;
        while (t->right) {
            struct tree *rr = t->right;
            t->right = NULL;
            t = rr;
        }
        free(t);
        (*freed)++;
        return keep;
    }
    return t;
}

static void destroy(struct tree *t)
{
    while (t) {
        destroy(t->left);
        struct tree *right = t->right;
        free(t);
        t = right;
    }
}

int main(void)
{
    struct tree *root = NULL;
    unsigned x = 7;
    for (int i = 0; i < 40; i++) {
        x = x * 75u % 65537u;
        root = insert(root, (int)(x % 64));
    }
    int keys[64], n = 0;
    walk(root, keys, &n);
    printf("%d distinct keys:", n);
    for (int i = 0; i < n; i++)
        printf(" %d", keys[i]);
    printf("\n");
    int h = height(root);
    printf("height %d\n", h);
    for (int k = 10; k < 64; k += 13) {
        const struct tree *f = find(root, k);
        printf("find %d: %s", k, f ? "found" : "absent");
        if (f)
            printf(" (count %d)", f->count);
        printf("\n");
    }
    int freed = 0;
    root = prune_above(root, 40, &freed);
    n = 0;
    walk(root, keys, &n);
    printf("after pruning above 40: %d keys, largest %d, freed %d\n", n, n ? keys[n - 1] : -1, freed);
    destroy(root);
    return h;
}
