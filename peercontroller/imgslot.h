/* imgslot.h - periodic images lent by an executor to its worker daemon in
 * shared memory (imgslot.c), so that an image crosses from the executor
 * to the daemon without a copy through the channel's socket; and the
 * daemon's resume slot, through which an image to resume crosses the
 * other way (at the end).
 *
 * The executor keeps a pool of slots (pc_slots), each a memfd sealed
 * against shrinking and mapped once. A capture writes its image straight
 * into a free slot (pc_slots_alloc, given to the runtime as its image
 * allocator); pc_slots_finish puts the envelope's head in front of it and
 * the VT's channel state behind it (envelope.h), and pc_slots_lend lends
 * the slot to the daemon in an X_IMAGE_SLOT record, the memfd going along
 * the first time (SCM_RIGHTS). The daemon maps each slot once
 * (pc_slotmaps; again when it grew, its memfd sent again; the daemon
 * keeps no descriptor), wraps the envelope in a pc_buf without a copy, and when
 * the last reference to that buffer goes (the image went to its holders
 * and a newer one replaced it) gives the slot back with X_SLOT_FREE. A
 * lent slot is never written: the daemon refuses a slot lent twice.
 * Where memfds cannot be made, or every slot is lent, an image goes
 * through the channel as bytes (X_IMAGE), as before.
 *
 * A slot: [PC_SLOT_IMAGE_OFF - PC_ENV_HEAD, PC_SLOT_IMAGE_OFF) the
 * envelope's head, the image from PC_SLOT_IMAGE_OFF, the channel state
 * after it. A slot grows in place; one over 64 MiB and four times larger
 * than a free slot needs to be is made anew at the size needed.
 */
#ifndef PC_IMGSLOT_H
#define PC_IMGSLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define PC_SLOTS_MAX 64           /* slots of one executor */
#define PC_SLOT_IMAGE_OFF 4096u   /* where an image starts in its slot */
#define PC_SLOT_SLACK (64u << 10) /* room made after an image for its channel state */

/* Whether images may go in shared memory, both ways: unless
 * LEV_IMAGE_SLOTS=0 in the environment (then as bytes, for comparison). */
bool pc_slots_wanted(void);

/* ===== The executor's side (thread-safe) ===== */

typedef struct pc_slots pc_slots;

/* A lent slot, as its X_IMAGE_SLOT record gives it. */
typedef struct pc_slot_lend {
    uint32_t slot;
    int fd; /* the slot's memfd when the daemon has not mapped it at this size, else -1 */
    uint64_t size, off, len;
} pc_slot_lend;

#define PC_SLOT_LEND_LEN 29 /* bytes of its record's payload: u32, u8, 3 x u64 */

/* The payload of the X_IMAGE_SLOT or X_STOPPED_SLOT record of l, into
 * out (PC_SLOT_LEND_LEN bytes); pc_slotmaps_take reads it. */
void pc_slot_lend_encode(const pc_slot_lend *l, uint8_t *out);

/* Whether such a payload (n bytes) says the slot's memfd came with it,
 * to be taken from the channel (pc_chan_take_fd). */
bool pc_slot_lend_has_fd(const uint8_t *p, size_t n);

/* An empty pool (slots are made as images need them); NULL on exhaustion. */
pc_slots *pc_slots_new(void);

/* Unmaps and closes every slot; accepts NULL, sets *s_p NULL. */
void pc_slots_destroy(pc_slots **s_p);

/* len writable bytes at PC_SLOT_IMAGE_OFF of a free slot, now filling;
 * NULL when no slot is free and the pool is full, or memfds fail (said
 * once on stderr, and the pool is off from then on). */
uint8_t *pc_slots_alloc(pc_slots *s, size_t len);

/* The slot whose image starts at img, or -1 (img is not in a slot). */
int pc_slots_find(pc_slots *s, const uint8_t *img);

/* Makes the filling slot i an envelope: the head in front of its image
 * of ilen bytes, then the tlen bytes of tail (the channel state), growing
 * the slot when they do not fit. 0, or LEV_ENOMEM (the slot is then free
 * again). */
int pc_slots_finish(pc_slots *s, int i, size_t ilen, const void *tail, size_t tlen);

/* Lends finished slot i to the daemon: *l is what its record says. The
 * slot stays lent until pc_slots_back. */
void pc_slots_lend(pc_slots *s, int i, pc_slot_lend *l);

/* Frees slot i, filling or finished and not lent (a capture that failed,
 * an image dropped before it went out). */
void pc_slots_release(pc_slots *s, int i);

/* The daemon gave slot i back (X_SLOT_FREE); LEV_EINVAL when it was not
 * lent. */
int pc_slots_back(pc_slots *s, uint32_t i);

/* ===== The daemon's side (one thread, but for buffers released
 * anywhere) ===== */

typedef struct pc_slotmaps pc_slotmaps;

/* NULL on exhaustion. */
pc_slotmaps *pc_slotmaps_new(void);

/* Forgets the executor's slots; a mapping stays until the last buffer
 * over it goes. Accepts NULL, sets *m_p NULL. */
void pc_slotmaps_destroy(pc_slotmaps **m_p);

/* The envelope lent by an X_IMAGE_SLOT record (payload p of n bytes, fd
 * the memfd it brought or -1; fd is taken either way) as a buffer over
 * the slot's mapping, or NULL with *why when the record is refused: an
 * unknown or lent slot, a slot of another size without its memfd, a
 * descriptor that is not a sealed memfd of that size, bounds outside the
 * slot, no memory. */
pc_buf *pc_slotmaps_take(pc_slotmaps *m, const uint8_t *p, size_t n, int fd, const char **why);

/* Puts in ids (up to cap) the slots whose buffers all went since the
 * last call, to give back; their count. */
int pc_slotmaps_returned(pc_slotmaps *m, uint32_t *ids, int cap);

/* ===== An image to resume, from the daemon to its executor =====
 * The daemon keeps one resume slot per executor: a memfd sealed against
 * shrinking, grown as images need and written with each envelope to
 * resume; it lends it with an X_RESUME_SLOT record (the memfd passed
 * along when the executor has not mapped it at that size) until the
 * executor, having restored the VT from its mapping, gives it back
 * (X_RESUME_FREE). An image that comes while the slot is lent, or where
 * memfds cannot be made, goes as bytes (X_RESUME). Made once and reused,
 * the slot costs no page of the image's size per resume on either side
 * (eval/mesh/bench_resume.c). */

typedef struct pc_rslot {
    int fd;        /* -1 until made */
    uint64_t size; /* the memfd's size */
    bool mapped;   /* the executor mapped it at this size */
    bool lent;     /* written and not given back yet */
} pc_rslot;

#define PC_RSLOT_REC_LEN 17 /* X_RESUME_SLOT's payload: u64 size, u64 len, u8 memfd along */

void pc_rslot_init(pc_rslot *s);
void pc_rslot_close(pc_rslot *s);

/* Writes data[len] at the start of s (made or grown first) and fills rec
 * (PC_RSLOT_REC_LEN bytes) for its X_RESUME_SLOT record; *fd is the memfd
 * to pass along with it, or -1 when the executor has it mapped. s is then
 * lent. 0, or -1 when s is lent already or the memfd cannot be made or
 * written (send the image as bytes). */
int pc_rslot_fill(pc_rslot *s, const void *data, size_t len, uint8_t *rec, int *fd);

/* The executor gave s back (X_RESUME_FREE). */
void pc_rslot_back(pc_rslot *s);

/* The executor is new (started again, or gone): it has no mapping, and
 * nothing is lent to it. */
void pc_rslot_reset(pc_rslot *s);

/* The executor's mapping of its daemon's resume slot. */
typedef struct pc_rslot_map {
    const uint8_t *base;
    uint64_t size;
} pc_rslot_map;

/* The envelope an X_RESUME_SLOT record (payload p of n bytes) lends, at
 * the start of m's mapping, mapped anew from fd when the record says the
 * memfd came along (fd: the one that came, or -1; it is closed either
 * way); *len its length. NULL with *why when refused: a malformed record,
 * a memfd said and none came, or one not sealed against shrinking or
 * smaller than the record's size, a slot never mapped or mapped at
 * another size, a length of 0 or past the slot. */
const uint8_t *pc_rslot_take(pc_rslot_map *m, const uint8_t *p, size_t n, int fd, uint64_t *len,
                             const char **why);

void pc_rslot_unmap(pc_rslot_map *m);

#endif
