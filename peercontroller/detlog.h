/* detlog.h - the deployer's log of determinants for direct messages with
 * causal logging (detlog.c; docs/DIRECT_MESSAGES.md has the protocol,
 * causal.h the executors' part).
 *
 * Per VT of a VC: the determinants after its stable image (which input
 * each position holds), how far they are known without a gap (the
 * watermark executors stop carrying below), its incarnation, and, per
 * incarnation, the positions fixed when it began (beyond which the
 * determinants of the incarnation before it belong to an abandoned
 * branch). It checks what it is told: two messages at one position is a
 * broken protocol.
 *
 * Decides and does no I/O. Not thread-safe: one thread per log.
 */
#ifndef PC_DETLOG_H
#define PC_DETLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "causal.h"

typedef struct pc_detlog pc_detlog;

/* An empty log; NULL on exhaustion. Every VT starts at incarnation 1,
 * with no position fixed beyond its start. */
pc_detlog *pc_detlog_new(void);

/* Frees the log; accepts NULL, sets *l_p NULL. */
void pc_detlog_destroy(pc_detlog **l_p);

/* Whether d belongs to a branch a fenced incarnation took, beyond the
 * positions fixed for its successor: no one depends on it. */
bool pc_detlog_abandoned(const pc_detlog *l, const pc_cx_det *d);

/* Learns d (one abandoned, or at or below the stable image, is ignored).
 * 0; LEV_EINVAL when d contradicts what is known (the protocol is
 * broken: the caller says so); LEV_ENOMEM. */
int pc_detlog_add(pc_detlog *l, const pc_cx_det *d);

/* An image of a VT, with the determinants its executor held when it was
 * taken: *usable false if one of them is of an abandoned branch (the
 * image is an orphan: drop it); else they are learnt. 0, LEV_EINVAL,
 * LEV_ENOMEM as pc_detlog_add. */
int pc_detlog_image(pc_detlog *l, const pc_cx_det *d, size_t n, bool *usable);

/* `vt`'s newest stable image stands at position p: what is below it is
 * forgotten, and the watermark is at least p. */
void pc_detlog_stable(pc_detlog *l, uint64_t vt, uint64_t p);

/* Fences `vt`'s incarnation: returns the new one's epoch. Until
 * pc_detlog_fix, every determinant of the old one is still taken (the
 * barrier collects them). 0 on exhaustion. */
uint32_t pc_detlog_fence(pc_detlog *l, uint64_t vt);

/* As pc_detlog_fence, to a given incarnation (the deployer's numbering,
 * which may skip: a VT moved without a fence is a new incarnation too).
 * An epoch not above the current one is ignored. 0 or LEV_ENOMEM. */
int pc_detlog_fence_to(pc_detlog *l, uint64_t vt, uint32_t epoch);

/* Fixes the positions the current incarnation of `vt` must take again,
 * resuming from an image at position p: those after p known without a
 * gap. *out (caller frees) gets them in order. 0; LEV_EINVAL when a
 * position beyond them is known (a gap: the protocol is broken);
 * LEV_ENOMEM. */
int pc_detlog_fix(pc_detlog *l, uint64_t vt, uint64_t p, pc_cx_det **out, size_t *n);

/* The watermark of `vt` (its positions known without a gap), and its
 * incarnation. */
uint64_t pc_detlog_wm(const pc_detlog *l, uint64_t vt);
uint32_t pc_detlog_epoch(const pc_detlog *l, uint64_t vt);

/* The recovery barrier: the live executors of the VC (a set of executor
 * numbers, bit i for executor i of causal.h) must each answer, once every
 * determinant it holds is on its way to the deployer, before a lost VT
 * resumes. Starting one replaces the one running (an executor died
 * meanwhile); returns its number, which the executors answer with. A
 * barrier over no executor is done at once. */
uint32_t pc_detlog_barrier_start(pc_detlog *l, uint64_t live);

/* Executor `peer` answered barrier `id`: true when that completes the
 * barrier running (an answer to an older one, or twice, counts for
 * nothing). */
bool pc_detlog_barrier_answer(pc_detlog *l, uint32_t id, int peer);

/* Whether a barrier runs, not complete yet. */
bool pc_detlog_barrier_open(const pc_detlog *l);

/* Determinants learnt (each once). */
uint64_t pc_detlog_count(const pc_detlog *l);

#endif
