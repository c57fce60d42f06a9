/* type_in_function.c - a struct type declared together with a variable
 * inside a checkpointable function. */
#include <stdio.h>

static int area(int n)
{
    struct box { int w, h; } b = {2, 3};
    int s = 0;
    for (int i = 0; i < n; i++)
        s += b.w * b.h;
    return s;
}

int main(void)
{
    printf("%d\n", area(2));
    return 0;
}
