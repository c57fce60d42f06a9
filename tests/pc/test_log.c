/* test_log.c - the peer controller's log against hostile input (log.h):
 * bytes that are not printable text are escaped, so no line can be forged
 * and no terminal driven; a flood of lines from one source, or from one
 * call site, is cut to its limit per window, and what was dropped is told
 * in one line when the window ends. The windows run on a clock the test
 * moves; the lines go to a file the test reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <setjmp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

static uint64_t s_ms;
static uint64_t s_clock(void) { return s_ms; }
static FILE *s_out;

static int s_setup(void **state)
{
    (void)state;
    s_out = tmpfile();
    assert_non_null(s_out);
    pc_log_set_fd(fileno(s_out));
    pc_log_set_level(PC_LOG_DEBUG);
    s_ms = 1000;
    pc_log_set_clock(s_clock);
    return 0;
}

static int s_teardown(void **state)
{
    (void)state;
    pc_log_set_fd(2);
    pc_log_set_clock(NULL);
    fclose(s_out);
    return 0;
}

/* Everything written so far (malloc'd). */
static char *s_read(void)
{
    fflush(s_out);
    long n = ftell(s_out);
    char *buf = calloc(1, (size_t)n + 1);
    assert_non_null(buf);
    rewind(s_out);
    assert_int_equal(fread(buf, 1, (size_t)n, s_out), (size_t)n);
    return buf;
}

static int s_count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void s_escaped(const char *in, size_t n, const char *want)
{
    char out[256];
    size_t len = pc_log_escape(out, sizeof out, in, n);
    assert_int_equal(len, strlen(want));
    assert_string_equal(out, want);
}

/* Controls, C1 controls, stray and malformed UTF-8, overlong forms and
 * surrogates are written as \xNN; a backslash as \\; printable ASCII and
 * well-formed text in other scripts as they are; nothing past the room. */
static void test_escape(void **state)
{
    (void)state;
    s_escaped("plain text 123", 14, "plain text 123");
    s_escaped("a\nb\rc\td", 7, "a\\x0ab\\x0dc\\x09d");
    s_escaped("\x1b[2J", 4, "\\x1b[2J");
    s_escaped("back\\slash", 10, "back\\\\slash");
    s_escaped("caf\xc3\xa9 \xf0\x9f\x98\x80", 10, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    s_escaped("\xc2\x9b"
              "31m",
              5, "\\xc2\\x9b31m"); /* C1: CSI */
    s_escaped("\xff\xfe", 2, "\\xff\\xfe");
    s_escaped("\xc0\xaf", 2, "\\xc0\\xaf");          /* overlong '/' */
    s_escaped("\xed\xa0\x80", 3, "\\xed\\xa0\\x80"); /* a surrogate */
    s_escaped("\xe2\x82", 2, "\\xe2\\x82");          /* cut short */
    s_escaped("nul\0here", 8, "nul\\x00here");
    char small[6];
    assert_int_equal(pc_log_escape(small, sizeof small, "\n\n\n", 3), 4);
    assert_string_equal(small, "\\x0a"); /* a whole escape or none */
}

/* A line that carries network bytes stays one line, its controls escaped. */
static void test_line_injection(void **state)
{
    (void)state;
    pc_log(PC_LOG_WARN, "cannot send image to %s",
           "tcp://x\n2026-01-01T00:00:00.000Z levpeer[1] "
           "ERROR forged\x1b[0m");
    char *s = s_read();
    assert_int_equal(s_count(s, "\n"), 1);
    assert_non_null(strstr(s, "\\x0a2026-01-01"));
    assert_non_null(strstr(s, "\\x1b[0m"));
    free(s);
}

/* One source floods one call site: PC_LOG_SRC_LINES lines, then nothing
 * until the window ends, then one line telling how many were dropped; a
 * second source of the same site is not held back by the first. */
static void test_source_limit(void **state)
{
    (void)state;
    for (int i = 0; i < 5000; i++)
        pc_log_src(PC_LOG_WARN, "evil", "dropped a message from %s: %d", "evil", i);
    pc_log_src(PC_LOG_WARN, "good", "dropped a message from %s: %d", "good", 1);
    pc_log_tick(false); /* the window has not ended: nothing told yet */
    char *s = s_read();
    assert_int_equal(s_count(s, "from evil:"), PC_LOG_SRC_LINES);
    assert_int_equal(s_count(s, "from good:"), 1);
    assert_null(strstr(s, "more lines like"));
    free(s);
    s_ms += PC_LOG_WINDOW_MS;
    pc_log_tick(false);
    s = s_read();
    assert_int_equal(s_count(s, "more lines like"), 1);
    assert_non_null(strstr(s, "4990 more lines like \"dropped a message from %s: %d\" from evil"));
    free(s);
    /* a new window: the source may write again */
    pc_log_src(PC_LOG_WARN, "evil", "dropped a message from %s: %d", "evil", -1);
    s = s_read();
    assert_non_null(strstr(s, "from evil: -1"));
    free(s);
}

/* A call site without a source: PC_LOG_SITE_LINES lines a window, the
 * rest told once the next line of that site comes after the window;
 * errors are never held back. */
static void test_site_limit(void **state)
{
    (void)state;
    for (int i = 0; i < 3 * PC_LOG_SITE_LINES; i++) {
        pc_log(PC_LOG_INFO, "busy line %d", i);
        pc_log(PC_LOG_ERROR, "error line %d", i);
    }
    char *s = s_read();
    assert_int_equal(s_count(s, "busy line"), PC_LOG_SITE_LINES);
    assert_int_equal(s_count(s, "error line"), 3 * PC_LOG_SITE_LINES);
    free(s);
    s_ms += PC_LOG_WINDOW_MS + 1;
    pc_log(PC_LOG_INFO, "busy line %d", -1);
    s = s_read();
    char want[96];
    snprintf(want, sizeof want, "%d more lines like \"busy line %%d\" dropped",
             2 * PC_LOG_SITE_LINES);
    assert_non_null(strstr(s, want));
    assert_non_null(strstr(s, "busy line -1"));
    free(s);
}

/* At exit every count is told, whatever its window. */
static void test_tell_all(void **state)
{
    (void)state;
    for (int i = 0; i < PC_LOG_SRC_LINES + 7; i++)
        pc_log_src(PC_LOG_WARN, "10.0.0.1", "refused %s", "W_DONE");
    pc_log_tick(true);
    char *s = s_read();
    assert_non_null(strstr(s, "7 more lines like \"refused %s\" from 10.0.0.1 dropped"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test_setup_teardown(test_line_injection, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_source_limit, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_site_limit, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown(test_tell_all, s_setup, s_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
