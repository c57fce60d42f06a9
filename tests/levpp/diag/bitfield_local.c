/* bitfield_local.c - a local of a struct type with a bit-field in a
 * checkpointable function: its frame cannot be described. */
#include <stdio.h>

struct flags {
    unsigned ready : 1;
    unsigned count : 7;
};

static int count_up(int n)
{
    struct flags f = {0, 0};
    for (int i = 0; i < n; i++)
        f.count++;
    return f.count;
}

int main(void)
{
    printf("%d\n", count_up(5));
    return 0;
}
