/* bitfield_anon.c - bit-fields whose neighbour is an anonymous struct:
 * the byte range of the bit-fields cannot be written with offsetof. */
#include <stdio.h>

struct reg {
    int id;
    unsigned mode : 3;
    struct {
        int x, y;
    };
};

static int total(int n)
{
    struct reg r = {0};
    for (int i = 0; i < n; i++) {
        r.mode = (unsigned)i & 7;
        r.x += i;
    }
    return r.x + (int)r.mode;
}

int main(void)
{
    printf("%d\n", total(5));
    return 0;
}
