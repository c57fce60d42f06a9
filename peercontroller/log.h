/* log.h - the peer controller's log (log.c): one readable line per event
 * on standard error, with a time, the process, a level and the message:
 *   2026-11-26T02:00:00.123Z levpeer[4242] WARN  peer tcp://... suspected
 * The level comes from pc_log_set_level (levpeer --log-level) or the
 * environment (LEV_LOG=debug|info|warn|error); info by default.
 */
#ifndef PC_LOG_H
#define PC_LOG_H

typedef enum pc_log_level { PC_LOG_DEBUG = 0, PC_LOG_INFO, PC_LOG_WARN, PC_LOG_ERROR } pc_log_level;

/* Sets the level below which lines are dropped. */
void pc_log_set_level(pc_log_level l);

/* Parses "debug", "info", "warn" or "error"; -1 for anything else. */
int pc_log_parse_level(const char *s);

/* True when lines of level l are written. */
int pc_log_on(pc_log_level l);

/* Writes one line (a newline is added); thread-safe. */
void pc_log(pc_log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
