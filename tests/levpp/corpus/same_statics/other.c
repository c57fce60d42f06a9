/* other.c - statics named as main.c's: another list, another scope. */
#include <stdlib.h>

#include "other.h"

struct item {
    struct item *next;
    long v;
};

struct scope {
    struct scope *up;
    int depth;
};

static struct item *s_list;
static struct scope *s_scope = &(struct scope){.depth = 100};

void other_push(long v)
{
    struct item *it = malloc(sizeof *it);
    if (!it)
        exit(2);
    it->next = s_list;
    it->v = v;
    s_list = it;
    s_scope->depth++;
}

long other_sum(void)
{
    long s = 0;
    for (struct item *it = s_list; it; it = it->next)
        s += it->v;
    return s;
}

int other_depth(void)
{
    return s_scope->depth;
}
