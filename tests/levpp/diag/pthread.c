/* pthread.c - pthread_create in a checkpointable function: a virtual
 * thread cannot carry an operating-system thread in its image. */
#include <pthread.h>
#include <stdio.h>

static void *work(void *arg)
{
    int *n = arg;
    *n *= 2;
    return NULL;
}

static int spawn_all(int *vals, int n)
{
    pthread_t ids[4];
    for (int i = 0; i < n; i++)
        pthread_create(&ids[i], NULL, work, &vals[i]);
    for (int i = 0; i < n; i++)
        pthread_join(ids[i], NULL);
    return n;
}

int main(void)
{
    int vals[4] = {1, 2, 3, 4};
    int n = spawn_all(vals, 4);
    printf("%d %d\n", n, vals[3]);
    return 0;
}
