/* test_bytes.c - the project's one byte codec (runtime/bytes.h): every
 * field round-trips little-endian at fixed places and through the writer
 * and the reader; a read past the end, a wrong string, a count the bytes
 * cannot hold or a field failed by its reader makes the reader bad with a
 * reason and every later read fail; a payload with bytes left over is not
 * done; a writer whose allocation fails (a size no buffer can reach) keeps
 * its error and writes nothing more.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <setjmp.h>

#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "lev_errors.h"

/* The reader is bad, names `what`, and stays bad. */
static void s_assert_bad(rt_rbuf *r, const char *what)
{
    assert_true(r->bad);
    assert_non_null(r->why);
    if (!strstr(r->why, what))
        fail_msg("expected \"%s\" in \"%s\"", what, r->why);
    size_t off = r->off;
    assert_int_equal(rt_get_u8(r), 0);
    assert_true(rt_get_u64(r) == 0);
    const void *p = &off;
    assert_false(rt_get_raw(r, &p, 0));
    assert_null(p);
    assert_int_equal(r->off, off);
    assert_false(rt_rbuf_done(r));
    assert_non_null(rt_rbuf_why(r));
}

static void t_fixed(void **state)
{
    (void)state;
    uint8_t b[8];
    rt_le16_put(b, 0x0201);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[1], 2);
    assert_int_equal(rt_le16_get(b), 0x0201);
    rt_le32_put(b, 0x04030201u);
    assert_memory_equal(b, "\x01\x02\x03\x04", 4);
    assert_int_equal(rt_le32_get(b), 0x04030201u);
    rt_le64_put(b, 0x0807060504030201ull);
    assert_memory_equal(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    assert_true(rt_le64_get(b) == 0x0807060504030201ull);
    rt_le64_put(b, UINT64_MAX);
    assert_true(rt_le64_get(b) == UINT64_MAX);
    assert_int_equal(rt_le32_get(b), UINT32_MAX);
}

static void t_roundtrip(void **state)
{
    (void)state;
    rt_wbuf w;
    rt_wbuf_init(&w);
    rt_put_u8(&w, 0xAB);
    rt_put_u16(&w, 0xBEEF);
    rt_put_u32(&w, 0xDEADBEEFu);
    rt_put_i32(&w, -7);
    rt_put_u64(&w, 0x0123456789ABCDEFull);
    rt_put_raw(&w, "xyz", 3);
    rt_put_raw(&w, NULL, 0);
    rt_put_blob(&w, "\0\1\2", 3);
    rt_put_str(&w, "hello");
    rt_put_str(&w, NULL);
    rt_put_u32(&w, 2); /* a count of 2 entries of 8 bytes */
    rt_put_u64(&w, 1);
    rt_put_u64(&w, 2);
    assert_int_equal(w.err, 0);
    assert_int_equal(w.len, 1 + 2 + 4 + 4 + 8 + 3 + 7 + 9 + 4 + 4 + 16);
    assert_memory_equal(w.data, "\xAB\xEF\xBE\xEF\xBE\xAD\xDE", 7);

    rt_rbuf r;
    rt_rbuf_init(&r, w.data, w.len);
    assert_int_equal(rt_get_u8(&r), 0xAB);
    assert_int_equal(rt_get_u16(&r), 0xBEEF);
    assert_int_equal(rt_get_u32(&r), 0xDEADBEEFu);
    assert_int_equal(rt_get_i32(&r), -7);
    assert_true(rt_get_u64(&r) == 0x0123456789ABCDEFull);
    const void *p;
    size_t n;
    assert_true(rt_get_raw(&r, &p, 3));
    assert_memory_equal(p, "xyz", 3);
    assert_true(rt_get_blob(&r, &p, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(p, "\0\1\2", 3);
    char s[8];
    assert_true(rt_get_str(&r, s, sizeof s));
    assert_string_equal(s, "hello");
    char *d = rt_get_strdup(&r, 10);
    assert_string_equal(d, "");
    free(d);
    assert_int_equal(rt_get_count(&r, 8), 2);
    assert_true(rt_get_u64(&r) == 1);
    assert_false(rt_rbuf_done(&r)); /* one entry left */
    assert_string_equal(rt_rbuf_why(&r), "trailing bytes after the payload");
    assert_true(rt_get_u64(&r) == 2);
    assert_true(rt_rbuf_done(&r));
    assert_null(rt_rbuf_why(&r));
    rt_wbuf_free(&w);
    assert_null(w.data);
    assert_int_equal(w.len, 0);
}

/* Every short read fails at once, names the truncation, and moves nothing. */
static void t_bounds(void **state)
{
    (void)state;
    static const uint8_t b[16] = {5, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};
    rt_rbuf r;
    for (size_t len = 0; len < 8; len++) {
        rt_rbuf_init(&r, b, len);
        if (len < 2) {
            assert_int_equal(rt_get_u16(&r), 0);
        } else if (len < 4) {
            assert_int_equal(rt_get_u32(&r), 0);
        } else {
            assert_true(rt_get_u64(&r) == 0);
        }
        assert_int_equal(r.off, 0);
        s_assert_bad(&r, "truncated");
    }
    const void *p;
    size_t n = 9;
    rt_rbuf_init(&r, b, 8); /* a blob of 5 bytes, 4 there */
    assert_false(rt_get_blob(&r, &p, &n));
    assert_int_equal(n, 0);
    s_assert_bad(&r, "truncated");

    char s[8] = "x";
    rt_rbuf_init(&r, b, 9); /* "abcde" does not fit in 4 + NUL */
    assert_false(rt_get_str(&r, s, 5));
    assert_string_equal(s, "");
    s_assert_bad(&r, "too long");
    rt_rbuf_init(&r, b, 9);
    assert_null(rt_get_strdup(&r, 4));
    s_assert_bad(&r, "too long");

    static const uint8_t nul[] = {3, 0, 0, 0, 'a', 0, 'b'};
    rt_rbuf_init(&r, nul, sizeof nul);
    assert_false(rt_get_str(&r, s, sizeof s));
    s_assert_bad(&r, "NUL");

    /* a count of 3 entries of 4 bytes, and 8 bytes after it */
    static const uint8_t cnt[12] = {3, 0, 0, 0};
    rt_rbuf_init(&r, cnt, sizeof cnt);
    assert_int_equal(rt_get_count(&r, 4), 0);
    assert_int_equal(r.off, 0);
    s_assert_bad(&r, "count");
    rt_rbuf_init(&r, cnt, sizeof cnt);
    assert_int_equal(rt_get_count(&r, 3), 0); /* 3 x 3 > 8 */
    s_assert_bad(&r, "count");
    rt_rbuf_init(&r, cnt, sizeof cnt);
    assert_int_equal(rt_get_count(&r, 2), 3);
    assert_false(r.bad);

    rt_rbuf_init(&r, NULL, 5); /* no bytes: length 0 */
    assert_true(rt_rbuf_done(&r));
    assert_false(rt_get_raw(&r, &p, 1));
    s_assert_bad(&r, "truncated");
}

/* A field read whole but refused fails the reader; the first reason stays. */
static void t_fail(void **state)
{
    (void)state;
    static const uint8_t b[4] = {9};
    rt_rbuf r;
    rt_rbuf_init(&r, b, sizeof b);
    assert_int_equal(rt_get_u8(&r), 9);
    rt_rbuf_fail(&r, "flag out of range");
    rt_rbuf_fail(&r, "second reason");
    s_assert_bad(&r, "flag out of range");
    assert_int_equal(r.off, 1);
    rt_rbuf_init(&r, b, sizeof b);
    assert_int_equal(rt_get_u32(&r), 9);
    assert_true(rt_rbuf_done(&r));
    assert_int_equal(rt_get_u8(&r), 0); /* past the end: done no longer */
    s_assert_bad(&r, "truncated");
}

/* A writer that cannot grow keeps its error and ignores later puts. */
static void t_alloc_failure(void **state)
{
    (void)state;
    static const char x = 'x';
    rt_wbuf w;
    rt_wbuf_init(&w);
    rt_put_u32(&w, 1);
    assert_int_equal(w.err, 0);
    rt_put_raw(&w, &x, SIZE_MAX - 2); /* no buffer reaches that: LEV_ENOMEM, nothing read */
    assert_int_equal(w.err, LEV_ENOMEM);
    assert_int_equal(w.len, 4);
    rt_put_u64(&w, 2);
    rt_put_str(&w, "later");
    rt_put_blob(&w, &x, (size_t)UINT32_MAX + 1);
    assert_int_equal(w.err, LEV_ENOMEM);
    assert_int_equal(w.len, 4);
    assert_int_equal(rt_le32_get(w.data), 1);
    rt_wbuf_free(&w);

    rt_wbuf_init(&w); /* a blob above 4 GiB cannot be written: LEV_ERANGE */
    rt_put_blob(&w, &x, (size_t)UINT32_MAX + 1);
    assert_int_equal(w.err, LEV_ERANGE);
    rt_put_u8(&w, 1);
    assert_int_equal(w.len, 0);
    rt_wbuf_free(&w);
    rt_wbuf_free(&w); /* freeing twice is harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_fixed), cmocka_unit_test(t_roundtrip),     cmocka_unit_test(t_bounds),
        cmocka_unit_test(t_fail),  cmocka_unit_test(t_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
