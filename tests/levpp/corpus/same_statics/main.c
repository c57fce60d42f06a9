/* main.c - two inputs each with a static of the same name (`s_list`, a
 * heap list, and `s_scope`, a file-scope compound literal), which are two
 * objects: each travels with the image, and each file keeps its own
 * after a restore. Sentinel pointer values ((void *)1, (void *)-1) kept in
 * heap objects travel as they are.
 * Exit status: 0 when both lists sum as expected. levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#include "other.h"

#define TOMBSTONE ((void *)-1)

struct node {
    struct node *next;
    long v;
    void *mark; /* NULL, (void *)1 or TOMBSTONE */
};

struct scope {
    struct scope *up;
    int depth;
};

static struct node *s_list;
static struct scope *s_scope = &(struct scope){0};

static void push(long v)
{
    struct node *n = malloc(sizeof *n);
    if (!n)
        exit(2);
    n->next = s_list;
    n->v = v;
    n->mark = v % 3 == 0 ? NULL : v % 3 == 1 ? (void *)1 : TOMBSTONE;
    s_list = n;
}

static long sum(void)
{
    long s = 0;
    for (struct node *n = s_list; n; n = n->next)
        s += n->v * (n->mark == TOMBSTONE ? 3 : n->mark == (void *)1 ? 2 : 1);
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        for (int i = 0; i < 50; i++) {
            push(r * 100 + i);
            other_push(r * 1000 + i);
        }
        s_scope->depth += 1;
        printf("round %d: %ld %ld depth %d %d\n", r, sum(), other_sum(), s_scope->depth,
               other_depth());
        fflush(stdout);
    }
    return 0;
}
