/* fuzz_membership.c - the membership codec on any bytes
 * (peercontroller/membership_codec.h): each message type's payload is
 * checked whole (pc_mem_parse), and, when it is taken, its updates are
 * read one by one (pc_mem_get_update) to their count without going past
 * the bytes. Input: u8 the type (its low bits pick PING, ACK, PING_REQ,
 * JOIN, SYNC or GOSSIP), then the payload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "log.h"
#include "membership_codec.h"
#include "wire.h"

static const uint16_t s_types[] = {PC_M_PING, PC_M_ACK,  PC_M_PING_REQ,
                                   PC_M_JOIN, PC_M_SYNC, PC_M_GOSSIP};
#define S_NTYPES (sizeof s_types / sizeof *s_types)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        pc_log_set_level((pc_log_level)(PC_LOG_ERROR + 1));
        init = 1;
    }
    if (!size)
        return 0;
    uint16_t type = s_types[data[0] % S_NTYPES];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    pc_mem_msg msg;
    memset(&msg, 0, sizeof msg);
    const char *why = pc_mem_parse(type, p, n, "tcp://127.0.0.1:1", "tcp://127.0.0.1:2", &msg);
    if (why)
        return 0;
    if (msg.updates_off > n)
        fuzz_fail("pc_mem_parse", "updates start past the payload");
    pc_rbuf r;
    pc_rbuf_init(&r, p + msg.updates_off, n - msg.updates_off);
    for (uint32_t i = 0; i < msg.nupdates; i++) {
        pc_mem_update u;
        if (!pc_mem_get_update(&r, &u))
            fuzz_fail("pc_mem_get_update", "an update of a message parse took is unreadable");
        if (!pc_mem_endpoint_ok(u.rec.endpoint))
            fuzz_fail("pc_mem_get_update", "an update names no endpoint");
    }
    return 0;
}

static void s_update(pc_wbuf *b, const char *ep, pc_member_state st, bool rec)
{
    pc_member mb;
    memset(&mb, 0, sizeof mb);
    snprintf(mb.rec.endpoint, sizeof mb.rec.endpoint, "%s", ep);
    mb.rec.cores = 2;
    mb.rec.rate = 400000;
    snprintf(mb.rec.arch, sizeof mb.rec.arch, "x86_64");
    mb.rec.version = PC_WIRE_VERSION;
    mb.state = st;
    mb.incarnation = 3;
    mb.instance = 99;
    pc_mem_put_update(b, &mb, rec);
}

void fuzz_seeds(void (*emit)(const char *name, const void *p, size_t n))
{
    for (size_t t = 0; t < S_NTYPES; t++) {
        pc_wbuf b;
        pc_wbuf_init(&b);
        pc_put_u8(&b, (uint8_t)t);
        pc_mem_put_head(&b, 0x77, t == 3 ? PC_MEM_PROVISIONAL : 0);
        uint16_t type = s_types[t];
        if (type == PC_M_PING || type == PC_M_ACK || type == PC_M_PING_REQ)
            pc_mem_put_var(&b, 41);
        if (type == PC_M_PING || type == PC_M_PING_REQ)
            pc_mem_put_str(&b, "tcp://127.0.0.1:2");
        if (type == PC_M_PING || type == PC_M_ACK) {
            pc_put_u32(&b, 0xabcdef);
            pc_put_u8(&b, PC_MEM_SETTLED);
        }
        if (type == PC_M_SYNC)
            pc_put_u8(&b, PC_MEM_SYNC_ANSWER);
        pc_mem_put_var(&b, type == PC_M_JOIN ? 1 : 2);
        s_update(&b, "tcp://127.0.0.1:1", PC_MEMBER_ALIVE, true);
        if (type != PC_M_JOIN)
            s_update(&b, "tcp://127.0.0.1:3", PC_MEMBER_SUSPECT, type == PC_M_SYNC);
        char name[32];
        snprintf(name, sizeof name, "seed_%s", pc_type_name(type));
        emit(name, b.data, b.len);
        pc_wbuf_free(&b);
    }
}
