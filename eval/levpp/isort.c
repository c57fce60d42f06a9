/* isort.c - insertion sort of a singly linked list: each node of the
 * input is inserted into the sorted list after a walk from its head, so
 * the inner loop is a while over pointers whose length grows.
 * usage: isort [N [RUN]]   (default 14000 1; RUN 0: build only)
 * Prints a checksum of the sorted order on standard output and the time
 * of the sort (nanoseconds) on standard error as `ns N`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct node {
    struct node *next;
    long key;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct node *isort(struct node *in)
{
    struct node *sorted = NULL;
    while (in) {
        struct node *n = in;
        in = in->next;
        if (!sorted || n->key < sorted->key) {
            n->next = sorted;
            sorted = n;
            continue;
        }
        struct node *p = sorted;
        while (p->next && p->next->key <= n->key)
            p = p->next;
        n->next = p->next;
        p->next = n;
    }
    return sorted;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 14000;
    int run = argc > 2 ? atoi(argv[2]) : 1;
    struct node *nodes = malloc(sizeof(struct node) * (size_t)(n > 0 ? n : 1));
    if (!nodes)
        return 1;
    unsigned long seed = 88172645463325252ul;
    struct node *head = NULL;
    for (long i = 0; i < n; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        nodes[i].key = (long)(seed % 1000000);
        nodes[i].next = head;
        head = &nodes[i];
    }
    long long t0 = now_ns();
    if (run)
        head = isort(head);
    long long t1 = now_ns();
    unsigned long h = 0;
    for (struct node *p = head; p; p = p->next)
        h = h * 1000003u + (unsigned long)p->key;
    printf("%lu\n", h);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(nodes);
    return 0;
}
