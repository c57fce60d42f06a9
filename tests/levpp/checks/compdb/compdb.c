/* compdb.c - for the -p check: needs a header found only through the -I of
 * the compilation database and a macro only its -D defines. */
#include <stdio.h>

#include "compdb_scale.h"

static int scaled(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += COMPDB_SCALE * i;
    return s;
}

int main(void)
{
    printf("%d\n", scaled(4));
    return 0;
}
