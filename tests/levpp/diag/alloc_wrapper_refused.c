/* alloc_wrapper_refused.c - allocations in wrappers that the call site's
 * type cannot describe: memory the wrapper keeps for itself, a returned
 * variable assigned in a loop (malloc as a value, also in a macro of the
 * input, is an allocator hook). */
#include <stdio.h>
#include <stdlib.h>

#define HOOK malloc

static void *g_scratch;

static void *keeps_scratch(size_t n)
{
    g_scratch = malloc(64);
    return malloc(n);
}

static void *retry(size_t n)
{
    void *p = NULL;
    for (int i = 0; i < 3 && !p; i++)
        p = malloc(n);
    return p;
}

int main(void)
{
    void *(*alloc)(size_t) = HOOK;
    int *a = keeps_scratch(sizeof(int));
    int *b = retry(sizeof(int));
    int *c = alloc(sizeof(int));
    printf("%d\n", a != b && b != c);
    return 0;
}
