/* bitfield_heap.c - a heap object of a struct type with a bit-field:
 * the VT heap cannot describe it. */
#include <stdio.h>
#include <stdlib.h>

struct packed {
    int value;
    unsigned small : 4;
};

int main(void)
{
    struct packed *p = malloc(sizeof(struct packed));
    if (!p)
        return 1;
    p->value = 3;
    p->small = 2;
    printf("%d\n", p->value + p->small);
    free(p);
    return 0;
}
