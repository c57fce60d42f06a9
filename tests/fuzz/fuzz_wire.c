/* fuzz_wire.c - the peer's wire decoding on any bytes: a header frame
 * (pc_hdr_decode), then the payload read whole against its type's
 * fields (pc_msg_check, every type of the table), and the payloads with
 * codecs of their own: direct messages and credits (pc_cx_decode,
 * pc_cx_credit_decode), lists of determinants and the engine's part of
 * an image (pc_cx_dets_decode, pc_cx_image_decode, pc_cx_image_peek).
 * The membership codec has its own harness (fuzz_membership.c).
 * Input: a 40-byte header, then the payload; a first byte above 0xF0
 * instead feeds the codec it names the bytes after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causal.h"
#include "fuzz.h"
#include "lev_errors.h"
#include "log.h"
#include "wire.h"

/* A refusal must say why. */
static void s_why(int rc, const char *why, const char *what)
{
    if (rc && rc != LEV_ENOMEM && (!why || !*why))
        fuzz_fail(what, "refused without a reason");
}

static void s_codecs(uint8_t which, const uint8_t *p, size_t n)
{
    const char *why = NULL;
    switch (which & 3) {
    case 0: {
        pc_cx_msg m;
        const void *data = NULL;
        size_t len = 0, nd = 0;
        pc_cx_det *d = NULL;
        int rc = pc_cx_decode(p, n, 1 << 20, &m, &data, &len, &d, &nd, &why);
        s_why(rc, why, "pc_cx_decode");
        if (!rc && len &&
            (!data || (const uint8_t *)data < p || (const uint8_t *)data + len > p + n))
            fuzz_fail("pc_cx_decode", "message data outside the bytes");
        free(d);
        uint64_t f, t, s;
        why = NULL;
        rc = pc_cx_credit_decode(p, n, &f, &t, &s, &why);
        s_why(rc < 0 ? rc : 0, why, "pc_cx_credit_decode");
        break;
    }
    case 1: {
        pc_cx_det *d = NULL;
        size_t nd = 0;
        int rc = pc_cx_dets_decode(p, n, &d, &nd, &why);
        s_why(rc, why, "pc_cx_dets_decode");
        free(d);
        break;
    }
    case 2: {
        pc_cx_image im;
        memset(&im, 0, sizeof im);
        int rc = pc_cx_image_decode(p, n, 1 << 20, &im, &why);
        s_why(rc, why, "pc_cx_image_decode");
        pc_cx_image_clear(&im);
        break;
    }
    default: {
        pc_cx_image im;
        memset(&im, 0, sizeof im);
        int rc = pc_cx_image_peek(p, n, 1 << 20, &im, &why);
        s_why(rc, why, "pc_cx_image_peek");
        pc_cx_image_clear(&im);
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        pc_log_set_level((pc_log_level)(PC_LOG_ERROR + 1));
        init = 1;
    }
    if (size && data[0] > 0xF0) {
        s_codecs(data[0], data + 1, size - 1);
        return 0;
    }
    pc_hdr h;
    const char *why = NULL;
    int rc = pc_hdr_decode(data, size < PC_HDR_LEN ? size : PC_HDR_LEN, &h, &why);
    s_why(rc, why, "pc_hdr_decode");
    if (rc)
        return 0;
    const uint8_t *body = data + PC_HDR_LEN;
    size_t len = size - PC_HDR_LEN;
    for (size_t bulk = 0; bulk < 2; bulk++) { /* without and with a bulk frame */
        why = NULL;
        rc = pc_msg_check(&h, body, len, bulk, &why);
        s_why(rc, why, "pc_msg_check");
    }
    return 0;
}

/* ---- seeds: one header per type the table knows, then real payloads ---- */

static void s_msg(void (*emit)(const char *, const void *, size_t), const char *name, uint16_t type,
                  const pc_wbuf *b)
{
    uint8_t buf[4096];
    pc_hdr h = pc_hdr_make(type, 0x1234, 2, 1, 7);
    h.len = (uint32_t)(b ? b->len : 0);
    pc_hdr_encode(&h, buf);
    size_t n = PC_HDR_LEN;
    if (b && b->len + n <= sizeof buf) {
        memcpy(buf + n, b->data, b->len);
        n += b->len;
    }
    emit(name, buf, n);
}

void fuzz_seeds(void (*emit)(const char *name, const void *p, size_t n))
{
    char name[64];
    for (unsigned t = 0x0100; t < 0x0700; t++) {
        if (!strcmp(pc_type_name((uint16_t)t), "?"))
            continue;
        snprintf(name, sizeof name, "empty_%s", pc_type_name((uint16_t)t));
        s_msg(emit, name, (uint16_t)t, NULL);
    }
    pc_wbuf b;
    pc_wbuf_init(&b); /* W_OUT of a read marked by its worker */
    pc_put_u8(&b, 5);
    pc_put_u64(&b, 0);
    pc_put_u64(&b, 3);
    pc_put_u8(&b, 1);
    pc_put_str(&b, "rd.cfg");
    uint8_t ref[36] = {1, 2, 3};
    pc_put_blob(&b, ref, sizeof ref);
    s_msg(emit, "w_out_read", PC_W_OUT, &b);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b); /* W_GLOB whole */
    pc_put_str(&b, "rd.ctr");
    pc_put_u8(&b, PC_GLOB_WHOLE);
    long v = 42;
    pc_put_blob(&b, &v, sizeof v);
    s_msg(emit, "w_glob", PC_W_GLOB, &b);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b); /* W_IN of a message */
    pc_put_u8(&b, 1);
    pc_put_u8(&b, 0);
    pc_put_u64(&b, 3);
    pc_put_u64(&b, 0);
    pc_put_i32(&b, 0);
    pc_put_u64(&b, 3);
    pc_put_u64(&b, 1);
    pc_put_blob(&b, "hello", 5);
    s_msg(emit, "w_in", PC_W_IN, &b);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b); /* W_ENROL */
    pc_put_str(&b, "tcp://127.0.0.1:4000");
    uint8_t hash[PC_HASH_LEN] = {9};
    pc_put_raw(&b, hash, sizeof hash);
    pc_put_u64(&b, 16040);
    pc_put_str(&b, "x86_64");
    pc_put_i32(&b, 2000);
    pc_put_u64(&b, 77);
    pc_put_u8(&b, 0);
    s_msg(emit, "w_enrol", PC_W_ENROL, &b);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b); /* determinants */
    pc_cx_det d[2] = {{.vt = 2, .pos = 1, .from = 3, .seq = 1, .epoch = 1},
                      {.vt = 2, .pos = 2, .from = 4, .seq = 1, .epoch = 1}};
    pc_cx_dets_encode(&b, d, 2);
    uint8_t codec[2048];
    codec[0] = 0xF1 + 0; /* which & 3 == 1: determinants (0xF1 & 3 == 1) */
    memcpy(codec + 1, b.data, b.len);
    emit("codec_dets", codec, b.len + 1);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b); /* a direct message, and a credit */
    pc_cx_msg m = {.from = 3, .to = 2, .seq = 1, .from_epoch = 1, .to_epoch = 1};
    pc_cx_encode(&b, &m, d, 1);
    codec[0] = 0xF4; /* & 3 == 0 */
    memcpy(codec + 1, b.data, b.len);
    emit("codec_msg", codec, b.len + 1);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b);
    pc_cx_credit_encode(&b, 3, 2, 9);
    memcpy(codec + 1, b.data, b.len);
    emit("codec_credit", codec, b.len + 1);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b); /* the engine's part of an image */
    pc_cx_image im;
    memset(&im, 0, sizeof im);
    im.vt = 2;
    im.epoch = 1;
    im.consumed = 4;
    pc_cx_image_encode(&b, &im);
    codec[0] = 0xF2; /* & 3 == 2 */
    memcpy(codec + 1, b.data, b.len);
    emit("codec_image", codec, b.len + 1);
    pc_wbuf_free(&b);
}
