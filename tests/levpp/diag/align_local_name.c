/* align_local_name.c - alignments written with names the function itself
 * declares (a constant of its own enum, the size of one of its locals):
 * the frame struct, declared at file scope, could not see them. */
#include <stdio.h>

static int step(int x)
{
    for (int i = 0; i < 3; i++)
        x = x * 3 + i;
    return x;
}

int main(void)
{
    enum { WIDE = 32 };
    long long pair[2] = {1, 2};
    _Alignas(WIDE) char a[8];
    _Alignas(sizeof pair) char b[8];
    a[0] = (char)step(1);
    b[0] = (char)step(2);
    printf("%d %d %lld\n", a[0], b[0], pair[1]);
    return 0;
}
