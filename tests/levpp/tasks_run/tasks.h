/* tasks.h - what the two task sources of the task-mode test share. */
#ifndef TASKS_H
#define TASKS_H

struct item {
    long key;
    struct item *next;
};

long sum_items(const struct item *p);
long collatz_steps(long x);

#endif
