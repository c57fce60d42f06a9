/* tagged_union_note.c - annotations of tagged unions that name no
 * integer field of the struct, or no member of the union. */
#include <stdio.h>

struct cell {
    int kind;
    union {
        long n;
        const char *s;
    } v;
};
/* leverage tagged_union(struct cell, v, knd: 1 = s, 2 = n) */

typedef struct {
    int kind;
    union {
        long n;
        const char *s;
    } v;
} item;
// leverage tagged_union(item, v, kind: 1 = str, 2 = n)

static struct cell g_cell;
static item g_item;

static void set(struct cell *c, int k) { c->kind = k; }

int main(void)
{
    set(&g_cell, 1);
    g_cell.v.s = "cell";
    g_item.kind = 1;
    g_item.v.s = "item";
    printf("%s %s %ld %ld\n", g_cell.v.s, g_item.v.s, g_cell.v.n, g_item.v.n);
    return 0;
}
