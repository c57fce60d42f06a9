/* thrd_create.c - a C11 thread started from a checkpointable function. */
#include <stdio.h>
#include <threads.h>

static int work(void *arg)
{
    return *(int *)arg;
}

static int spawn(int n)
{
    int r = 0;
    for (int i = 0; i < n; i++) {
        thrd_t t;
        thrd_create(&t, work, &i);
        thrd_join(t, &r);
    }
    return r;
}

int main(void)
{
    printf("%d\n", spawn(3));
    return 0;
}
