/* heap_unnamed.c - a heap object of a struct type with neither a tag nor
 * a typedef name. */
#include <stdio.h>
#include <stdlib.h>

static struct {
    int a;
    int *p;
} *s_obj;

int main(void)
{
    s_obj = malloc(sizeof *s_obj);
    if (!s_obj)
        return 1;
    s_obj->a = 5;
    printf("%d\n", s_obj->a);
    free(s_obj);
    return 0;
}
