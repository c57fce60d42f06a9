/* union_ptr_local.c - a local union that may hold a pointer, in a
 * checkpointable function: the runtime could not tell whether to relocate
 * it. */
#include <stdio.h>

union slot {
    long n;
    const char *s;
};

static long walk(int n)
{
    union slot v;
    v.n = 0;
    for (int i = 0; i < n; i++)
        v.n += i;
    return v.n;
}

int main(void)
{
    printf("%ld\n", walk(4));
    return 0;
}
