/* unnamed_cond.c - a ?: and a statement expression whose value has an
 * unnamed struct type and whose operand calls a checkpointable function:
 * the temporary that holds the value needs a type name. */
#include <stdio.h>

static struct {
    int lo, hi;
} s_small = {0, 9}, s_large = {10, 99};

static int count(int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c++;
    return c;
}

int main(int argc, char **argv)
{
    (void)argv;
    int hi = (argc > 1 ? s_large : (count(3), s_small)).hi;
    int lo = ({
                 count(2);
                 s_large;
             }).lo;
    printf("%d %d\n", lo, hi);
    return 0;
}
