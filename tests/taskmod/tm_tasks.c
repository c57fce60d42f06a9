/* tm_tasks.c - the task source of the task-module loading test: one entry
 * that fills an array on the heap and sums it through a loop in a helper,
 * so that its VT reaches safe points in both. */
#include <stddef.h>
#include <stdlib.h>

#include "lev_task.h"

long tm_sum(const long *v, long n);

/* Sum of the n values of v. */
long tm_sum(const long *v, long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* Returns the sum of i * i for i below the long argument. */
LEV_TASK void tm_sum_squares(const void *arg, size_t len)
{
    long n = len == sizeof(long) ? *(const long *)arg : 0;
    long *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    for (long i = 0; i < n; i++)
        v[i] = i * i;
    long s = tm_sum(v, n);
    free(v);
    lev_return(&s, sizeof s);
}
