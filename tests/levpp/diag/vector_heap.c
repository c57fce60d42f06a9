/* vector_heap.c - a heap array of a 32-byte vector type. */
#include <stdio.h>
#include <stdlib.h>

typedef double v4d __attribute__((vector_size(32)));

int main(void)
{
    v4d *many = malloc(2 * sizeof(v4d));
    if (!many)
        return 1;
    many[0] = (v4d){1, 2, 3, 4};
    printf("%.1f\n", many[0][3]);
    free(many);
    return 0;
}
