/* membership_codec.h - the payloads of the membership messages
 * (membership_codec.c), read and written for membership.c: updates about
 * members, the fields of each message, and the checks every received
 * byte goes through.
 *
 * Numbers are LEB128 varints in their shortest form (var), strings a var
 * length and printable ASCII bytes (str), u64 eight bytes little-endian:
 *
 *   head            u8 version (PC_MEM_VERSION), u8 flags (1: the sender's
 *                   mesh id is provisional: drawn, not yet settled), u64
 *                   mesh id (not 0); every payload starts with it
 *   update          u8 head (bits 0-1 state, 2 a record follows, 3 big
 *                   endian, 4 an accuser follows), var incarnation, u64
 *                   instance, str endpoint, u32 accuser (a SUSPECT's: a
 *                   hash of the endpoint of the peer that raised it), and
 *                   the record: var cores, var rate, var load, str arch,
 *                   var version
 *   updates         var count, count x update
 *   PING            head, var seq, str target, digest, updates
 *   PING_REQ        head, var seq, str target, updates
 *   ACK             head, var seq, digest, updates (digest flag 2: a nack,
 *                   the relay's probe of the target went unanswered)
 *   JOIN            head, updates: one, the newcomer's own, alive
 *   GOSSIP          head, updates
 *   SYNC            head, u8 flags (1: answer with your view), updates: a
 *                   view
 *   digest          u32 sum of hashes of the endpoints and instances of
 *                   the live members the sender sees, u8 flags: 1 if that
 *                   set has not
 *                   changed for a few periods
 *
 * An ALIVE update carries its record; the others carry it in a SYNC
 * (SUSPECT) or not at all. A record typically takes 40 bytes, so the view
 * of 1,024 peers is about 41 KB.
 */
#ifndef PC_MEMBERSHIP_CODEC_H
#define PC_MEMBERSHIP_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "membership.h"
#include "wire.h"

#define PC_MEM_GOSSIP_CAP 64    /* updates a message other than SYNC may carry */
#define PC_MEM_VIEW_CAP 65536   /* entries a SYNC may carry */
#define PC_MEM_SYNC_ANSWER 0x01 /* SYNC flag: answer with your view (push-pull) */
#define PC_MEM_SETTLED 0x01     /* digest flag: the sender's set of live members is settled */
#define PC_MEM_NACK 0x02        /* digest flag of an ACK: a relayed probe went unanswered */
#define PC_MEM_PROVISIONAL 0x01 /* head flag: the sender's mesh id is not settled */
#define PC_MEM_VERSION 2        /* of the payloads (1: before they carried a head) */

/* One update as read from the network. */
typedef struct pc_mem_update {
    pc_member_state state;
    uint32_t incarnation;
    uint64_t instance;
    uint32_t accuser; /* of a SUSPECT: who raised it (0: not said) */
    bool has_rec;
    pc_peer_rec rec; /* the endpoint only, without has_rec */
} pc_mem_update;

/* A message as pc_members_recv checked it. */
typedef struct pc_mem_msg {
    uint64_t mesh;  /* the sender's mesh id */
    uint8_t hflags; /* of the head */
    uint32_t seq, digest;
    uint8_t flags; /* SYNC: its flags; PING, ACK: the digest's */
    char target[PC_ENDPOINT_MAX];
    uint32_t nupdates;
    size_t updates_off; /* where the first update starts */
} pc_mem_msg;

/* Writes a var; a str (s is NUL-terminated). */
void pc_mem_put_var(pc_wbuf *w, uint64_t v);
void pc_mem_put_str(pc_wbuf *w, const char *s);

/* Writes the head every payload starts with. */
void pc_mem_put_head(pc_wbuf *w, uint64_t mesh, uint8_t hflags);

/* Writes mb's update, with its record or not. */
void pc_mem_put_update(pc_wbuf *w, const pc_member *mb, bool with_rec);

/* The same, naming the accuser of a SUSPECT (0: none). */
void pc_mem_put_update_by(pc_wbuf *w, const pc_member *mb, bool with_rec, uint32_t accuser);

/* Reads one update; false (r bad, r->why set) when it is malformed. */
bool pc_mem_get_update(pc_rbuf *r, pc_mem_update *u);

/* Whether s is an endpoint: 1 to PC_ENDPOINT_MAX - 1 printable bytes. */
bool pc_mem_endpoint_ok(const char *s);

/* Checks a whole message of `type` (to its last byte) from `from` to
 * this peer, `self`, and fills msg; returns NULL, or why it must be
 * dropped (a static string). */
const char *pc_mem_parse(uint16_t type, const void *payload, size_t len, const char *from,
                         const char *self, pc_mem_msg *msg);

#endif
