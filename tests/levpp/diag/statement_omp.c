/* statement_omp.c - a statement kind levpp has no rewriting for (an
 * OpenMP directive, parsed with -fopenmp) in a checkpointable function. */
#include <stdio.h>

static int total(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
#pragma omp critical
        s += i;
    }
    return s;
}

int main(void)
{
    printf("%d\n", total(4));
    return 0;
}
