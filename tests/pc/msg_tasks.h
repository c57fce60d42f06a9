/* msg_tasks.h - what the message and global variable tests share with
 * their task sources (msg_tasks.c): the configuration a client sends each
 * VT, and the payload generator whose checksums both sides compute. */
#ifndef PC_MSG_TASKS_H
#define PC_MSG_TASKS_H

#include <stdint.h>

#define MSG_MAXVT 16

/* What the client sends each VT of a ring or an all-to-all exchange (as
 * a message from LEV_CLIENT): the ids of all, its own place, the rounds.
 * Round `rounds / 2` of the VT
 * at place 0 waits for a second message from the client (the gate), after
 * reporting the round. */
typedef struct msg_cfg {
    uint64_t ids[MSG_MAXVT];
    long n, me, rounds;
} msg_cfg;

/* Words of the all-to-all message of round r from place s to place d. */
long msg_words(long r, long s, long d);

/* Word i of that message. */
uint64_t msg_word(long r, long s, long d, long i);

/* What pc_a2a at place `me` returns: the sum of msg_word over every word
 * it receives, plus the number of messages, in the high byte. */
uint64_t msg_a2a_expect(const msg_cfg *c);

/* What pc_a2a returns when a check fails: 0xBAD in the top 12 bits, then
 * which check (4 bits), the round, the sender's place and the messages
 * taken so far (8 bits each) and a detail (24 bits: the error code, the
 * sender's id, the round or length that came, or the bad word's index). */
enum {
    MSG_BAD_CFG = 1,
    MSG_BAD_SEND,
    MSG_BAD_RECV,
    MSG_BAD_PLACE,
    MSG_BAD_FROM,
    MSG_BAD_ROUND,
    MSG_BAD_LENGTH,
    MSG_BAD_WORD
};
uint64_t msg_a2a_bad(int what, long r, long s, long got, uint64_t detail);

/* The name of check `what` (MSG_BAD_*), "?" for another number. */
const char *msg_a2a_bad_name(unsigned what);

/* The global "big" of pc_bigcount: MSG_BIG_WORDS words, word 0 the count
 * c and word i (i > 0) msg_big_word(c, i). */
#define MSG_BIG_WORDS 2048 /* 16 KiB: a value that goes by reference */
uint64_t msg_big_word(uint64_t c, long i);

/* pc_timeout's result. */
typedef struct msg_timeout_res {
    int32_t first, second; /* what its two receives returned */
    uint64_t from;         /* the second's sender */
    char text[32];         /* the second's message */
} msg_timeout_res;

/* pc_end_recv's result: what its receives from the VT that fails (place
 * 0) and from the one that ends normally (place 2) returned. */
typedef struct msg_end_res {
    int32_t hello, failed, failed_again, bye, ended; /* the codes */
    uint64_t from[5];                                /* *from after each */
} msg_end_res;

/* pc_put's argument and result. */
typedef struct msg_put_arg {
    long times, slot, nslots;
    long gate; /* after this round's puts, wait for a message from the client (0: none) */
} msg_put_arg;
typedef struct msg_put_res {
    long done;   /* times, or 0 when a check failed */
    long bad_at; /* the round whose check failed (0: none) */
    long got;    /* what its lock read, when that was wrong */
} msg_put_res;

/* pc_reads's result, and its checks. */
#define MSG_READ_CFG 4242L /* the client's value of "rd.cfg" */
enum {
    MSG_READ_CALL = 1, /* a call failed (got: which) */
    MSG_READ_OWN,      /* a read older than the VT's own write */
    MSG_READ_OLDER,    /* a read older than its previous read */
    MSG_READ_CAUSAL,   /* older than a put the VT had been told of */
    MSG_READ_CFGV      /* "rd.cfg" not the client's value */
};
typedef struct msg_read_res {
    long done;   /* its rounds, or 0 when a check failed */
    long bad_at; /* the round of the first failed check (0: none) */
    long what;   /* MSG_READ_* */
    long got, want;
} msg_read_res;

#endif
