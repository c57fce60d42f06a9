/* union_ptr_heap.c - a heap array of a union that may hold a pointer. */
#include <stdio.h>
#include <stdlib.h>

union slot {
    long n;
    const char *s;
};

int main(void)
{
    union slot *v = malloc(4 * sizeof(union slot));
    if (!v)
        return 1;
    v[0].n = 7;
    printf("%ld\n", v[0].n);
    free(v);
    return 0;
}
