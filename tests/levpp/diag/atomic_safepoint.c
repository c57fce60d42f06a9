/* A LEV_ATOMIC function that reaches a safe point through a callee. */
#include "leverage.h"

static int step(int x)
{
    lev_checkpoint();
    return x + 1;
}

static LEV_ATOMIC int kernel(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s = step(s);
    return s;
}

int main(void) { return kernel(3) != 3; }
