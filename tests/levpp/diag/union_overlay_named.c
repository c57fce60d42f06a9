/* union_overlay_named.c - a union of a byte array and a struct with a
 * pointer, where the program also uses the byte array: the union holds
 * either, so it is no overlay and cannot be described. */
#include <stdio.h>
#include <stdlib.h>

union box {
    char bytes[16];
    struct {
        char *p;
        int n;
    } s;
};

int main(void)
{
    union box *b = malloc(sizeof(union box));
    if (!b)
        return 1;
    b->bytes[0] = 'x';
    printf("%c\n", b->bytes[0]);
    free(b);
    return 0;
}
