/* chaos_ring.h - what the soak's token ring client (chaos_ring.c) shares
 * with its task (chaos_ring_tasks.c): the configuration the client sends
 * each VT, the token, what a VT returns and reports, and the values both
 * sides compute, so that every result of a ring is known exactly before
 * it runs. */
#ifndef CHAOS_RING_H
#define CHAOS_RING_H

#include <stdint.h>

#define CR_MAXVT 16
#define CR_MAXWORDS 1024

/* What the client sends each VT of a ring (a message from LEV_CLIENT):
 * the ids of all in ring order, its own place, the rounds, the words of
 * payload each token carries, and every how many rounds a VT reports. */
typedef struct cr_cfg {
    uint64_t ids[CR_MAXVT];
    long n, me, rounds, words, report_every;
} cr_cfg;

/* A token on the wire: its value (the hop that carries it, counted from 1)
 * then `words` payload words, word i being cr_word(value, i). */

/* What a VT returns. A ring that ran exactly once per hop returns, at
 * place me, received == rounds, last == cr_value(n, rounds - 1, me), sum ==
 * cr_sum(n, rounds, me) and zero in every count of trouble. */
typedef struct cr_result {
    long received; /* tokens taken in sequence */
    long last;     /* value of the last token taken */
    uint64_t sum;  /* cr_mix of every value taken, summed (kept in the VT's heap) */
    long dups;     /* tokens whose value came again (a duplicate delivery) */
    long gaps;     /* tokens that skipped values (a lost delivery) */
    long bad;      /* tokens of a wrong length or with a wrong payload word */
    int32_t err;   /* the first failed call's code (0: none) */
    int32_t err_round;
} cr_result;

/* What a VT reports every report_every rounds: its place and the round. */
typedef struct cr_report {
    int32_t place, round;
} cr_report;

/* A 64-bit mixer (splitmix64's finaliser). */
static inline uint64_t cr_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Payload word i of the token of value v. */
static inline uint64_t cr_word(long v, long i)
{
    return cr_mix((uint64_t)v * CR_MAXWORDS + (uint64_t)i);
}

/* The value of the token place me takes in round r of a ring of n: place
 * 0 sends hop 1 first, and each place sends on what it took plus one. */
static inline long cr_value(long n, long r, long me) { return me == 0 ? (r + 1) * n : r * n + me; }

/* The sum a VT at place me returns after `rounds` rounds. */
static inline uint64_t cr_sum(long n, long rounds, long me)
{
    uint64_t s = 0;
    for (long r = 0; r < rounds; r++)
        s += cr_mix((uint64_t)cr_value(n, r, me));
    return s;
}

#endif
