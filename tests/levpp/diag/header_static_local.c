/* header_static_local.c - calls a helper of a header whose static local
 * would start again in a resumed process. */
#include <stdio.h>

#include "header_static_local.h"

int main(void)
{
    long s = 0;
    for (int i = 0; i < 100000; i++)
        s += next_id();
    printf("%ld %d\n", s, header_total);
    return 0;
}
