/* membership_codec.c - the codec of the membership payloads
 * (membership_codec.h): LEB128 numbers and printable strings over the
 * wire codec's buffers, updates about members, and the checks of every
 * received message before membership.c acts on it.
 */
#include "membership_codec.h"

#include <string.h>

#define S_HEAD_STATE 0x03
#define S_HEAD_REC 0x04
#define S_HEAD_BIG 0x08
#define S_HEAD_ACCUSER 0x10
#define S_UPDATE_MIN 12 /* bytes of the shortest update */

void pc_mem_put_var(pc_wbuf *w, uint64_t v)
{
    while (v >= 0x80) {
        pc_put_u8(w, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    pc_put_u8(w, (uint8_t)v);
}

void pc_mem_put_str(pc_wbuf *w, const char *s)
{
    size_t n = strlen(s);
    pc_mem_put_var(w, n);
    pc_put_raw(w, s, n);
}

void pc_mem_put_head(pc_wbuf *w, uint64_t mesh, uint8_t hflags)
{
    pc_put_u8(w, PC_MEM_VERSION);
    pc_put_u8(w, hflags);
    pc_put_u64(w, mesh);
}

/* Writes mb's update, with its record or not. */
void pc_mem_put_update(pc_wbuf *w, const pc_member *mb, bool with_rec)
{
    pc_mem_put_update_by(w, mb, with_rec, 0);
}

void pc_mem_put_update_by(pc_wbuf *w, const pc_member *mb, bool with_rec, uint32_t accuser)
{
    uint8_t head = (uint8_t)mb->state;
    if (with_rec)
        head |= S_HEAD_REC | (mb->rec.big_endian ? S_HEAD_BIG : 0);
    if (accuser && mb->state == PC_MEMBER_SUSPECT)
        head |= S_HEAD_ACCUSER;
    pc_put_u8(w, head);
    pc_mem_put_var(w, mb->incarnation);
    pc_put_u64(w, mb->instance);
    pc_mem_put_str(w, mb->rec.endpoint);
    if (head & S_HEAD_ACCUSER)
        pc_put_u32(w, accuser);
    if (!with_rec)
        return;
    pc_mem_put_var(w, mb->rec.cores);
    pc_mem_put_var(w, mb->rec.rate);
    pc_mem_put_var(w, mb->rec.load);
    pc_mem_put_str(w, mb->rec.arch);
    pc_mem_put_var(w, mb->rec.version);
}

/* Marks r bad with why, unless it already is. */
static void s_bad(pc_rbuf *r, const char *why)
{
    if (!r->bad) {
        r->bad = true;
        r->why = why;
    }
}

/* A var of at most 32 bits, in its shortest form. */
static uint32_t s_get_var(pc_rbuf *r)
{
    uint32_t v = 0;
    for (int i = 0; i < 5; i++) {
        uint8_t b = pc_get_u8(r);
        if (r->bad)
            return 0;
        if (i == 4 && b > 0x0F) {
            s_bad(r, "number past 32 bits");
            return 0;
        }
        v |= (uint32_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            if (i > 0 && !b)
                s_bad(r, "number not in its shortest form");
            return v;
        }
    }
    return v; /* not reached: the fifth byte ends the number */
}

static bool s_printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7E)
            return false;
    return true;
}

/* Whether s is an endpoint: 1 to PC_ENDPOINT_MAX - 1 printable bytes. */
bool pc_mem_endpoint_ok(const char *s)
{
    if (!s)
        return false;
    size_t n = strnlen(s, PC_ENDPOINT_MAX);
    return n > 0 && n < PC_ENDPOINT_MAX && s_printable(s, n);
}

/* A str of at least min and at most cap - 1 bytes into out[cap]. */
static void s_get_str(pc_rbuf *r, char *out, size_t cap, size_t min, const char *too_long)
{
    const void *p;
    out[0] = '\0';
    uint32_t n = s_get_var(r);
    if (r->bad)
        return;
    if (n >= cap || n < min) {
        s_bad(r, n >= cap ? too_long : "empty endpoint");
        return;
    }
    if (!pc_get_raw(r, &p, n))
        return;
    if (!s_printable(p, n)) {
        s_bad(r, "string holds a control, space or non-ASCII byte");
        return;
    }
    memcpy(out, p, n);
    out[n] = '\0';
}

/* Reads one update; false (r bad) when it is malformed. */
bool pc_mem_get_update(pc_rbuf *r, pc_mem_update *u)
{
    memset(u, 0, sizeof *u);
    uint8_t head = pc_get_u8(r);
    if (head & ~(S_HEAD_STATE | S_HEAD_REC | S_HEAD_BIG | S_HEAD_ACCUSER))
        s_bad(r, "unknown flags in an update");
    else if ((head & S_HEAD_ACCUSER) && (head & S_HEAD_STATE) != PC_MEMBER_SUSPECT)
        s_bad(r, "an accuser on an update that is not a suspicion");
    else if ((head & S_HEAD_BIG) && !(head & S_HEAD_REC))
        s_bad(r, "byte order without a record");
    else if ((head & S_HEAD_STATE) == PC_MEMBER_ALIVE && !(head & S_HEAD_REC))
        s_bad(r, "alive update without its record");
    u->state = (pc_member_state)(head & S_HEAD_STATE);
    u->has_rec = head & S_HEAD_REC;
    u->incarnation = s_get_var(r);
    u->instance = pc_get_u64(r);
    s_get_str(r, u->rec.endpoint, sizeof u->rec.endpoint, 1, "endpoint too long");
    if (head & S_HEAD_ACCUSER) {
        u->accuser = pc_get_u32(r);
        if (!u->accuser && !r->bad)
            s_bad(r, "accuser 0");
    }
    if (u->has_rec) {
        u->rec.cores = s_get_var(r);
        u->rec.rate = s_get_var(r);
        u->rec.load = s_get_var(r);
        s_get_str(r, u->rec.arch, sizeof u->rec.arch, 0, "architecture name too long");
        u->rec.version = s_get_var(r);
        u->rec.big_endian = (head & S_HEAD_BIG) != 0;
    }
    return !r->bad;
}

/* Checks a whole message (to its last byte) from `from` to this peer,
 * `self`, and fills msg; returns NULL, or why it must be dropped. */
const char *pc_mem_parse(uint16_t type, const void *payload, size_t len, const char *from,
                         const char *self, pc_mem_msg *msg)
{
    pc_rbuf r;
    pc_rbuf_init(&r, payload, len);
    memset(msg, 0, sizeof *msg);
    if (type < PC_M_PING || type > PC_M_GOSSIP)
        return "not a membership message type";
    uint8_t version = pc_get_u8(&r);
    msg->hflags = pc_get_u8(&r);
    msg->mesh = pc_get_u64(&r);
    if (r.bad)
        return r.why;
    if (version != PC_MEM_VERSION)
        return "unknown membership payload version";
    if (msg->hflags & ~PC_MEM_PROVISIONAL)
        return "unknown head flags";
    if (!msg->mesh)
        return "mesh id 0";
    switch (type) {
    case PC_M_PING:
    case PC_M_PING_REQ:
    case PC_M_ACK:
        msg->seq = s_get_var(&r);
        if (type != PC_M_ACK)
            s_get_str(&r, msg->target, sizeof msg->target, 1, "target endpoint too long");
        if (type == PC_M_PING_REQ)
            break;
        msg->digest = pc_get_u32(&r);
        msg->flags = pc_get_u8(&r);
        if (msg->flags & ~(type == PC_M_ACK ? PC_MEM_SETTLED | PC_MEM_NACK : PC_MEM_SETTLED))
            s_bad(&r, "unknown digest flags");
        break;
    case PC_M_SYNC:
        msg->flags = pc_get_u8(&r);
        if (msg->flags & ~PC_MEM_SYNC_ANSWER)
            s_bad(&r, "unknown sync flags");
        break;
    case PC_M_JOIN:
    case PC_M_GOSSIP:
        break;
    default:
        return "not a membership message type";
    }
    uint32_t count = s_get_var(&r);
    if (count > (type == PC_M_SYNC ? PC_MEM_VIEW_CAP : PC_MEM_GOSSIP_CAP))
        s_bad(&r, "too many updates in one message");
    else if (count > (r.len - r.off) / S_UPDATE_MIN)
        s_bad(&r, "more updates announced than the payload holds");
    else if (type == PC_M_JOIN && count != 1)
        s_bad(&r, "a join carries one update, its sender's");
    msg->nupdates = count;
    msg->updates_off = r.off;
    pc_mem_update u;
    for (uint32_t i = 0; i < count && pc_mem_get_update(&r, &u); i++)
        if (type == PC_M_JOIN && (u.state != PC_MEMBER_ALIVE || strcmp(u.rec.endpoint, from)))
            s_bad(&r, "a join carries one update, its sender's");
    if (r.bad)
        return r.why;
    if (r.off != r.len)
        return "trailing bytes after the payload";
    if (type == PC_M_PING && strcmp(msg->target, self))
        return "ping for another peer";
    if (type == PC_M_PING_REQ && (!strcmp(msg->target, self) || !strcmp(msg->target, from)))
        return "ping request naming this peer or its sender";
    return NULL;
}
