/* flexible_nested.c - a struct whose last member is a struct with a
 * flexible array member (GNU C): the outer struct's objects could hold
 * elements that nothing describes. */
#include <stdio.h>
#include <stdlib.h>

struct vec {
    int n;
    int data[];
};

struct outer {
    long id;
    struct vec v;
};

int main(void)
{
    struct outer *o = malloc(sizeof(struct outer) + 4 * sizeof(int));
    if (!o)
        return 1;
    o->v.n = 4;
    printf("%d\n", o->v.n);
    free(o);
    return 0;
}
