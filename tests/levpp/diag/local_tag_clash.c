/* local_tag_clash.c - local struct types move to file scope, so that both
 * copies of a body share them: two functions' `struct U`, or a block's
 * `struct T` shadowing the file's, would then be defined twice. */
#include <stdio.h>

struct T {
    int x;
};

static int f(void)
{
    struct U {
        int a;
    };
    struct U u = {1};
    return u.a;
}

static int g(void)
{
    struct U {
        long b;
    };
    struct U u = {2};
    return (int)u.b;
}

int main(void)
{
    struct T v;
    {
        struct T {
            int z;
        };
    }
    v.x = f() + g();
    printf("%d\n", v.x);
    return 0;
}
