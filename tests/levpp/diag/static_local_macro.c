/* static_local_macro.c - a static local (moved to file scope by levpp)
 * named inside a macro expansion. */
#include <stdio.h>

#define BUMP() (++counter)

static int next_id(int n)
{
    static int counter;
    for (int i = 0; i < n; i++)
        counter += i;
    return BUMP();
}

int main(void)
{
    printf("%d\n", next_id(3));
    return 0;
}
