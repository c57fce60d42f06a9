/* log.c - the peer controller's log lines (log.h): formatted whole into
 * one buffer and written with one write(2), so lines of several threads
 * and processes never interleave; every byte that is not printable text
 * escaped, so that what a message from the network carries cannot forge
 * a line or drive a terminal; and the lines of one call site (and, for
 * pc_log_src, of one source) limited per window, the rest counted and
 * told in one line, so that a flood of bad input cannot fill a disk.
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define S_MSG_MAX 1024  /* bytes of a message before escaping */
#define S_LINE_MAX 2048 /* bytes of a written line, escapes included */
#define S_KEYS 128      /* (call site, source) pairs whose lines are counted */

static _Atomic int s_level = -1; /* -1: not read from the environment yet */
static _Atomic int s_fd = 2;

int pc_log_parse_level(const char *s)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; s && i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

void pc_log_set_level(pc_log_level l) { atomic_store(&s_level, (int)l); }

void pc_log_set_fd(int fd) { atomic_store(&s_fd, fd); }

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

/* ===================================================================
 * Escaping
 * =================================================================== */

/* The length (2 to 4) of the well-formed UTF-8 sequence at p (n bytes
 * left) encoding a code point that is not a control (U+0080 to U+009F),
 * or 0. */
static size_t s_utf8(const unsigned char *p, size_t n)
{
    size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (!len || len > n || p[0] > 0xF4)
        return 0;
    uint32_t cp = p[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp < 0xA0)
        return 0;
    return len;
}

size_t pc_log_escape(char *out, size_t cap, const char *in, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)in;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t u = p[i] >= 0x80 ? s_utf8(p + i, n - i) : 0;
        if (u) { /* text in another script: kept */
            if (o + u >= cap)
                break;
            memcpy(out + o, p + i, u);
            o += u;
            i += u;
            continue;
        }
        if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '\\') {
            if (o + 1 >= cap)
                break;
            out[o++] = (char)p[i++];
            continue;
        }
        if (o + 4 >= cap)
            break;
        out[o++] = '\\';
        if (p[i] == '\\') {
            out[o++] = '\\';
        } else {
            out[o++] = 'x';
            out[o++] = hex[p[i] >> 4];
            out[o++] = hex[p[i] & 15];
        }
        i++;
    }
    if (cap)
        out[o] = 0;
    return o;
}

/* ===================================================================
 * Limits
 * =================================================================== */

typedef struct s_key {
    const char *site; /* the call's format string: one per call site */
    uint64_t src;     /* hash of the source (0: none) */
    char src_text[64];
    uint64_t window_ms; /* start of its window */
    uint32_t lines;     /* written in the window */
    uint64_t dropped;   /* not written in the window */
    uint64_t used;
} s_key;

static pthread_mutex_t s_mu = PTHREAD_MUTEX_INITIALIZER;
static s_key s_keys[S_KEYS];
static uint64_t s_clock_uses;
static _Atomic uint64_t s_pending; /* lines dropped and not told yet */
static uint64_t (*s_clock)(void);

void pc_log_set_clock(uint64_t (*now_ms)(void))
{
    pthread_mutex_lock(&s_mu);
    s_clock = now_ms;
    memset(s_keys, 0, sizeof s_keys);
    atomic_store(&s_pending, 0);
    pthread_mutex_unlock(&s_mu);
}

static uint64_t s_now_ms(void)
{
    if (s_clock)
        return s_clock();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t s_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h | 1; /* never 0 */
}

/* Writes a prepared message (text escaped here) with its time and tag. */
static void s_write(pc_log_level l, const char *msg, size_t n)
{
    static const char *const tags[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
    char line[S_LINE_MAX];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int h = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ levpeer[%d] %s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(tv.tv_usec / 1000), (int)getpid(), tags[l & 3]);
    size_t len = (size_t)h + pc_log_escape(line + h, sizeof line - (size_t)h - 1, msg, n);
    line[len++] = '\n';
    ssize_t w = write(atomic_load(&s_fd), line, len);
    (void)w;
}

/* Under s_mu: the summary of what k dropped, written, and its count reset. */
static void s_tell_dropped(s_key *k, uint64_t now)
{
    if (!k->dropped)
        return;
    char msg[S_MSG_MAX], site[48];
    pc_log_escape(site, sizeof site, k->site, strlen(k->site));
    int n = snprintf(msg, sizeof msg, "%llu more lines like \"%s\"%s%s dropped in %llu ms",
                     (unsigned long long)k->dropped, site, k->src ? " from " : "",
                     k->src ? k->src_text : "", (unsigned long long)(now - k->window_ms));
    s_write(PC_LOG_WARN, msg, n < 0 ? 0 : (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    atomic_fetch_sub(&s_pending, k->dropped);
    k->dropped = 0;
}

/* Under s_mu: whether a line of (site, src) may be written now. */
static bool s_admit(pc_log_level l, const char *site, const char *src)
{
    if (l == PC_LOG_ERROR || (l == PC_LOG_DEBUG && !src))
        return true; /* errors, and the debug tracing asked for, always */
    uint64_t now = s_now_ms(), hs = src ? s_hash(src) : 0;
    s_key *k = NULL, *old = &s_keys[0];
    for (int i = 0; i < S_KEYS && !k; i++) {
        if (s_keys[i].site == site && s_keys[i].src == hs)
            k = &s_keys[i];
        else if (s_keys[i].used < old->used)
            old = &s_keys[i];
    }
    if (!k) { /* the least recently used pair makes room, telling what it dropped */
        k = old;
        if (k->site)
            s_tell_dropped(k, now);
        memset(k, 0, sizeof *k);
        k->site = site;
        k->src = hs;
        if (src)
            snprintf(k->src_text, sizeof k->src_text, "%s", src);
        k->window_ms = now;
    }
    k->used = ++s_clock_uses;
    if (now - k->window_ms >= PC_LOG_WINDOW_MS) {
        s_tell_dropped(k, now);
        k->window_ms = now;
        k->lines = 0;
    }
    uint32_t max = src ? PC_LOG_SRC_LINES : PC_LOG_SITE_LINES;
    if (k->lines >= max) {
        k->dropped++;
        atomic_fetch_add(&s_pending, 1);
        return false;
    }
    k->lines++;
    return true;
}

static void s_vlog(pc_log_level l, const char *src, const char *fmt, va_list ap)
{
    if (!pc_log_on(l))
        return;
    pthread_mutex_lock(&s_mu);
    bool ok = s_admit(l, fmt, src);
    pthread_mutex_unlock(&s_mu);
    if (!ok)
        return;
    char msg[S_MSG_MAX];
    int m = vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = m < 0 ? 0 : (size_t)m < sizeof msg ? (size_t)m : sizeof msg - 1;
    s_write(l, msg, n);
}

void pc_log(pc_log_level l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s_vlog(l, NULL, fmt, ap);
    va_end(ap);
}

void pc_log_src(pc_log_level l, const char *src, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s_vlog(l, src && *src ? src : "?", fmt, ap);
    va_end(ap);
}

void pc_log_tick(bool all)
{
    if (!atomic_load(&s_pending))
        return;
    pthread_mutex_lock(&s_mu);
    uint64_t now = s_now_ms();
    for (int i = 0; i < S_KEYS; i++) {
        s_key *k = &s_keys[i];
        if (k->site && k->dropped && (all || now - k->window_ms >= PC_LOG_WINDOW_MS)) {
            s_tell_dropped(k, now);
            k->window_ms = now;
            k->lines = 0;
        }
    }
    pthread_mutex_unlock(&s_mu);
}
