/* alloca_untyped.c - an alloca in a checkpointable function whose element
 * type levpp cannot tell: no sizeof, no cast, a void pointer receives it. */
#include <alloca.h>
#include <stdio.h>
#include <string.h>

static size_t fill(size_t len)
{
    void *buf = alloca(len);
    for (size_t i = 0; i < len; i++)
        memset((char *)buf + i, (int)i, 1);
    return len;
}

int main(void)
{
    printf("%zu\n", fill(64));
    return 0;
}
