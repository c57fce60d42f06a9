/* listwalk.c - a linked list walked again and again: M nodes linked in a
 * scrambled order (a multiplicative step through the array), R walks
 * summing the values, the shape of pointer-chasing code.
 * usage: listwalk [M [R]]   (default 100000 300)
 * Prints the sum on standard output and the time of the walks
 * (nanoseconds) on standard error as `ns N`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct node {
    struct node *next;
    long v;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long walk(const struct node *head, long rounds)
{
    long sum = 0;
    for (long r = 0; r < rounds; r++) {
        const struct node *p = head;
        while (p) {
            sum += p->v;
            p = p->next;
        }
        sum ^= r;
    }
    return sum;
}

int main(int argc, char **argv)
{
    long m = argc > 1 ? atol(argv[1]) : 100000;
    long rounds = argc > 2 ? atol(argv[2]) : 300;
    if (m < 1)
        return 1;
    struct node *nodes = malloc(sizeof(struct node) * (size_t)m);
    if (!nodes)
        return 1;
    /* visit the array in steps of a number prime to m: every node once */
    long step = 7919 % m ? 7919 : 1, at = 0;
    struct node *prev = NULL, *head = NULL;
    for (long i = 0; i < m; i++) {
        struct node *n = &nodes[at];
        n->v = i * 3 + 1;
        n->next = NULL;
        if (prev)
            prev->next = n;
        else
            head = n;
        prev = n;
        at = (at + step) % m;
    }
    long long t0 = now_ns();
    long sum = walk(head, rounds);
    long long t1 = now_ns();
    printf("%ld\n", sum);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(nodes);
    return 0;
}
