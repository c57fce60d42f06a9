/* bench_msg.h - what bench_msg.c shares with its tasks (bench_tasks.c). */
#ifndef BENCH_MSG_H
#define BENCH_MSG_H

#include <stdint.h>

/* What the client sends each VT of a pair. */
typedef struct bm_cfg {
    uint64_t peer; /* the other VT */
    long role;     /* 0: leads, 1: answers */
    long n, warm;  /* timed rounds, and untimed ones before them */
    long size;     /* bytes of a message */
} bm_cfg;

#endif
