/* tasks_b.c - checkpointable helpers (they loop, and task entries reach
 * them) called from the other file. */
#include "tasks.h"

long sum_items(const struct item *p)
{
    long s = 0;
    for (; p; p = p->next)
        s += p->key;
    return s;
}

long collatz_steps(long x)
{
    long n = 0;
    while (x != 1) {
        x = x % 2 ? 3 * x + 1 : x / 2;
        n++;
    }
    return n;
}
