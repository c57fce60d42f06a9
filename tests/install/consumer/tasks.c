/* tasks.c - the task source of the consumer that carries a task module. */
#include <stddef.h>

#include <lev_task.h>

/* Returns the sum of the integers below the long argument. */
LEV_TASK void consumer_sum(const void *arg, size_t len)
{
    long n = len == sizeof(long) ? *(const long *)arg : 0, s = 0;
    for (long i = 0; i < n; i++)
        s += i;
    lev_return(&s, sizeof s);
}
