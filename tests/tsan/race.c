/* race.c - a data race on purpose: two threads increment one counter
 * without a lock. The tsan tree's tsan_detects test runs it and expects
 * ThreadSanitizer to report it, so that a tree where the sanitizer is not
 * live (or its reports go nowhere) cannot pass for a clean one.
 */
#include <pthread.h>
#include <stdio.h>

static long s_counter;

static void *s_bump(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100000; i++)
        s_counter++;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, s_bump, NULL);
    pthread_create(&b, NULL, s_bump, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%ld\n", s_counter);
    return 0;
}
