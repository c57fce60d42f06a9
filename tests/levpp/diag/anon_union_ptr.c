/* anon_union_ptr.c - an anonymous union that may hold a pointer, in a
 * frame: refused by name, never guessed. */
#include <stdio.h>

struct value {
    int tag;
    union {
        long i;
        const char *s;
    };
};

int main(void)
{
    struct value v = {.tag = 0, .i = 0};
    for (int k = 0; k < 3; k++)
        v.i += k;
    printf("%ld\n", v.i);
    return 0;
}
