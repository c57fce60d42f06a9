/* vector_local.c - a local of a 32-byte vector type in a checkpointable
 * function: no field kind describes it. */
#include <stdio.h>

typedef double v4d __attribute__((vector_size(32)));

static double add(int n)
{
    v4d acc = {0, 0, 0, 0};
    for (int i = 0; i < n; i++)
        acc += (v4d){1, 2, 3, 4};
    return acc[0] + acc[3];
}

int main(void)
{
    printf("%.1f\n", add(2));
    return 0;
}
