/* heap_macro.c - allocation calls levpp cannot rewrite onto the VT heap:
 * malloc and free written inside a macro (malloc as a value is fine). */
#include <stdio.h>
#include <stdlib.h>

#define NEW_INTS(n) malloc((n) * sizeof(int))
#define DROP(p) free(p)

int main(void)
{
    int *v = NEW_INTS(4);
    if (!v)
        return 1;
    v[0] = 1;
    void *(*alloc)(size_t) = malloc;
    int *w = alloc(sizeof(int));
    printf("%d\n", v[0]);
    DROP(v);
    DROP(w);
    return 0;
}
