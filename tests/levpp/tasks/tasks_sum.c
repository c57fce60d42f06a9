/* tasks_sum.c - first task source of the leverage_add_tasks test. */
#include "tasks.h"

long tasks_sum_to(long n)
{
    long s = 0;
    for (long i = 1; i <= n; i++)
        s += i;
    return s;
}

#ifdef LEV_TASK
/* A task entry, once leverage.h defines how one is marked. */
LEV_TASK void tasks_sum_task(const void *arg, size_t len)
{
    long n = len == sizeof n ? *(const long *)arg : 10;
    long s = tasks_sum_to(n);
    lev_return(&s, sizeof s);
}
#endif
