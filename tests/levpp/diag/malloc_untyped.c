/* malloc_untyped.c - an allocation whose element type levpp cannot tell:
 * no sizeof, no cast, and a void pointer receives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t fill(size_t len)
{
    void *buf = malloc(len);
    if (!buf)
        return 0;
    for (size_t i = 0; i < len; i++)
        memset((char *)buf + i, (int)i, 1);
    free(buf);
    return len;
}

int main(void)
{
    size_t n = fill(64);
    printf("%zu\n", n);
    return 0;
}
