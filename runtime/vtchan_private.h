/* vtchan_private.h - the channel state of a virtual thread, shared by
 * vtchan.c (the state, delivery, acknowledgement, portable form) and
 * vtchan_calls.c (the calls a task makes over it).
 *
 * Internal to those two files.
 */
#ifndef VTCHAN_PRIVATE_H
#define VTCHAN_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vtchan.h"

/* The blocking call in progress (rt_chan.bk). */
enum { RT_BK_NONE = 0, RT_BK_SEND = 1, RT_BK_RECV = 2, RT_BK_LOCK = 3, RT_BK_READ = 4 };

/* An unconsumed input; data is malloc'd (NULL for length 0). */
typedef struct rt_ch_in {
    uint64_t d, from, ref;
    int32_t err;
    uint8_t kind, novalue;
    void *data;
    size_t len;
} rt_ch_in;

/* A VT known to have ended (an RT_IN_ENDED delivered at position d). */
typedef struct rt_ch_end {
    uint64_t vt, d;
    int32_t err;
} rt_ch_end;

/* An output kept until acknowledged; name and data are malloc'd. */
typedef struct rt_ch_out {
    uint64_t seq, to, ref;
    uint8_t kind, keep;
    char *name;
    void *data;
    size_t len;
} rt_ch_out;

typedef struct rt_chan {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a VT waiting on its OS thread (plain calls) */
    rt_ch_in *in;      /* unconsumed inputs, in stream order */
    size_t nin, cin;
    uint64_t next_d; /* position of the next input expected */
    rt_ch_out *out;  /* outbox, by number */
    size_t nout, cout;
    size_t nmsg;      /* RT_OUT_MSG entries in the outbox */
    uint64_t out_seq; /* last output number given */
    uint64_t recv_n;  /* last receive number given */
    uint32_t since_consumed;
    char **locks; /* names of the locks held */
    size_t nlocks, clocks;
    uint64_t *missing; /* VTs known missing (from consumed bounces) */
    size_t nmissing, cmissing;
    rt_ch_end *ended; /* VTs known ended, in stream order (RT_IN_ENDED) */
    size_t nended, cended;
    uint64_t *ahead; /* reads taken from an answer at the host (rt_ch_read_answer)
                      * whose logged RT_IN_READ has not come: passed over when it does */
    size_t nahead, cahead;
    /* the blocking call in progress */
    uint8_t bk;         /* RT_BK_* */
    uint8_t bk_timeout; /* RT_BK_RECV: RT_OUT_TIMEOUT emitted */
    uint64_t bk_ref;    /* LOCK, READ: the request's output number */
    uint64_t bk_recv;   /* RECV: the receive number */
    uint64_t bk_dl_ns;  /* RECV: monotonic deadline (0: none) */
    bool waiting;       /* a _try returned LEV_BLOCKED: wake the VT on news */
    bool resend;        /* rt_ch_resend asked before the VT had a host */
    uint64_t gen;       /* bumped by every delivery and acknowledgement */
} rt_chan;

/* The VT's channel state, created on first use; NULL on exhaustion. */
rt_chan *rt_ch_get(rt_vt *vt);

/* The host of the VT's executor, or NULL. */
const rt_ch_host *rt_ch_host_of(rt_vt *vt);

/* Under ch->mu: the entry of VT `id` in the set of ended VTs, or NULL. */
const rt_ch_end *rt_ch_ended_locked(const rt_chan *ch, uint64_t id);

/* Under ch->mu: appends an output (numbered and kept unless it is
 * RT_OUT_CONSUMED) and fills *o with what the host is to be given (the
 * pointers are the kept copies' or the caller's). 0 or LEV_ENOMEM. */
int rt_ch_emit_locked(rt_chan *ch, rt_out *o);

#endif
