/* tasks_a.c - task entries of the task-mode test: they reach loops and
 * checkpointable functions of tasks_b.c, so levpp makes them resumable
 * across both files. */
#include <stddef.h>
#include <stdlib.h>

#include "lev_task.h"
#include "tasks.h"

/* Builds a list of n items on the heap and returns the sum of their keys. */
LEV_TASK void list_sum(const void *arg, size_t len)
{
    long n = len == sizeof(long) ? *(const long *)arg : 0;
    struct item *head = NULL;
    for (long i = 1; i <= n; i++) {
        struct item *it = malloc(sizeof(struct item));
        it->key = i * 3;
        it->next = head;
        head = it;
    }
    long s = sum_items(head);
    while (head) {
        struct item *next = head->next;
        free(head);
        head = next;
    }
    lev_return(&s, sizeof s);
}

/* Returns {x, steps} for the x below the limit with the longest Collatz
 * sequence. */
LEV_TASK void collatz_max(const void *arg, size_t len)
{
    long lim = len == sizeof(long) ? *(const long *)arg : 0;
    long best = 0, arg_best = 0;
    for (long i = 1; i < lim; i++) {
        long steps = collatz_steps(i);
        if (steps > best) {
            best = steps;
            arg_best = i;
        }
    }
    long out[2] = {arg_best, best};
    lev_return(out, sizeof out);
}

/* Yields n times and returns how many times it went on after a yield. */
LEV_TASK void yield_n(const void *arg, size_t len)
{
    long n = len == sizeof(long) ? *(const long *)arg : 0;
    long after = 0;
    for (long i = 0; i < n; i++) {
        lev_yield();
        after++;
    }
    lev_return(&after, sizeof after);
}
