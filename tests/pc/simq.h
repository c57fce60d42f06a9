/* simq.h - the event queue of the deterministic simulators (membership,
 * whole VCs, causal logging): a binary min-heap of fixed-size items
 * ordered by a `before` function the simulator gives, which must be a
 * strict total order (time, then a sequence number unique to each item),
 * so that a seed pops its events in one order only.
 */
#ifndef SIMQ_H
#define SIMQ_H

#include <stdbool.h>
#include <stddef.h>

typedef bool (*simq_before)(const void *a, const void *b);

typedef struct simq {
    unsigned char *items;
    size_t n, cap, size;
    simq_before before;
    unsigned char *tmp; /* one item, for the moves */
} simq;

/* An empty queue of items of `size` bytes; aborts when out of memory. */
void simq_init(simq *q, size_t size, simq_before before);

/* Frees what the queue holds (not what its items point to). */
void simq_free(simq *q);

/* Adds a copy of *item; aborts when out of memory. */
void simq_push(simq *q, const void *item);

/* Moves the first item into *out; the queue must not be empty. */
void simq_pop(simq *q, void *out);

/* Item i in heap order (not sorted): for a look at every item. */
static inline void *simq_item(const simq *q, size_t i) { return q->items + i * q->size; }

#endif
