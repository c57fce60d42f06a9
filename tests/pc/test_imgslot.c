/* test_imgslot.c - images lent in shared memory (imgslot.c), both sides
 * in one process: a slot lent by the pool is an envelope (head, image,
 * tail) that the daemon's mapping shows byte for byte; its buffer going
 * (on any thread) gives it back, and it is reused at the same address
 * without its memfd again; slots grow for a larger image or tail, and
 * the daemon maps them again from their memfd, sent again; a full pool lends nothing; and the
 * daemon refuses, naming why, every record that does not fit: malformed, a memfd claimed but
 * missing or not claimed, a slot past the bound or never given its memfd, a slot lent while held,
 * bounds outside the slot, a slot of another size without its memfd, a descriptor that is not a
 * sealed memfd, a memfd smaller than the slot.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "bytes.h"
#include "envelope.h"
#include "imgslot.h"
#include "lev_errors.h"

/* The X_IMAGE_SLOT payload of a lend. */
static size_t s_payload(const pc_slot_lend *l, uint8_t *b)
{
    pc_slot_lend_encode(l, b);
    return PC_SLOT_LEND_LEN;
}

/* Fills a slot with n bytes of pattern `seed` and a tail of tn bytes,
 * lends it and has the daemon take it; checks the envelope it shows. */
static pc_buf *s_lend_take(pc_slots *s, pc_slotmaps *m, size_t n, size_t tn, uint8_t seed,
                           pc_slot_lend *l)
{
    uint8_t *img = pc_slots_alloc(s, n);
    assert_non_null(img);
    int i = pc_slots_find(s, img);
    assert_true(i >= 0);
    for (size_t k = 0; k < n; k++)
        img[k] = (uint8_t)(seed + k * 7);
    uint8_t *chan0 = malloc(tn ? tn : 1);
    assert_non_null(chan0);
    memset(chan0, seed ^ 0x5A, tn);
    size_t tlen = 0;
    uint8_t *tail = pc_env_tail(chan0, tn, NULL, 0, &tlen);
    assert_non_null(tail);
    assert_int_equal(pc_slots_finish(s, i, n, tail, tlen), 0);
    pc_slots_lend(s, i, l);
    uint8_t pay[PC_SLOT_LEND_LEN];
    const char *why = NULL;
    int fd = l->fd >= 0 ? dup(l->fd) : -1; /* as SCM_RIGHTS gives the daemon its own */
    pc_buf *b = pc_slotmaps_take(m, pay, s_payload(l, pay), fd, &why);
    if (!b)
        fail_msg("refused: %s", why);
    const uint8_t *env = pc_buf_data(b);
    assert_int_equal(pc_buf_len(b), PC_ENV_HEAD + n + tlen);
    const uint8_t *chan = NULL, *im = NULL, *cx = NULL;
    size_t clen = 0, ilen = 0, cxlen = 1;
    assert_true(pc_env_split(env, pc_buf_len(b), &chan, &clen, &im, &ilen, &cx, &cxlen, &why));
    assert_int_equal(cxlen, 0);
    assert_int_equal(ilen, n);
    assert_int_equal(clen, tn);
    for (size_t k = 0; k < n; k += 4093)
        assert_int_equal(im[k], (uint8_t)(seed + k * 7));
    assert_int_equal(im[n - 1], (uint8_t)(seed + (n - 1) * 7));
    if (tn)
        assert_memory_equal(chan, chan0, tn);
    free(tail);
    free(chan0);
    return b;
}

/* Gives back what the daemon no longer holds: exactly `want` slots. */
static void s_give_back(pc_slots *s, pc_slotmaps *m, int want)
{
    uint32_t ids[PC_SLOTS_MAX];
    int n = pc_slotmaps_returned(m, ids, PC_SLOTS_MAX);
    assert_int_equal(n, want);
    for (int i = 0; i < n; i++)
        assert_int_equal(pc_slots_back(s, ids[i]), 0);
}

static void t_lend_reuse(void **state)
{
    (void)state;
    pc_slots *s = pc_slots_new();
    pc_slotmaps *m = pc_slotmaps_new();
    assert_non_null(s);
    assert_non_null(m);
    pc_slot_lend l1, l2;
    pc_buf *b = s_lend_take(s, m, 100000, 300, 1, &l1);
    assert_true(l1.fd >= 0); /* the first time, the memfd goes along */
    s_give_back(s, m, 0);    /* held: nothing to give back */
    /* a second image while the first is held: another slot */
    pc_buf *c = s_lend_take(s, m, 5000, 0, 2, &l2);
    assert_true(l2.slot != l1.slot && l2.fd >= 0);
    pc_buf_drop(&b);
    s_give_back(s, m, 1);
    assert_int_equal(pc_slots_back(s, l1.slot), LEV_EINVAL); /* not lent any more */
    /* the slot given back is reused: the same address, no memfd again */
    pc_slot_lend l3;
    pc_buf *d = s_lend_take(s, m, 90000, 10, 3, &l3);
    assert_true(l3.slot == l1.slot && l3.fd == -1 && l3.size == l1.size);
    pc_buf_drop(&c);
    pc_buf_drop(&d);
    s_give_back(s, m, 2);
    /* a failed capture, an image dropped before it went: free again */
    uint8_t *img = pc_slots_alloc(s, 10);
    int i = pc_slots_find(s, img);
    pc_slots_release(s, i);
    assert_true(pc_slots_alloc(s, 10) == img);
    pc_slots_release(s, i);
    assert_int_equal(pc_slots_find(s, (uint8_t *)&i), -1);
    pc_slotmaps_destroy(&m);
    pc_slots_destroy(&s);
}

/* A larger image or tail grows a slot, keeping what it holds; the daemon
 * maps the grown slot again; a slot left far too large is made anew. */
static void t_grow(void **state)
{
    (void)state;
    pc_slots *s = pc_slots_new();
    pc_slotmaps *m = pc_slotmaps_new();
    pc_slot_lend l1, l2, l3;
    pc_buf *b = s_lend_take(s, m, 1000, 10, 4, &l1);
    pc_buf_drop(&b);
    s_give_back(s, m, 1);
    b = s_lend_take(s, m, (3u << 20) + 5, 10, 5, &l2); /* the only free slot grows */
    assert_true(l2.slot == l1.slot && l2.size > l1.size && l2.fd >= 0); /* mapped anew */
    pc_buf_drop(&b);
    s_give_back(s, m, 1);
    size_t big_tail = PC_SLOT_SLACK * 3; /* past the room made for it */
    b = s_lend_take(s, m, l2.size - PC_SLOT_IMAGE_OFF - PC_SLOT_SLACK, big_tail, 6, &l3);
    assert_true(l3.slot == l1.slot && l3.size > l2.size && l3.fd >= 0);
    pc_buf_drop(&b);
    s_give_back(s, m, 1);
    /* one huge image, then small ones: the slot is made anew, small */
    pc_slot_lend l4, l5;
    b = s_lend_take(s, m, 80u << 20, 0, 7, &l4);
    assert_true(l4.slot == l1.slot && l4.size > (80u << 20) && l4.fd >= 0);
    pc_buf_drop(&b);
    s_give_back(s, m, 1);
    b = s_lend_take(s, m, 1000, 10, 8, &l5);
    assert_true(l5.slot == l1.slot && l5.size < (1u << 20) + PC_SLOT_SLACK + 4096 && l5.fd >= 0);
    pc_buf_drop(&b);
    s_give_back(s, m, 1);
    pc_slotmaps_destroy(&m);
    pc_slots_destroy(&s);
}

/* Every slot lent: the pool lends nothing more (images go as bytes). */
static void t_full(void **state)
{
    (void)state;
    pc_slots *s = pc_slots_new();
    uint8_t *got[PC_SLOTS_MAX];
    for (int i = 0; i < PC_SLOTS_MAX; i++) {
        got[i] = pc_slots_alloc(s, 64);
        assert_non_null(got[i]);
    }
    assert_null(pc_slots_alloc(s, 64));
    pc_slots_release(s, pc_slots_find(s, got[7]));
    assert_true(pc_slots_alloc(s, 64) == got[7]);
    assert_null(pc_slots_alloc(s, SIZE_MAX - 10)); /* no room for that at all */
    pc_slots_destroy(&s);
}

static void *s_drop_main(void *arg)
{
    pc_buf *b = arg;
    pc_buf_drop(&b);
    return NULL;
}

/* A buffer dropped on another thread gives its slot back; the daemon's
 * table may go first, the mapping stays as long as the buffer. */
static void t_other_thread(void **state)
{
    (void)state;
    pc_slots *s = pc_slots_new();
    pc_slotmaps *m = pc_slotmaps_new();
    pc_slot_lend l;
    pc_buf *b = s_lend_take(s, m, 70000, 5, 7, &l);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, s_drop_main, b), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    s_give_back(s, m, 1);
    b = s_lend_take(s, m, 70000, 5, 8, &l);
    pc_slotmaps_destroy(&m);
    const uint8_t *env = pc_buf_data(b);
    assert_int_equal(rt_le32_get(env), PC_ENV_MAGIC); /* still mapped */
    pc_buf_drop(&b);
    pc_slots_destroy(&s);
}

/* The daemon refuses record r (n bytes, descriptor fd) with a reason
 * containing what. */
static void s_refused(pc_slotmaps *m, const uint8_t *r, size_t n, int fd, const char *what)
{
    const char *why = NULL;
    pc_buf *b = pc_slotmaps_take(m, r, n, fd, &why);
    if (b)
        fail_msg("taken, expected a refusal naming \"%s\"", what);
    assert_non_null(why);
    if (!strstr(why, what))
        fail_msg("expected \"%s\" in \"%s\"", what, why);
}

/* An envelope's three parts come back as they went in; a tail whose
 * causal length or whose length in the head does not fit is refused. */
static void t_envelope_parts(void **state)
{
    (void)state;
    const uint8_t img[] = "image bytes", chan[] = "chan", cx[] = "causal";
    size_t tlen = 0, elen = 0;
    uint8_t *tail = pc_env_tail(chan, 4, cx, 6, &tlen);
    assert_non_null(tail);
    uint8_t *env = pc_env_make(tail, tlen, img, 11, &elen);
    assert_non_null(env);
    const uint8_t *c = NULL, *i = NULL, *x = NULL;
    size_t clen = 0, ilen = 0, xlen = 0;
    const char *why = NULL;
    assert_true(pc_env_split(env, elen, &c, &clen, &i, &ilen, &x, &xlen, &why));
    assert_int_equal(ilen, 11);
    assert_memory_equal(i, img, 11);
    assert_int_equal(clen, 4);
    assert_memory_equal(c, chan, 4);
    assert_int_equal(xlen, 6);
    assert_memory_equal(x, cx, 6);
    rt_le32_put(env + elen - 4, 11); /* the causal state longer than the tail */
    assert_false(pc_env_split(env, elen, &c, &clen, &i, &ilen, &x, &xlen, &why));
    assert_non_null(strstr(why, "causal"));
    rt_le32_put(env + elen - 4, 6);
    rt_le32_put(env + 4, (uint32_t)elen); /* a tail longer than the envelope */
    assert_false(pc_env_split(env, elen, &c, &clen, &i, &ilen, &x, &xlen, &why));
    rt_le32_put(env + 4, 3); /* too short to hold its causal length */
    assert_false(pc_env_split(env, elen, &c, &clen, &i, &ilen, &x, &xlen, &why));
    rt_le32_put(env, 0x3245564Cu); /* the format before causal states: refused */
    assert_false(pc_env_split(env, elen, &c, &clen, &i, &ilen, &x, &xlen, &why));
    assert_non_null(strstr(why, "magic"));
    free(env);
    free(tail);
}

static void t_refusals(void **state)
{
    (void)state;
    pc_slots *s = pc_slots_new();
    pc_slotmaps *m = pc_slotmaps_new();
    uint8_t pay[PC_SLOT_LEND_LEN];
    s_refused(m, pay, 10, -1, "malformed");
    pc_slot_lend l = {.slot = 3, .fd = -1, .size = 1 << 20, .off = 0, .len = 10};
    s_refused(m, pay, s_payload(&l, pay), -1, "never given its memfd");
    s_refused(m, pay, s_payload(&l, pay), dup(0),
              "names no memfd and one came"); /* fd not claimed */
    l.fd = 0;
    s_refused(m, pay, s_payload(&l, pay), -1, "and none came");
    l.slot = PC_SLOTS_MAX;
    s_refused(m, pay, s_payload(&l, pay), dup(0), "past the bound");
    l.slot = 3;
    int pipes[2];
    assert_int_equal(pipe(pipes), 0);
    s_refused(m, pay, s_payload(&l, pay), pipes[0], "not a memfd sealed");
    close(pipes[1]);
    int loose = memfd_create("loose", MFD_CLOEXEC); /* no seal: it could shrink */
    assert_true(loose >= 0);
    assert_int_equal(ftruncate(loose, 1 << 20), 0);
    s_refused(m, pay, s_payload(&l, pay), loose, "not a memfd sealed");

    /* a real slot, then records about it that do not fit */
    pc_buf *b = s_lend_take(s, m, 1000, 0, 9, &l);
    pc_slot_lend bad = l;
    bad.fd = -1;
    s_refused(m, pay, s_payload(&bad, pay), -1, "lent again while its last image is held");
    pc_buf_drop(&b);
    s_give_back(s, m, 1);
    bad.len = bad.size; /* from off, past the end */
    s_refused(m, pay, s_payload(&bad, pay), -1, "do not fit");
    bad.len = 0;
    s_refused(m, pay, s_payload(&bad, pay), -1, "do not fit");
    bad = l;
    bad.fd = -1;
    bad.size = l.size * 4; /* another size, without the memfd to map it */
    bad.len = 10;
    s_refused(m, pay, s_payload(&bad, pay), -1, "came without its memfd");
    int small = memfd_create("small", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(small >= 0);
    assert_int_equal(ftruncate(small, 1 << 20), 0);
    assert_int_equal(fcntl(small, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    bad.fd = 0;
    bad.slot = 5;
    s_refused(m, pay, s_payload(&bad, pay), small, "smaller than"); /* 1 MiB for 4 */
    /* the slot still works after refusals */
    b = s_lend_take(s, m, 1000, 0, 10, &l);
    pc_buf_drop(&b);
    pc_slotmaps_destroy(&m);
    pc_slots_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_lend_reuse), cmocka_unit_test(t_grow),
        cmocka_unit_test(t_full),       cmocka_unit_test(t_other_thread),
        cmocka_unit_test(t_refusals),   cmocka_unit_test(t_envelope_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
