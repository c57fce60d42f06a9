/* calloc_untyped.c - calloc and realloc whose element type levpp cannot
 * tell. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    size_t n = 16;
    void *a = calloc(n, 1);
    void *b = realloc(a, 2 * n);
    if (!b)
        return 1;
    printf("%zu\n", n);
    free(b);
    return 0;
}
