/* zbase.h - the baseline of the message benchmarks (zbase.c): plain
 * libzmq between two processes, a DEALER here and a ROUTER in a child,
 * the pattern the peers use; round trips and one-way streams.
 */
#ifndef ZBASE_H
#define ZBASE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct zb_pair {
    void *ctx, *d;
    pid_t child;
} zb_pair;

/* Starts the child and connects to it: 0, or -1 (it did not start). */
int zb_up(zb_pair *z);

/* Tells the child to quit and waits for it. */
void zb_down(zb_pair *z);

/* Seconds for n round trips of size bytes, after warm ones. */
double zb_pingpong(zb_pair *z, long n, long warm, size_t size);

/* Seconds for a stream of n messages of size bytes and one answer. */
double zb_stream(zb_pair *z, long n, size_t size);

#endif
