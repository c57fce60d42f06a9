/* moved.c - pointers that stay valid when every heap object and frame
 * moves at a safe point (as under LEV_TORTURE, which restores them all at
 * new addresses, and in a resumed process): interior and one-past-the-end
 * pointers into heap arrays, into a frame's array and into a caller's
 * frame, a pointer to a pointer field (a list's link), a heap object that
 * points into itself, differences and comparisons of pointers into one
 * object, a buffer grown with realloc, and a struct in a frame that
 * points to another local of the same frame.
 * Arguments: ROUNDS (0: until killed). One line per round.
 * levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

struct node {
    long v;
    struct node *next;
};

/* A heap object whose pointers point into itself. */
struct ring {
    long cells[8];
    long *cur;
    long *end;
};

struct cursor {
    long *at;
    long *stop;
};

/* Sums a caller's array through a pointer into the caller's frame, with a
 * safe point at every element. */
static long sum_through(const long *from, const long *to)
{
    long s = 0;
    while (from < to) {
        lev_checkpoint();
        s += *from++;
    }
    return s;
}

/* Inserts v in order through a pointer to the link to change, with a
 * safe point between finding the link and writing it. */
static void insert_sorted(struct node **head, long v)
{
    struct node **link = head;
    while (*link && (*link)->v < v)
        link = &(*link)->next;
    struct node *n = malloc(sizeof *n);
    if (!n)
        exit(2);
    n->v = v;
    lev_checkpoint();
    n->next = *link;
    *link = n;
}

static long round_of(long r)
{
    long local[16];
    for (int i = 0; i < 16; i++)
        local[i] = (r + i) * 3 % 17;
    long *mid = &local[8], *past = local + 16;
    struct cursor cur = {local, mid}; /* points into its own frame */
    lev_checkpoint();
    long acc = sum_through(cur.at, cur.stop) + sum_through(mid, past);
    acc += (long)(past - mid) * 1000 + (mid > local);

    long *arr = malloc(32 * sizeof *arr);
    if (!arr)
        exit(2);
    for (int i = 0; i < 32; i++)
        arr[i] = i * r % 11;
    long *p = arr + 5, *end = arr + 32;
    lev_checkpoint();
    while (p != end) {
        acc += *p;
        p += 3;
        if (p > end)
            p = end;
        lev_checkpoint();
    }
    acc += (long)(end - arr);

    struct ring *ring = malloc(sizeof *ring);
    if (!ring)
        exit(2);
    for (int i = 0; i < 8; i++)
        ring->cells[i] = r * i;
    ring->cur = ring->cells + 2;
    ring->end = ring->cells + 8;
    for (int k = 0; k < 12; k++) {
        lev_checkpoint();
        acc += *ring->cur;
        if (++ring->cur == ring->end)
            ring->cur = ring->cells;
    }

    struct node *head = NULL;
    for (long k = 0; k < 6; k++)
        insert_sorted(&head, (k * 5 + r) % 7);
    for (struct node *n = head; n; n = n->next)
        acc = acc * 3 + n->v;

    char *buf = malloc(4);
    size_t len = 0, cap = 4;
    if (!buf)
        exit(2);
    char *mark = buf;
    for (int k = 0; k < 20; k++) {
        if (len + 1 >= cap) {
            size_t at = (size_t)(mark - buf);
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                exit(2);
            mark = buf + at;
        }
        buf[len++] = (char)('a' + (r + k) % 26);
        if (k == 7)
            mark = buf + len;
        lev_checkpoint();
    }
    buf[len] = '\0';
    acc += (long)strlen(mark) + mark[0];

    while (head) {
        struct node *next = head->next;
        free(head);
        head = next;
    }
    free(ring);
    free(arr);
    free(buf);
    return acc;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 30;
    long total = 0;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        long a = round_of(r);
        total = (total * 31 + a) % 1000003;
        printf("round %ld: %ld (total %ld)\n", r, a, total);
        fflush(stdout);
    }
    return (int)(total % 100);
}
