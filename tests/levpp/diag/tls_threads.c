/* tls_threads.c - with --main-task a thread-local variable becomes the
 * program's own (one object, carried in the image): a program that also
 * starts threads would share it. */
#include <pthread.h>
#include <stdio.h>

static _Thread_local int counter;

static void *work(void *arg)
{
    counter += *(int *)arg;
    return NULL;
}

static void run_one(int n)
{
    pthread_t t;
    pthread_create(&t, NULL, work, &n);
    pthread_join(t, NULL);
}

int main(void)
{
    run_one(3);
    printf("%d\n", counter);
    return 0;
}
