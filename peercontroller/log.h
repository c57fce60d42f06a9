/* log.h - the peer controller's log (log.c): one readable line per event
 * on standard error, with a time, the process, a level and the message:
 *   2026-11-26T02:00:00.123Z levpeer[4242] WARN  peer tcp://... suspected
 * The level comes from pc_log_set_level (levpeer --log-level) or the
 * environment (LEV_LOG=debug|info|warn|error); info by default.
 *
 * Hostile input: every byte of a message that is not printable ASCII or
 * well-formed UTF-8 text (controls, C1 controls, stray bytes) is written
 * as \xNN, and a backslash as \\, so no line can be forged or a terminal
 * driven by what the network sent. A call site writes at most
 * PC_LOG_SITE_LINES lines per PC_LOG_WINDOW_MS (errors always, debug
 * lines always when asked for), and with pc_log_src at most
 * PC_LOG_SRC_LINES per source: the others are counted and told in one
 * WARN line ("N more lines like ... dropped") when the window ends.
 */
#ifndef PC_LOG_H
#define PC_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum pc_log_level { PC_LOG_DEBUG = 0, PC_LOG_INFO, PC_LOG_WARN, PC_LOG_ERROR } pc_log_level;

#define PC_LOG_WINDOW_MS 10000
#define PC_LOG_SITE_LINES 100 /* per call site and window */
#define PC_LOG_SRC_LINES 10   /* per call site, source and window (pc_log_src) */

/* Sets the level below which lines are dropped. */
void pc_log_set_level(pc_log_level l);

/* Parses "debug", "info", "warn" or "error"; -1 for anything else. */
int pc_log_parse_level(const char *s);

/* True when lines of level l are written. */
int pc_log_on(pc_log_level l);

/* Writes one line (a newline is added); thread-safe. */
void pc_log(pc_log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* As pc_log, for a line that what `src` sent caused (a peer's endpoint,
 * a client's routing id: anything the network names), limited per source. */
void pc_log_src(pc_log_level l, const char *src, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Tells the counts of lines dropped in the windows that have ended (all
 * of them, whatever their window, when `all`: at exit). levpeer calls it
 * from its tick. */
void pc_log_tick(bool all);

/* Escapes n bytes of in into out (cap bytes, NUL-terminated) as lines
 * are; returns the bytes written. */
size_t pc_log_escape(char *out, size_t cap, const char *in, size_t n);

/* For tests: where lines go (default 2), and the clock of the windows
 * (NULL: the monotonic clock), which also forgets every count. */
void pc_log_set_fd(int fd);
void pc_log_set_clock(uint64_t (*now_ms)(void));

#endif
