/* test_wire.c - the wire codec (wire.c) and the executor channel (chan.c).
 * Headers round-trip and every kind of bad header is refused naming why;
 * the payload reader refuses truncated fields, long strings, NUL bytes and
 * trailing bytes, and survives random bytes (a fixed seed, on malloc'd
 * buffers of exact size, so ASan sees any read past the end); the
 * C_STATS_REPLY payload has its documented layout. The channel
 * carries whole records one by one and many at once, large payloads
 * against a concurrent reader, and closes with a reason on a bad header,
 * a payload past its limit and an end in the middle of a record; sending
 * to a closed peer fails without SIGPIPE; descriptors passed along
 * records come with them. The byte buffer (buf.c) keeps
 * its bytes while a reference is left, shared, moved or dropped on another
 * thread, and gives wrapped bytes back exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf.h"
#include "chan.h"
#include "lev_client.h"
#include "lev_errors.h"
#include "patch.h"
#include "pc_test.h"
#include "wire.h"

#define LIMIT_MS 20000 /* bound of any wait for a record */

/* ===================================================================
 * Header
 * =================================================================== */

static void t_hdr_roundtrip(void **state)
{
    (void)state;
    pc_hdr h = pc_hdr_make(PC_X_IMAGE, 0x0102030405060708ull, UINT64_MAX, 0xFFFFFFFEu, 1ull << 63);
    h.len = 123456;
    uint8_t b[PC_HDR_LEN];
    pc_hdr_encode(&h, b);
    assert_memory_equal(b, "LEVW", 4);         /* the magic reads "LEVW" on the wire */
    assert_int_equal(b[6], PC_X_IMAGE & 0xFF); /* little-endian */
    pc_hdr d;
    const char *why = "unset";
    assert_int_equal(pc_hdr_decode(b, sizeof b, &d, &why), 0);
    assert_int_equal(d.magic, PC_WIRE_MAGIC);
    assert_int_equal(d.version, PC_WIRE_VERSION);
    assert_int_equal(d.type, PC_X_IMAGE);
    assert_true(d.vc == h.vc && d.vt == h.vt && d.seq == h.seq);
    assert_int_equal(d.epoch, h.epoch);
    assert_int_equal(d.len, 123456);
    assert_string_equal(pc_type_name(PC_X_CRASH), "X_CRASH");
    assert_string_equal(pc_type_name(0x7777), "?");
}

/* Decoding n bytes of b must fail with err and a reason containing what. */
static void s_bad_hdr(const uint8_t *b, size_t n, int err, const char *what)
{
    uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
    assert_non_null(copy);
    memcpy(copy, b, n);
    pc_hdr d;
    const char *why = NULL;
    assert_int_equal(pc_hdr_decode(copy, n, &d, &why), err);
    assert_non_null(why);
    if (!strstr(why, what))
        fail_msg("expected \"%s\" in \"%s\"", what, why);
    free(copy);
}

static void t_hdr_bad(void **state)
{
    (void)state;
    pc_hdr h = pc_hdr_make(PC_X_RUN, 1, 2, 3, 4);
    uint8_t b[PC_HDR_LEN + 1];
    pc_hdr_encode(&h, b);
    b[PC_HDR_LEN] = 0;
    s_bad_hdr(b, PC_HDR_LEN - 1, LEV_EINVAL, "not 40 bytes");
    s_bad_hdr(b, PC_HDR_LEN + 1, LEV_EINVAL, "not 40 bytes");
    s_bad_hdr(b, 0, LEV_EINVAL, "not 40 bytes");
    pc_hdr d;
    assert_int_equal(pc_hdr_decode(NULL, PC_HDR_LEN, &d, NULL), LEV_EINVAL);

    uint8_t bad[PC_HDR_LEN];
    memcpy(bad, b, PC_HDR_LEN);
    bad[0] ^= 1;
    s_bad_hdr(bad, PC_HDR_LEN, LEV_EINVAL, "magic");
    memcpy(bad, b, PC_HDR_LEN);
    bad[4] = 2; /* version 2 */
    s_bad_hdr(bad, PC_HDR_LEN, LEV_EVERSION, "version");
    uint16_t unknown[] = {0, 0x0100, 0x0107, 0x0600, 0x0624, 0xFFFF};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        memcpy(bad, b, PC_HDR_LEN);
        bad[6] = (uint8_t)unknown[i];
        bad[7] = (uint8_t)(unknown[i] >> 8);
        s_bad_hdr(bad, PC_HDR_LEN, LEV_EINVAL, "unknown message type");
    }
}

/* ===================================================================
 * Payloads
 * =================================================================== */

static void t_payload_roundtrip(void **state)
{
    (void)state;
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_u8(&w, 0xAB);
    pc_put_u32(&w, 0xDEADBEEFu);
    pc_put_i32(&w, -5);
    pc_put_u64(&w, 0x1122334455667788ull);
    pc_put_raw(&w, "0123456789abcdef0123456789abcdef", PC_HASH_LEN);
    pc_put_blob(&w, "\0\1\2", 3);
    pc_put_str(&w, "pc_spin");
    pc_put_str(&w, NULL);
    assert_int_equal(w.err, 0);

    pc_rbuf r;
    pc_rbuf_init(&r, w.data, w.len);
    assert_int_equal(pc_get_u8(&r), 0xAB);
    assert_int_equal(pc_get_u32(&r), 0xDEADBEEFu);
    assert_int_equal(pc_get_i32(&r), -5);
    assert_true(pc_get_u64(&r) == 0x1122334455667788ull);
    const void *p;
    size_t n;
    assert_true(pc_get_raw(&r, &p, PC_HASH_LEN));
    assert_memory_equal(p, "0123456789abcdef0123456789abcdef", PC_HASH_LEN);
    assert_true(pc_get_blob(&r, &p, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(p, "\0\1\2", 3);
    char s[16];
    assert_true(pc_get_str(&r, s, sizeof s));
    assert_string_equal(s, "pc_spin");
    char *e = pc_get_strdup(&r, 10);
    assert_non_null(e);
    assert_string_equal(e, "");
    free(e);
    assert_true(pc_rbuf_done(&r));
    pc_wbuf_free(&w);
}

/* C_STATS_REPLY's payload has the layout wire.h gives (four u32, five
 * u64, little-endian) and reads back; one byte short, it is bad. */
static void t_stats_payload(void **state)
{
    (void)state;
    lev_vc_stats st = {1, 2, 3, 4, 5, 6, 7, 8, 9}, back;
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_vc_stats(&w, &st);
    assert_int_equal(w.err, 0);
    assert_int_equal(w.len, 4 * 4 + 5 * 8);
    for (int i = 0; i < 4; i++)
        assert_int_equal(w.data[4 * i], i + 1);
    for (int i = 0; i < 5; i++)
        assert_int_equal(w.data[16 + 8 * i], i + 5);
    pc_rbuf r;
    pc_rbuf_init(&r, w.data, w.len);
    assert_true(pc_get_vc_stats(&r, &back));
    assert_true(pc_rbuf_done(&r));
    assert_memory_equal(&back, &st, sizeof st);
    pc_rbuf_init(&r, w.data, w.len - 1);
    assert_false(pc_get_vc_stats(&r, &back));
    pc_wbuf_free(&w);
}

/* A reader over a malloc'd copy of n bytes of b (freed by s_rfree). */
static pc_rbuf s_reader(const void *b, size_t n)
{
    void *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n)
        memcpy(copy, b, n);
    pc_rbuf r;
    pc_rbuf_init(&r, copy, n);
    return r;
}

static void s_rfree(pc_rbuf *r) { free((void *)r->p); }

/* The reader is bad, says `what`, and stays bad. */
static void s_assert_bad(pc_rbuf *r, const char *what)
{
    assert_true(r->bad);
    assert_non_null(r->why);
    if (!strstr(r->why, what))
        fail_msg("expected \"%s\" in \"%s\"", what, r->why);
    assert_int_equal(pc_get_u8(r), 0);
    assert_false(pc_rbuf_done(r));
}

static void t_payload_bad(void **state)
{
    (void)state;
    static const uint8_t bytes[16] = {5, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
    pc_rbuf r = s_reader(bytes, 3);
    assert_int_equal(pc_get_u32(&r), 0);
    s_assert_bad(&r, "truncated");
    s_rfree(&r);

    r = s_reader(bytes, 7);
    assert_true(pc_get_u64(&r) == 0);
    s_assert_bad(&r, "truncated");
    s_rfree(&r);

    const void *p = NULL;
    size_t n = 99;
    r = s_reader(bytes, 8); /* blob of 5 bytes, 4 there */
    assert_false(pc_get_blob(&r, &p, &n));
    assert_int_equal(n, 0);
    s_assert_bad(&r, "truncated");
    s_rfree(&r);

    char s[8] = "x";
    r = s_reader(bytes, 8);
    assert_false(pc_get_str(&r, s, sizeof s));
    assert_string_equal(s, "");
    s_assert_bad(&r, "truncated");
    s_rfree(&r);

    r = s_reader(bytes, 9); /* "abcde" does not fit in 4 + NUL */
    assert_false(pc_get_str(&r, s, 5));
    s_assert_bad(&r, "too long");
    s_rfree(&r);
    r = s_reader(bytes, 9);
    assert_null(pc_get_strdup(&r, 4));
    s_assert_bad(&r, "too long");
    s_rfree(&r);

    static const uint8_t nul[] = {3, 0, 0, 0, 'a', 0, 'b'};
    r = s_reader(nul, sizeof nul);
    assert_false(pc_get_str(&r, s, sizeof s));
    s_assert_bad(&r, "NUL");
    s_rfree(&r);
    r = s_reader(nul, sizeof nul);
    assert_null(pc_get_strdup(&r, 100));
    s_assert_bad(&r, "NUL");
    s_rfree(&r);

    r = s_reader(bytes, 10); /* a string, then a byte too many */
    char *dup = pc_get_strdup(&r, 100);
    assert_string_equal(dup, "abcde");
    free(dup);
    assert_false(r.bad);
    assert_false(pc_rbuf_done(&r));
    s_rfree(&r);

    r = s_reader(NULL, 0);
    assert_true(pc_rbuf_done(&r));
    assert_false(pc_get_raw(&r, &p, 1));
    s_assert_bad(&r, "truncated");
    s_rfree(&r);
}

/* xorshift64*: the fuzz loop's fixed random sequence. */
static uint64_t s_rand(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1Dull;
}

/* Random bytes read as headers and as payloads by random sequences of
 * reads: nothing crashes or reads out of bounds, a reader that went bad
 * stays bad, and one that did not never passed its end. */
static void t_fuzz(void **state)
{
    (void)state;
    uint64_t seed = 0x5eed5eed12345678ull;
    int decoded = 0;
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(s_rand(&seed) % 64);
        uint8_t *b = malloc(n ? n : 1);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)s_rand(&seed);
        if (n && round % 3 == 0)
            b[0] = (uint8_t)(s_rand(&seed) % 8); /* short blob lengths are likely */
        if (n >= 8 && round % 5 == 0)
            memcpy(b, "LEVW\1\0\4\6", 8); /* a valid prefix: deeper header checks */

        pc_hdr h;
        const char *why = NULL;
        int rc = pc_hdr_decode(b, n, &h, &why);
        assert_true(rc == 0 || ((rc == LEV_EINVAL || rc == LEV_EVERSION) && why));
        decoded += rc == 0;

        pc_rbuf r;
        pc_rbuf_init(&r, b, n);
        for (int k = 0; k < 8; k++) {
            const void *p;
            size_t len;
            char s[8];
            switch (s_rand(&seed) % 7) {
            case 0:
                pc_get_u8(&r);
                break;
            case 1:
                pc_get_u32(&r);
                break;
            case 2:
                pc_get_u64(&r);
                break;
            case 3:
                if (pc_get_blob(&r, &p, &len) && len)
                    assert_true((const uint8_t *)p + len <= b + n);
                break;
            case 4:
                pc_get_str(&r, s, sizeof s);
                break;
            case 5:
                free(pc_get_strdup(&r, 16));
                break;
            default:
                pc_get_raw(&r, &p, (size_t)(s_rand(&seed) % 16));
            }
            assert_true(r.off <= n);
            if (r.bad)
                assert_non_null(r.why);
        }
        free(b);
    }
    assert_true(decoded > 0); /* the valid prefix reached a whole decode */
}

/* ===================================================================
 * Channel
 * =================================================================== */

/* Two channels over a socketpair. */
static void s_pair(pc_chan **a, pc_chan **b, size_t max_len)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    *a = pc_chan_new(sv[0], max_len);
    *b = pc_chan_new(sv[1], max_len);
    assert_non_null(*a);
    assert_non_null(*b);
}

/* Waits (bounded) for the next record on c. */
static int s_recv(pc_chan *c, pc_hdr *h, uint8_t **payload, const char **why)
{
    return pc_test_recv(c, h, payload, why, LIMIT_MS);
}

static void t_chan_records(void **state)
{
    (void)state;
    pc_chan *a, *b;
    s_pair(&a, &b, 0);
    /* Several records sent before any is read: one read brings them all. */
    for (uint64_t i = 0; i < 50; i++) {
        pc_wbuf w;
        pc_wbuf_init(&w);
        pc_put_u64(&w, i * 7);
        pc_put_str(&w, "x");
        assert_int_equal(
            pc_chan_send_buf(a, pc_hdr_make(PC_X_REPORT, 0, i, 1, i), i % 5 ? &w : NULL), 0);
        pc_wbuf_free(&w);
    }
    for (uint64_t i = 0; i < 50; i++) {
        pc_hdr h;
        uint8_t *p = NULL;
        assert_int_equal(s_recv(b, &h, &p, NULL), 1);
        assert_int_equal(h.type, PC_X_REPORT);
        assert_true(h.vt == i && h.seq == i);
        if (i % 5) {
            assert_int_equal(h.len, 8 + 4 + 1);
            pc_rbuf r;
            pc_rbuf_init(&r, p, h.len);
            assert_true(pc_get_u64(&r) == i * 7);
        } else {
            assert_int_equal(h.len, 0);
            assert_null(p);
        }
        free(p);
    }
    pc_hdr h;
    uint8_t *p;
    assert_int_equal(pc_chan_recv(b, &h, &p, 0, NULL), 0); /* nothing more, no wait */

    /* A record from parts; blocking receive. */
    struct iovec parts[3] = {{"ab", 2}, {NULL, 0}, {"cde", 3}};
    assert_int_equal(pc_chan_send(b, pc_hdr_make(PC_X_DONE, 0, 9, 2, 0), parts, 3), 0);
    assert_int_equal(pc_chan_recv(a, &h, &p, 1, NULL), 1);
    assert_int_equal(h.len, 5);
    assert_memory_equal(p, "abcde", 5);
    free(p);
    pc_chan_destroy(&a);
    pc_chan_destroy(&a); /* harmless */
    pc_chan_destroy(&b);
    assert_null(b);
}

typedef struct s_big {
    pc_chan *c;
    size_t len;
    int n;
    int rc;
} s_big;

/* Sends n records of len bytes (byte i of record k is (i + k) & 0xFF). */
static void *s_big_sender(void *arg)
{
    s_big *s = arg;
    uint8_t *b = malloc(s->len);
    for (int k = 0; k < s->n && b; k++) {
        for (size_t i = 0; i < s->len; i++)
            b[i] = (uint8_t)(i + (size_t)k);
        struct iovec part = {b, s->len};
        s->rc |= pc_chan_send(s->c, pc_hdr_make(PC_X_IMAGE, 0, 5, 1, (uint64_t)k), &part, 1);
    }
    free(b);
    return NULL;
}

/* Records put off go in one write at the flush, or first when a record
 * is sent at once, in order; a large one is not put off; try_send sends
 * nothing while records are put off or the socket is full, and a whole
 * record otherwise. */
static void t_chan_later(void **state)
{
    (void)state;
    pc_chan *a, *b;
    s_pair(&a, &b, 0);
    pc_hdr h;
    uint8_t *p = NULL;
    struct iovec part = {"later", 5};
    for (uint64_t i = 1; i <= 3; i++)
        assert_int_equal(pc_chan_send_later(a, pc_hdr_make(PC_X_IN, 0, 2, 1, i), &part, 1), 0);
    assert_int_equal(pc_chan_recv(b, &h, &p, 0, NULL), 0); /* nothing written yet */
    assert_int_equal(pc_chan_try_send(a, pc_hdr_make(PC_X_IN, 0, 2, 1, 9), &part, 1), 0);
    assert_int_equal(pc_chan_send(a, pc_hdr_make(PC_X_ACK, 0, 2, 1, 4), NULL, 0), 0);
    for (uint64_t i = 1; i <= 4; i++) {
        assert_int_equal(s_recv(b, &h, &p, NULL), 1);
        assert_true(h.seq == i);
        assert_int_equal(h.type, i < 4 ? PC_X_IN : PC_X_ACK);
        if (i < 4)
            assert_memory_equal(p, "later", 5);
        free(p);
        p = NULL;
    }
    assert_int_equal(pc_chan_send_later(a, pc_hdr_make(PC_X_IN, 0, 2, 1, 5), &part, 1), 0);
    assert_int_equal(pc_chan_flush(a), 0);
    assert_int_equal(s_recv(b, &h, &p, NULL), 1);
    assert_true(h.seq == 5);
    free(p);
    p = NULL;
    /* a record too large to put off goes at once */
    size_t big = 200u << 10;
    uint8_t *blob = calloc(1, big);
    assert_non_null(blob);
    struct iovec bp = {blob, big};
    assert_int_equal(pc_chan_send_later(a, pc_hdr_make(PC_X_IMAGE, 0, 2, 1, 6), &bp, 1), 0);
    assert_int_equal(s_recv(b, &h, &p, NULL), 1);
    assert_int_equal(h.len, big);
    free(p);
    p = NULL;
    /* try_send: whole records until the socket is full, then 0 (records
     * this small go whole or not at all) */
    int sent = 0, rc;
    struct iovec sp = {blob, 24};
    while ((rc = pc_chan_try_send(a, pc_hdr_make(PC_X_OUT, 0, 2, 1, 7), &sp, 1)) == 1 &&
           sent < 1000000)
        sent++;
    assert_int_equal(rc, 0);
    assert_true(sent > 0 && sent < 1000000);
    for (int k = 0; k < sent; k++) {
        assert_int_equal(s_recv(b, &h, &p, NULL), 1);
        assert_int_equal(h.len, 24);
        free(p);
        p = NULL;
    }
    assert_int_equal(pc_chan_recv(b, &h, &p, 0, NULL), 0);
    free(blob);
    pc_chan_destroy(&b);
    assert_int_equal(pc_chan_send_later(a, pc_hdr_make(PC_X_IN, 0, 2, 1, 8), &part, 1), 0);
    assert_int_equal(pc_chan_flush(a), LEV_EPEER); /* the other end is gone */
    assert_int_equal(pc_chan_flush(NULL), LEV_EINVAL);
    pc_chan_destroy(&a);
}

/* The descriptor's inode. */
static ino_t s_ino(int fd)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    return st.st_ino;
}

/* A descriptor passed along a record comes with it, in order, among
 * records put off and large ones; the sender keeps its own; a channel
 * given more descriptors than records take dies with a reason. */
static void t_chan_fd(void **state)
{
    (void)state;
    pc_chan *a, *b;
    s_pair(&a, &b, 0);
    int pipes[2];
    assert_int_equal(pipe(pipes), 0);
    pc_hdr h;
    uint8_t *p = NULL;
    struct iovec part = {"slot", 4};
    assert_int_equal(pc_chan_take_fd(b), -1);
    assert_int_equal(pc_chan_send_later(a, pc_hdr_make(PC_X_IN, 0, 2, 1, 1), &part, 1), 0);
    assert_int_equal(
        pc_chan_send_fd(a, pc_hdr_make(PC_X_IMAGE_SLOT, 0, 2, 1, 2), &part, 1, pipes[0]), 0);
    assert_int_equal(
        pc_chan_send_fd(a, pc_hdr_make(PC_X_IMAGE_SLOT, 0, 2, 1, 3), &part, 1, pipes[1]), 0);
    for (uint64_t i = 1; i <= 3; i++) {
        assert_int_equal(s_recv(b, &h, &p, NULL), 1);
        assert_true(h.seq == i);
        free(p);
        p = NULL;
    }
    int r0 = pc_chan_take_fd(b), r1 = pc_chan_take_fd(b);
    assert_true(r0 >= 0 && r1 >= 0 && r0 != pipes[0] && r1 != pipes[1]);
    assert_true(s_ino(r0) == s_ino(pipes[0]) && s_ino(r1) == s_ino(pipes[1]));
    assert_int_equal(pc_chan_take_fd(b), -1);
    assert_int_equal(write(r1, "x", 1), 1); /* the same pipe: what one end writes... */
    char c = 0;
    assert_int_equal(read(pipes[0], &c, 1), 1); /* ...the sender's own end reads */
    assert_int_equal(c, 'x');
    close(r0);
    close(r1);
    /* descriptors no one takes: the ninth kills the channel */
    for (uint64_t i = 0; i < 9; i++)
        assert_int_equal(
            pc_chan_send_fd(a, pc_hdr_make(PC_X_IMAGE_SLOT, 0, 2, 1, 10 + i), &part, 1, pipes[0]),
            0);
    const char *why = NULL;
    int rc;
    int got = 0;
    while ((rc = s_recv(b, &h, &p, &why)) == 1 && got < 9) {
        free(p);
        p = NULL;
        got++;
    }
    assert_int_equal(rc, LEV_EPEER);
    assert_true(got == 8);
    assert_non_null(strstr(why, "more descriptors"));
    close(pipes[0]);
    close(pipes[1]);
    pc_chan_destroy(&a);
    pc_chan_destroy(&b); /* closes the descriptors it still holds */
}

/* A peer that closes with records of ours unread (a reset on a Unix
 * socket) has closed the channel, as one that read everything. */
static void t_chan_reset(void **state)
{
    (void)state;
    pc_chan *a, *b;
    s_pair(&a, &b, 0);
    struct iovec part = {"unread", 6};
    assert_int_equal(pc_chan_send(a, pc_hdr_make(PC_X_OUT, 0, 2, 1, 1), &part, 1), 0);
    pc_chan_destroy(&b);
    pc_hdr h;
    uint8_t *p = NULL;
    const char *why = NULL;
    assert_int_equal(s_recv(a, &h, &p, &why), LEV_EPEER);
    assert_string_equal(why, "the other end closed the channel");
    pc_chan_destroy(&a);
}

/* An image patch makes the new image again from the old one, whatever
 * changed (blocks here and there, a shorter or longer image, the last
 * block short); a patch over half the image is not made; and a damaged
 * patch, or one applied to another base, is refused with a reason. */
static void t_patch(void **state)
{
    (void)state;
    uint64_t x = 0x853c49e6748fea9bull;
    for (int round = 0; round < 200; round++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t la = 1 + (size_t)(x % (64 * PC_PATCH_BLOCK));
        size_t lb = round % 4 ? la : 1 + (size_t)((x >> 20) % (64 * PC_PATCH_BLOCK));
        uint8_t *a = malloc(la), *b = malloc(lb);
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < la; i++)
            a[i] = (uint8_t)(i * 31 + (size_t)round);
        for (size_t i = 0; i < lb; i++)
            b[i] = i < la ? a[i] : (uint8_t)(i * 7);
        int changes = (int)(x >> 40) % 6;
        for (int c = 0; c < changes; c++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[x % lb] ^= 0x5a;
        }
        pc_buf *ba = pc_buf_new(a, la), *bb = pc_buf_new(b, lb);
        pc_buf *patch = pc_patch_make(ba, bb);
        if (patch) {
            size_t nblocks = (lb + PC_PATCH_BLOCK - 1) / PC_PATCH_BLOCK;
            assert_true(pc_buf_len(patch) <= 4 + 4 * nblocks + lb / 2);
            const char *why = NULL;
            pc_buf *made = pc_patch_apply(ba, pc_buf_data(patch), pc_buf_len(patch), lb, &why);
            if (!made)
                fail_msg("round %d: %s", round, why);
            assert_int_equal(pc_buf_len(made), lb);
            assert_memory_equal(pc_buf_data(made), b, lb);
            pc_buf_drop(&made);
        } else {
            assert_true(lb != la || changes > 0); /* unchanged images always patch */
        }
        pc_buf_drop(&patch);
        pc_buf_drop(&ba);
        pc_buf_drop(&bb);
        free(a);
        free(b);
    }
    /* damaged patches */
    size_t len = 3 * PC_PATCH_BLOCK + 100;
    uint8_t *img = calloc(1, len), *other = calloc(1, len);
    assert_non_null(img);
    assert_non_null(other);
    other[PC_PATCH_BLOCK + 5] = 1;
    other[len - 1] = 2;
    pc_buf *base = pc_buf_new(img, len), *next = pc_buf_new(other, len);
    pc_buf *patch = pc_patch_make(base, next);
    assert_non_null(patch);
    const uint8_t *pp = pc_buf_data(patch);
    size_t pl = pc_buf_len(patch);
    assert_int_equal(pl, 4 + 2 * 4 + PC_PATCH_BLOCK + 100); /* blocks 1 and 3 */
    const char *why = NULL;
    assert_null(pc_patch_apply(base, pp, pl - 1, len, &why));
    assert_string_equal(why, "the patch is shorter than its blocks");
    uint8_t *bad = malloc(pl + 1);
    assert_non_null(bad);
    memcpy(bad, pp, pl);
    bad[pl] = 0;
    assert_null(pc_patch_apply(base, bad, pl + 1, len, &why));
    assert_string_equal(why, "bytes after the patch's blocks");
    memcpy(bad, pp, pl);
    rt_le32_put(bad + 4, 3); /* blocks 3, 3 */
    assert_null(pc_patch_apply(base, bad, pl, len, &why));
    assert_string_equal(why, "block numbers out of order or past the image");
    rt_le32_put(bad + 4, 1);
    rt_le32_put(bad + 8, 9); /* past the image */
    assert_null(pc_patch_apply(base, bad, pl, len, &why));
    assert_string_equal(why, "block numbers out of order or past the image");
    rt_le32_put(bad, 1000); /* more blocks than the patch holds */
    assert_null(pc_patch_apply(base, bad, pl, len, &why));
    assert_non_null(why);
    free(bad);
    /* a base shorter than what the patch leaves as it was */
    pc_buf *small = pc_buf_new(img, PC_PATCH_BLOCK);
    assert_null(pc_patch_apply(small, pp, pl, len, &why));
    assert_string_equal(why, "a block left as it was lies past the base image");
    assert_null(pc_patch_apply(base, pp, pl, (uint64_t)1 << 41, &why));
    pc_buf_drop(&small);
    pc_buf_drop(&patch);
    /* a change over half the image: no patch */
    memset(other, 7, len);
    pc_buf *most = pc_buf_new(other, len);
    assert_null(pc_patch_make(base, most));
    pc_buf_drop(&most);
    pc_buf_drop(&base);
    pc_buf_drop(&next);
    free(img);
    free(other);
}

static void t_chan_large(void **state)
{
    (void)state;
    pc_chan *a, *b;
    s_pair(&a, &b, 0);
    s_big s = {.c = a, .len = 3u << 20, .n = 3};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, s_big_sender, &s), 0);
    for (int k = 0; k < s.n; k++) {
        pc_hdr h;
        uint8_t *p = NULL;
        assert_int_equal(s_recv(b, &h, &p, NULL), 1);
        assert_int_equal(h.len, s.len);
        assert_true(h.seq == (uint64_t)k);
        for (size_t i = 0; i < s.len; i += 4093)
            assert_int_equal(p[i], (uint8_t)(i + (size_t)k));
        free(p);
    }
    pthread_join(th, NULL);
    assert_int_equal(s.rc, 0);
    pc_chan_destroy(&a);
    pc_chan_destroy(&b);
}

/* Raw bytes written on a socket reach a channel on its other end. */
static void s_raw_pair(int *raw, pc_chan **c, size_t max_len)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    *raw = sv[0];
    *c = pc_chan_new(sv[1], max_len);
    assert_non_null(*c);
}

/* The channel dies with a reason containing `what`, and stays dead. */
static void s_assert_dies(pc_chan *c, const char *what)
{
    pc_hdr h;
    uint8_t *p = NULL;
    const char *why = NULL;
    assert_int_equal(s_recv(c, &h, &p, &why), LEV_EPEER);
    assert_null(p);
    assert_non_null(why);
    if (!strstr(why, what))
        fail_msg("expected \"%s\" in \"%s\"", what, why);
    assert_int_equal(pc_chan_recv(c, &h, &p, 0, &why), LEV_EPEER);
}

/* A channel (payloads up to max_len) fed n raw bytes dies saying what. */
static void s_fed_dies(size_t max_len, const uint8_t *b, size_t n, const char *what)
{
    int raw;
    pc_chan *c;
    s_raw_pair(&raw, &c, max_len);
    assert_int_equal(write(raw, b, n), (ssize_t)n);
    s_assert_dies(c, what);
    close(raw);
    pc_chan_destroy(&c);
}

static void t_chan_broken(void **state)
{
    (void)state;
    int raw;
    pc_chan *c;
    uint8_t b[PC_HDR_LEN + 8] = {0};
    pc_hdr h = pc_hdr_make(PC_X_RUN, 0, 2, 1, 0);

    /* A bad magic; an unknown type; a payload past the limit. */
    pc_hdr_encode(&h, b);
    b[1] ^= 0xFF;
    s_fed_dies(0, b, PC_HDR_LEN, "magic");
    h.type = 0x0666;
    pc_hdr_encode(&h, b);
    s_fed_dies(0, b, PC_HDR_LEN, "unknown message type");
    h.type = PC_X_RUN;
    h.len = 101;
    pc_hdr_encode(&h, b);
    s_fed_dies(100, b, PC_HDR_LEN, "limit of 100");

    /* A record within the limit, then the end in the middle of the next. */
    s_raw_pair(&raw, &c, 100);
    h.len = 8;
    pc_hdr_encode(&h, b);
    memcpy(b + PC_HDR_LEN, "12345678", 8);
    assert_int_equal(write(raw, b, sizeof b), (ssize_t)sizeof b);
    assert_int_equal(write(raw, b, PC_HDR_LEN + 3), PC_HDR_LEN + 3);
    close(raw);
    pc_hdr got;
    uint8_t *p = NULL;
    assert_int_equal(s_recv(c, &got, &p, NULL), 1);
    assert_memory_equal(p, "12345678", 8);
    free(p);
    s_assert_dies(c, "middle of a record");
    pc_chan_destroy(&c);

    /* A clean end; sending to it fails without SIGPIPE. */
    s_raw_pair(&raw, &c, 0);
    close(raw);
    s_assert_dies(c, "closed the channel");
    assert_int_equal(pc_chan_send_buf(c, h, NULL), LEV_EPEER);
    pc_chan_destroy(&c);
}

/* pc_msg_check: every payload read whole against its type's fields. */
static int s_check(uint16_t type, const pc_wbuf *b, size_t bulk, const char **why)
{
    pc_hdr h = pc_hdr_make(type, 1, 2, 1, 0);
    return pc_msg_check(&h, b ? b->data : NULL, b ? b->len : 0, bulk, why);
}

static void t_msg_check(void **state)
{
    (void)state;
    const char *why = NULL;
    uint8_t hash[PC_HASH_LEN] = {0};
    /* a whole ENROL passes; each shorter prefix and one byte more fail */
    pc_wbuf b;
    pc_wbuf_init(&b);
    pc_put_str(&b, "tcp://127.0.0.1:1");
    pc_put_raw(&b, hash, sizeof hash);
    pc_put_u64(&b, 100);
    pc_put_str(&b, "x86_64");
    pc_put_i32(&b, 2000);
    pc_put_u64(&b, 42);
    pc_put_u8(&b, PC_ENROL_DIRECT);
    pc_put_u64(&b, 1 << 30); /* the VC's limits */
    pc_put_u64(&b, 1 << 24);
    pc_put_u64(&b, 1 << 20);
    assert_int_equal(s_check(PC_W_ENROL, &b, 0, &why), 0);
    for (size_t cut = 0; cut < b.len; cut++) {
        pc_hdr h = pc_hdr_make(PC_W_ENROL, 1, 0, 0, 0);
        assert_int_equal(pc_msg_check(&h, b.data, cut, 0, &why), LEV_EINVAL);
        assert_non_null(why);
    }
    pc_put_u8(&b, 0);
    assert_int_equal(s_check(PC_W_ENROL, &b, 0, &why), LEV_EINVAL);
    assert_string_equal(why, "trailing bytes after the payload");
    pc_wbuf_free(&b);

    /* bulk frames: required, optional, refused */
    pc_wbuf_init(&b);
    pc_put_str(&b, "tcp://127.0.0.1:1");
    pc_put_u64(&b, 7);
    assert_int_equal(s_check(PC_H_HOLD, &b, 10, &why), 0);
    assert_int_equal(s_check(PC_H_HOLD, &b, 0, &why), LEV_EINVAL);
    assert_int_equal(s_check(PC_H_HELD, &b, 10, &why), LEV_EINVAL);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b);
    pc_put_i32(&b, 0);
    pc_put_u64(&b, 3);
    assert_int_equal(s_check(PC_W_STOPPED, &b, 0, &why), 0);
    assert_int_equal(s_check(PC_W_STOPPED, &b, 5, &why), 0);
    pc_wbuf_free(&b);

    /* an optional last field: W_ACK with no byte or one, not two */
    assert_int_equal(s_check(PC_W_ACK, NULL, 0, &why), 0);
    pc_wbuf_init(&b);
    pc_put_u8(&b, 1);
    assert_int_equal(s_check(PC_W_ACK, &b, 0, &why), 0);
    pc_put_u8(&b, 1);
    assert_int_equal(s_check(PC_W_ACK, &b, 0, &why), LEV_EINVAL);
    pc_wbuf_free(&b);

    /* lists: a count the bytes cannot hold, a string with a NUL */
    pc_wbuf_init(&b);
    pc_put_u32(&b, 1000);
    pc_put_str(&b, "a");
    assert_int_equal(s_check(PC_W_HOLDERS, &b, 0, &why), LEV_EINVAL);
    pc_wbuf_free(&b);
    pc_wbuf_init(&b);
    pc_put_u32(&b, 1);
    pc_put_blob(&b, "a\0b", 3);
    assert_int_equal(s_check(PC_W_HOLDERS, &b, 0, &why), LEV_EINVAL);
    assert_string_equal(why, "a string holds a NUL byte");
    pc_wbuf_free(&b);

    /* W_LOST's list of incarnations, whole and one entry short */
    pc_wbuf_init(&b);
    pc_put_u64(&b, 2);
    pc_put_i32(&b, 11);
    pc_put_u32(&b, 2);
    pc_put_u64(&b, 2);
    pc_put_u32(&b, 1);
    pc_put_u64(&b, 3);
    pc_put_u32(&b, 1);
    assert_int_equal(s_check(PC_W_LOST, &b, 0, &why), 0);
    pc_hdr h = pc_hdr_make(PC_W_LOST, 1, 0, 0, 0);
    assert_int_equal(pc_msg_check(&h, b.data, b.len - 12, 0, &why), LEV_EINVAL);
    pc_wbuf_free(&b);

    /* a type with no payload refuses one; membership payloads are their
     * codec's; an unknown type is refused */
    pc_wbuf_init(&b);
    pc_put_u8(&b, 9);
    assert_int_equal(s_check(PC_W_FENCE, &b, 0, &why), LEV_EINVAL);
    assert_int_equal(s_check(PC_M_GOSSIP, &b, 0, &why), 0);
    assert_int_equal(s_check(0x7777, &b, 0, &why), LEV_EINVAL);
    pc_wbuf_free(&b);
}

/* pc_buf: a copy, sharing and moving, and wrapped bytes given back once,
 * by the last reference, dropped on another thread. */
static void s_count_done(void *ctx) { (*(int *)ctx)++; }

static void *s_drop_thread(void *arg)
{
    pc_buf *b = arg;
    pc_buf_drop(&b);
    return NULL;
}

static void t_buf(void **state)
{
    (void)state;
    pc_buf *empty = NULL;
    assert_int_equal(pc_buf_len(empty), 0);
    assert_null(pc_buf_data(empty));
    pc_buf_drop(&empty);
    assert_null(pc_buf_ref(NULL));

    char text[] = "image bytes";
    pc_buf *a = pc_buf_new(text, sizeof text);
    assert_non_null(a);
    text[0] = 'X'; /* a copy */
    assert_int_equal(pc_buf_len(a), sizeof text);
    assert_memory_equal(pc_buf_data(a), "image bytes", sizeof text);
    pc_buf *shared = pc_buf_ref(a);
    assert_ptr_equal(shared, a);
    pc_buf *moved = pc_buf_take(&a);
    assert_null(a);
    pc_buf_drop(&moved);
    assert_null(moved);
    assert_memory_equal(pc_buf_data(shared), "image bytes", sizeof text);
    pc_buf_drop(&shared);

    int done = 0;
    static const uint8_t bytes[64];
    pc_buf *w = pc_buf_wrap(bytes, sizeof bytes, s_count_done, &done);
    assert_non_null(w);
    assert_ptr_equal(pc_buf_data(w), bytes);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, s_drop_thread, pc_buf_ref(w)), 0);
    pc_buf_drop(&w);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(done, 1);

    pc_msg m = {.body = pc_buf_new("b", 1), .bulk = NULL};
    pc_msg_close(&m);
    assert_null(m.body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_hdr_roundtrip),
        cmocka_unit_test(t_hdr_bad),
        cmocka_unit_test(t_payload_roundtrip),
        cmocka_unit_test(t_stats_payload),
        cmocka_unit_test(t_payload_bad),
        cmocka_unit_test(t_fuzz),
        cmocka_unit_test(t_chan_records),
        cmocka_unit_test(t_chan_later),
        cmocka_unit_test(t_chan_fd),
        cmocka_unit_test(t_chan_reset),
        cmocka_unit_test(t_patch),
        cmocka_unit_test(t_chan_large),
        cmocka_unit_test(t_chan_broken),
        cmocka_unit_test(t_msg_check),
        cmocka_unit_test(t_buf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
