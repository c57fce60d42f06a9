/* flexible_array.c - a heap object whose type ends with a flexible array
 * member: its size is not the type's. */
#include <stdio.h>
#include <stdlib.h>

struct vec {
    int n;
    int data[];
};

int main(void)
{
    struct vec *v = malloc(sizeof(struct vec) + 4 * sizeof(int));
    if (!v)
        return 1;
    v->n = 4;
    printf("%d\n", v->n);
    free(v);
    return 0;
}
