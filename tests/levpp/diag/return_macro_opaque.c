/* return_macro_opaque.c - an error-check macro that returns, with no
 * call in it, in a checkpointable function: its `return -1;` cannot be
 * rewritten to the body's own way of returning. */
#include <stdio.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            return -1;                                                                             \
    } while (0)

static int step(int v)
{
    int s = 0;
    for (int i = 0; i < v; i++) {
        CHECK(i < 100);
        s += i;
    }
    return s;
}

int main(void)
{
    printf("%d\n", step(10));
    return 0;
}
