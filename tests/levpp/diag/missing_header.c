/* missing_header.c - includes a header that exists nowhere. */
#include <stdio.h>
#include "no_such_header.h"

int main(void)
{
    for (int i = 0; i < 3; i++)
        printf("%d\n", i);
    return 0;
}
