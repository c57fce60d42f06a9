/* body_include_static.c - a header included inside a function body whose
 * #define and #undef lines find no free line in the body, while a
 * declaration after the body names their macro: the body stays as
 * written, and the static table of the header cannot be moved out. */
#include <stdio.h>
#define A(x) ((x) + 2)
static int f(int y)
{
    int z = y;
#include "body_include_static.h"
    z = A(z);
    return tab[z & 1];
}
static int arr[A(1)];
int main(void)
{
    printf("%d %zu\n", f(3), sizeof arr);
    return 0;
}
