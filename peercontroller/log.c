/* log.c - the peer controller's log lines (log.h): formatted whole into
 * one buffer and written with one write(2), so lines of several threads
 * and processes never interleave.
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static _Atomic int s_level = -1; /* -1: not read from the environment yet */

int pc_log_parse_level(const char *s)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; s && i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

void pc_log_set_level(pc_log_level l) { atomic_store(&s_level, (int)l); }

int pc_log_on(pc_log_level l)
{
    int lv = atomic_load(&s_level);
    if (lv < 0) {
        lv = pc_log_parse_level(getenv("LEV_LOG"));
        if (lv < 0)
            lv = PC_LOG_INFO;
        atomic_store(&s_level, lv);
    }
    return (int)l >= lv;
}

void pc_log(pc_log_level l, const char *fmt, ...)
{
    static const char *const tags[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
    if (!pc_log_on(l))
        return;
    char line[1024];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ levpeer[%d] %s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(tv.tv_usec / 1000), (int)getpid(), tags[l & 3]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(2, line, len);
    (void)w;
}
