/* heap_macro.c - allocation calls a macro writes (malloc and free behind
 * NEW_INTS and DROP) and malloc taken as a value (an allocator hook typed
 * by the assignment at its call): all moved onto the VT heap. */
#include <stdio.h>
#include <stdlib.h>

#define NEW_INTS(n) malloc((n) * sizeof(int))
#define DROP(p) free(p)

int main(void)
{
    int *v = NEW_INTS(4);
    if (!v)
        return 1;
    for (int i = 0; i < 4; i++)
        v[i] = i * i;
    void *(*alloc)(size_t) = malloc;
    int *w = alloc(sizeof(int));
    if (!w)
        return 1;
    *w = v[3];
    printf("%d %d\n", v[2], *w);
    DROP(v);
    DROP(w);
    return 0;
}
