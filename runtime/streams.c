/* streams.c - the C library streams that task code opens, made part of
 * its images: fopen, freopen and open_memstream (renamed by levpp to
 * lev_fopen, lev_freopen, lev_open_memstream) register the stream here
 * with a record on the VT heap; fclose (lev_fclose) marks it closed.
 *
 * A record is a heap object of RT_SR_N data pointers: the stream's numbers
 * (an array of RT_SI_N 64-bit words), its absolute path and mode (bytes)
 * and, for a memory stream, the program's two variables (char **, size_t
 * *) and its buffer. Images carry records like any other object, so the
 * pointers in them are relocated and their numbers byte-swapped.
 *
 * A capture first syncs the VT's streams (rt_streams_sync: each is
 * flushed and its offset, size and end-of-file flag written into its
 * record; then the standard streams, stdstreams.c), then encodes a
 * pointer to an open stream as a reference to its record and a pointer
 * to a closed one as dangling (rt_stream_lookup). A restore asks for the
 * stream of each record (rt_stream_revive):
 * - the same FILE when the stream is still open in this process (torture
 *   mode, a VT resumed where it ran), found by the identity the record
 *   keeps (this process's random nonce and a serial number);
 * - else a file stream is reopened by its path with the access its mode
 *   gave, without creating or truncating it, and put back at its offset;
 *   a file the program created or truncated ("w" modes) is first cut back
 *   to its size at the capture, so what a killed run wrote after the
 *   image is gone and the resumed run writes it again;
 * - a memory stream is rebuilt on its restored buffer.
 *
 * Files themselves are not in the image: a file that the process which
 * was killed changed after the image is found as it left it, and a file
 * opened for appending is not cut back.
 *
 * Streams opened otherwise (fdopen, tmpfile, popen, fmemopen) are not
 * registered: a capture that meets one still fails, naming the pointer.
 * A stream a VT dropped without closing stays open, as it would natively.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define GC_THREADS
#include <gc/gc.h>

#include "heap.h"
#include "lev_task.h"
#include "rt.h"
#include "streams.h"
#include "vt.h"

/* The record's pointers and the numbers' words. */
enum { RT_SR_INFO, RT_SR_PATH, RT_SR_MODE, RT_SR_BUFP, RT_SR_SIZEP, RT_SR_BUF, RT_SR_N };
enum {
    RT_SI_MAGIC,
    RT_SI_KIND,
    RT_SI_NONCE,
    RT_SI_SERIAL,
    RT_SI_OFFSET, /* file: offset at the capture (UINT64_MAX: not seekable) */
    RT_SI_SIZE,   /* file: size at the capture */
    RT_SI_FLAGS,
    RT_SI_CAP, /* memory stream: its buffer's size, its length, its position */
    RT_SI_LEN,
    RT_SI_POS,
    RT_SI_N
};
#define S_MAGIC 0x4C455653u /* "LEVS" */
enum { S_KIND_FILE = 1, S_KIND_MEM = 2 };
enum { S_F_EOF = 1, S_F_TRUNC = 2 };

/* A memory stream's cookie: memory of the runtime's (uncollectable, so
 * scanned), since the C library's FILE that holds it is not scanned. */
typedef struct s_cookie {
    void **rec;
    const lev_module *m;
} s_cookie;

typedef struct s_entry {
    FILE *fp;
    void **rec;   /* NULL once closed */
    s_cookie *ck; /* memory streams */
    uint64_t vt;  /* key (rt_vt.key) of the VT that opened it or got it back from an image */
    uint64_t nonce, serial;
} s_entry;

/* At most this many closed streams are remembered (to capture pointers
 * to them as dangling); past it one of them is forgotten, and a pointer
 * to it fails a capture as memory the runtime does not own. */
#define S_CLOSED_MAX 256u

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
/* Where freopen sent stdin, stdout, stderr (malloc'd), or NULL. */
static char *s_std_redirect[3];
static s_entry *s_tab; /* GC_malloc_uncollectable: holds the records */
static size_t s_n, s_cap, s_nclosed;
static uint64_t s_nonce, s_serial;

static uint64_t *s_info(void **rec) { return rec[RT_SR_INFO]; }

static uint64_t s_current_vt(void)
{
    rt_vt *vt = rt_vt_current();
    return vt ? vt->key : 0;
}

/* The entry of fp, or NULL (under s_lock). */
static s_entry *s_find(const void *fp)
{
    for (size_t i = 0; i < s_n; i++)
        if (s_tab[i].fp == fp)
            return &s_tab[i];
    return NULL;
}

/* Forgets entry e (under s_lock). */
static void s_drop(s_entry *e)
{
    if (!e->rec)
        s_nclosed--;
    *e = s_tab[--s_n];
    memset(&s_tab[s_n], 0, sizeof *s_tab);
}

/* Marks entry e closed, if it is open (under s_lock); a memory stream's
 * cookie was freed by s_mem_close. */
static void s_mark_closed(s_entry *e)
{
    if (!e || !e->rec)
        return;
    e->rec = NULL;
    e->ck = NULL;
    if (++s_nclosed > S_CLOSED_MAX)
        for (size_t i = 0; i < s_n; i++)
            if (!s_tab[i].rec) {
                s_drop(&s_tab[i]);
                break;
            }
}

/* Adds an entry (under s_lock): a closed one at the same address is
 * forgotten first (its FILE was reused). NULL: out of memory. */
static s_entry *s_add(FILE *fp)
{
    s_entry *old = s_find(fp);
    if (old)
        s_drop(old);
    if (s_n == s_cap) {
        size_t cap = s_cap ? 2 * s_cap : 16;
        s_entry *t = GC_MALLOC_UNCOLLECTABLE(cap * sizeof *t);
        if (!t)
            return NULL;
        memset(t, 0, cap * sizeof *t);
        if (s_n)
            memcpy(t, s_tab, s_n * sizeof *t);
        GC_FREE(s_tab);
        s_tab = t;
        s_cap = cap;
    }
    if (!s_nonce) {
        if (getrandom(&s_nonce, sizeof s_nonce, 0) != sizeof s_nonce || !s_nonce)
            s_nonce = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&s_nonce ^ 1;
    }
    s_entry *e = &s_tab[s_n++];
    memset(e, 0, sizeof *e);
    e->fp = fp;
    return e;
}

/* A NUL-terminated copy of s on the VT heap. */
static char *s_dup(const lev_module *m, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lev_alloc(m, LEV_T_BYTES, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* A new record of kind `kind`: its numbers and mode set, no path. */
static void **s_record(const lev_module *m, int kind, const char *mode)
{
    void **rec = lev_alloc(m, LEV_T_PTR, RT_SR_N);
    uint64_t *info = lev_alloc(m, LEV_T_U64, RT_SI_N);
    char *md = s_dup(m, mode);
    if (!rec || !info || !md)
        return NULL;
    memset(rec, 0, RT_SR_N * sizeof *rec);
    memset(info, 0, RT_SI_N * sizeof *info);
    info[RT_SI_MAGIC] = S_MAGIC;
    info[RT_SI_KIND] = (uint64_t)kind;
    info[RT_SI_FLAGS] = mode[0] == 'w' ? S_F_TRUNC : 0;
    rec[RT_SR_INFO] = info;
    rec[RT_SR_MODE] = md;
    return rec;
}

/* Sets the path of file record rec: path made absolute (the file exists:
 * it was just opened). -1: out of memory. */
static int s_set_path(const lev_module *m, void **rec, const char *path)
{
    char *abs = realpath(path, NULL);
    if (!abs && path[0] != '/') {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd)) {
            size_t n = strlen(cwd) + strlen(path) + 2;
            if ((abs = malloc(n)))
                snprintf(abs, n, "%s/%s", cwd, path);
        }
    }
    char *p = s_dup(m, abs ? abs : path);
    free(abs);
    if (!p)
        return -1;
    rec[RT_SR_PATH] = p;
    return 0;
}

/* Registers open stream fp with record rec as VT vt's, with identity
 * (nonce, serial) or, when serial is 0, a new one. -1: out of memory. */
static int s_register(FILE *fp, void **rec, s_cookie *ck, uint64_t vt, uint64_t nonce,
                      uint64_t serial)
{
    pthread_mutex_lock(&s_lock);
    s_entry *e = s_add(fp);
    if (e) {
        e->rec = rec;
        e->ck = ck;
        e->vt = vt;
        e->nonce = serial ? nonce : s_nonce;
        e->serial = serial ? serial : ++s_serial;
        s_info(rec)[RT_SI_NONCE] = e->nonce;
        s_info(rec)[RT_SI_SERIAL] = e->serial;
    }
    pthread_mutex_unlock(&s_lock);
    return e ? 0 : -1;
}

/* ===================================================================
 * Memory streams (open_memstream): the bytes go to a heap object;
 * *bufp and *sizep follow every write, so that they hold what fflush and
 * fclose promise at any time
 * =================================================================== */

static void s_mem_publish(void **rec)
{
    uint64_t *info = s_info(rec);
    *(char **)rec[RT_SR_BUFP] = rec[RT_SR_BUF];
    *(size_t *)rec[RT_SR_SIZEP] =
        info[RT_SI_POS] < info[RT_SI_LEN] ? info[RT_SI_POS] : info[RT_SI_LEN];
}

/* Grows the buffer of rec to at least `need` bytes, doubling. */
static int s_mem_grow(const lev_module *m, void **rec, uint64_t need)
{
    uint64_t *info = s_info(rec);
    if (rec[RT_SR_BUF] && need <= info[RT_SI_CAP])
        return 0;
    uint64_t n = info[RT_SI_CAP] > 64 ? info[RT_SI_CAP] : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    char *nb = lev_realloc(m, rec[RT_SR_BUF], LEV_T_BYTES, n);
    if (!nb)
        return -1;
    rec[RT_SR_BUF] = nb;
    info[RT_SI_CAP] = n;
    return 0;
}

static ssize_t s_mem_write(void *cookie, const char *data, size_t n)
{
    s_cookie *ck = cookie;
    void **rec = ck->rec;
    uint64_t *info = s_info(rec);
    uint64_t pos = info[RT_SI_POS];
    if (n > SIZE_MAX - pos - 1 || s_mem_grow(ck->m, rec, pos + n + 1)) {
        errno = ENOMEM;
        return 0;
    }
    char *buf = rec[RT_SR_BUF];
    if (pos > info[RT_SI_LEN]) /* written past the end after a seek: zeros between */
        memset(buf + info[RT_SI_LEN], 0, pos - info[RT_SI_LEN]);
    memcpy(buf + pos, data, n);
    info[RT_SI_POS] = pos += n;
    if (pos > info[RT_SI_LEN])
        info[RT_SI_LEN] = pos;
    buf[info[RT_SI_LEN]] = '\0';
    s_mem_publish(rec);
    return (ssize_t)n;
}

static int s_mem_seek(void *cookie, off64_t *offset, int whence)
{
    uint64_t *info = s_info(((s_cookie *)cookie)->rec);
    off64_t base = whence == SEEK_SET   ? 0
                   : whence == SEEK_CUR ? (off64_t)info[RT_SI_POS]
                                        : (off64_t)info[RT_SI_LEN];
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
        return -1;
    if (*offset < -base) {
        errno = EINVAL;
        return -1;
    }
    info[RT_SI_POS] = (uint64_t)(base + *offset);
    *offset = (off64_t)info[RT_SI_POS];
    return 0;
}

static int s_mem_close(void *cookie)
{
    s_cookie *ck = cookie;
    s_mem_publish(ck->rec);
    GC_FREE(ck);
    return 0;
}

/* A FILE over a new cookie for record rec, or NULL. */
static FILE *s_mem_file(const lev_module *m, void **rec, s_cookie **ckp)
{
    s_cookie *ck = GC_MALLOC_UNCOLLECTABLE(sizeof *ck);
    if (!ck)
        return NULL;
    *ck = (s_cookie){rec, m};
    cookie_io_functions_t io = {.write = s_mem_write, .seek = s_mem_seek, .close = s_mem_close};
    FILE *fp = fopencookie(ck, "w", io);
    if (!fp)
        GC_FREE(ck);
    *ckp = ck;
    return fp;
}

FILE *lev_open_memstream(const lev_module *m, char **bufp, size_t *sizep)
{
    if (!bufp || !sizep) {
        errno = EINVAL;
        return NULL;
    }
    void **rec = s_record(m, S_KIND_MEM, "w");
    if (!rec || s_mem_grow(m, rec, 1)) {
        errno = ENOMEM;
        return NULL;
    }
    rec[RT_SR_BUFP] = bufp;
    rec[RT_SR_SIZEP] = sizep;
    ((char *)rec[RT_SR_BUF])[0] = '\0';
    s_mem_publish(rec);
    s_cookie *ck = NULL;
    FILE *fp = s_mem_file(m, rec, &ck);
    if (fp && s_register(fp, rec, ck, s_current_vt(), 0, 0)) {
        fclose(fp);
        fp = NULL;
        errno = ENOMEM;
    }
    return fp;
}

/* ===================================================================
 * File streams
 * =================================================================== */

FILE *lev_fopen(const lev_module *m, const char *path, const char *mode)
{
    FILE *fp = fopen(path, mode);
    if (!fp)
        return NULL;
    void **rec = s_record(m, S_KIND_FILE, mode);
    if (!rec || s_set_path(m, rec, path) || s_register(fp, rec, NULL, s_current_vt(), 0, 0)) {
        fclose(fp);
        errno = ENOMEM;
        return NULL;
    }
    return fp;
}

FILE *lev_freopen(const lev_module *m, const char *path, const char *mode, FILE *fp)
{
    pthread_mutex_lock(&s_lock);
    s_entry *e = s_find(fp);
    void **old = e ? e->rec : NULL;
    bool mem = e && e->ck;
    pthread_mutex_unlock(&s_lock);
    const char *was = old && old[RT_SR_PATH] ? old[RT_SR_PATH] : NULL;
    char *keep = !path && was ? strdup(was) : NULL;
    FILE *nf = freopen(path, mode, fp);
    pthread_mutex_lock(&s_lock);
    s_mark_closed(s_find(fp)); /* whether or not the new stream opened */
    pthread_mutex_unlock(&s_lock);
    int std = fp == stdin ? 0 : fp == stdout ? 1 : fp == stderr ? 2 : -1;
    if (nf && std >= 0 && path) {
        /* Images carry a standard stream as the process's own: one sent
         * to a file would come back to the terminal, so captures stop. */
        pthread_mutex_lock(&s_lock);
        free(s_std_redirect[std]);
        s_std_redirect[std] = strdup(path);
        pthread_mutex_unlock(&s_lock);
    }
    if (!nf || std >= 0 || mem || (!path && !keep)) {
        /* A stream with no path to reopen is not registered. */
        free(keep);
        return nf;
    }
    void **rec = s_record(m, S_KIND_FILE, mode);
    if (!rec || s_set_path(m, rec, path ? path : keep) ||
        s_register(nf, rec, NULL, s_current_vt(), 0, 0)) {
        free(keep);
        fclose(nf);
        errno = ENOMEM;
        return NULL;
    }
    free(keep);
    return nf;
}

int lev_fclose(FILE *fp)
{
    int rc = fclose(fp);
    pthread_mutex_lock(&s_lock);
    s_mark_closed(s_find(fp));
    pthread_mutex_unlock(&s_lock);
    return rc;
}

/* ===================================================================
 * Capture and restore
 * =================================================================== */

/* Writes where file stream e stands into its record (under s_lock). */
static void s_sync_file(s_entry *e)
{
    uint64_t *info = s_info(e->rec);
    const char *mode = e->rec[RT_SR_MODE];
    if (mode[0] != 'r' || strchr(mode, '+'))
        fflush(e->fp);
    off_t off = ftello(e->fp);
    info[RT_SI_OFFSET] = off < 0 ? UINT64_MAX : (uint64_t)off;
    struct stat st;
    info[RT_SI_SIZE] = fstat(fileno(e->fp), &st) == 0 ? (uint64_t)st.st_size : 0;
    info[RT_SI_FLAGS] = (info[RT_SI_FLAGS] & ~(uint64_t)S_F_EOF) | (feof(e->fp) ? S_F_EOF : 0);
}

int rt_streams_sync(uint64_t vt_key, bool portable)
{
    static const char *const names[3] = {"stdin", "stdout", "stderr"};
    pthread_mutex_lock(&s_lock);
    for (int k = 0; k < 3; k++)
        if (s_std_redirect[k]) {
            int rc = rt_err(LEV_ECAPTURE,
                            "%s was sent to '%s' by freopen: an image carries the standard "
                            "streams as those of the process that resumes it; open the file "
                            "with fopen and write to that stream instead",
                            names[k], s_std_redirect[k]);
            pthread_mutex_unlock(&s_lock);
            return rc;
        }
    for (size_t i = 0; i < s_n; i++) {
        s_entry *e = &s_tab[i];
        if (!e->rec || e->vt != vt_key)
            continue;
        if (e->ck)
            fflush(e->fp); /* the bytes the C library holds go to the buffer */
        else
            s_sync_file(e);
    }
    pthread_mutex_unlock(&s_lock);
    return rt_stdstreams_capture(portable);
}

int rt_stream_lookup(const void *p, void **rec)
{
    pthread_mutex_lock(&s_lock);
    s_entry *e = s_find(p);
    int k = !e ? RT_STREAM_NONE : e->rec ? RT_STREAM_OPEN : RT_STREAM_CLOSED;
    if (k == RT_STREAM_OPEN) {
        /* Another VT's file: brought up to date here (a memory stream may
         * not be: its flush writes into objects already encoded). */
        if (!e->ck)
            s_sync_file(e);
        *rec = e->rec;
    }
    pthread_mutex_unlock(&s_lock);
    return k;
}

/* Whether p is a heap object of type `type` with at least n elements. */
static bool s_obj_is(const void *p, uint32_t type, uint32_t n)
{
    rt_objhdr *h = p ? rt_heap_find(p) : NULL;
    return h && p == rt_obj_data(h) && RT_OBJ_TYPE(h) == type && h->count >= n;
}

/* Whether p is a NUL-terminated string of bytes on the heap. */
static bool s_str_is(const void *p)
{
    rt_objhdr *h = p ? rt_heap_find(p) : NULL;
    return h && p == rt_obj_data(h) && RT_OBJ_TYPE(h) == LEV_T_BYTES && h->count &&
           memchr(p, '\0', h->count);
}

/* The open(2) flags of fopen mode `mode`, never creating or truncating. */
static int s_open_flags(const char *mode)
{
    bool plus = strchr(mode, '+') != NULL;
    int fl = mode[0] == 'r' ? (plus ? O_RDWR : O_RDONLY) : plus ? O_RDWR : O_WRONLY;
    if (mode[0] == 'a')
        fl |= O_APPEND;
    if (strchr(mode, 'e'))
        fl |= O_CLOEXEC;
    return fl;
}

/* Reopens file record rec: 0, or LEV_EIO with a message. */
static int s_reopen_file(void **rec, FILE **out)
{
    uint64_t *info = s_info(rec);
    const char *path = rec[RT_SR_PATH], *mode = rec[RT_SR_MODE];
    char fdmode[8];
    size_t k = 0;
    for (const char *q = mode; *q && k + 1 < sizeof fdmode; q++)
        if (*q != 'x')
            fdmode[k++] = *q;
    fdmode[k] = '\0';
    int fd = open(path, s_open_flags(mode));
    if (fd < 0)
        return rt_err(LEV_EIO, "stream of file '%s' (mode \"%s\") cannot be reopened: %s", path,
                      mode, strerror(errno));
    if ((info[RT_SI_FLAGS] & S_F_TRUNC) && ftruncate(fd, (off_t)info[RT_SI_SIZE]) != 0) {
        int err = errno;
        close(fd);
        return rt_err(LEV_EIO, "stream of file '%s': cannot cut it back to %llu bytes: %s", path,
                      (unsigned long long)info[RT_SI_SIZE], strerror(err));
    }
    FILE *fp = fdopen(fd, fdmode);
    if (!fp) {
        int err = errno;
        close(fd);
        return rt_err(LEV_EIO, "stream of file '%s': %s", path, strerror(err));
    }
    if (info[RT_SI_OFFSET] != UINT64_MAX && fseeko(fp, (off_t)info[RT_SI_OFFSET], SEEK_SET) != 0) {
        int err = errno;
        fclose(fp);
        return rt_err(LEV_EIO, "stream of file '%s': cannot go back to offset %llu: %s", path,
                      (unsigned long long)info[RT_SI_OFFSET], strerror(err));
    }
    if (info[RT_SI_FLAGS] & S_F_EOF) {
        int c = getc(fp); /* at the end: sets the flag again */
        if (c != EOF)
            ungetc(c, fp);
    }
    *out = fp;
    return 0;
}

/* Whether rec, restored from an image, is a stream record: its objects of
 * the right types and sizes, its strings terminated, a memory stream's
 * length inside its buffer and its capacity the buffer's size. */
static bool s_record_ok(void **rec)
{
    if (!s_obj_is(rec, LEV_T_PTR, RT_SR_N) || !s_obj_is(rec[RT_SR_INFO], LEV_T_U64, RT_SI_N) ||
        s_info(rec)[RT_SI_MAGIC] != S_MAGIC || !s_str_is(rec[RT_SR_MODE]))
        return false;
    const uint64_t *info = s_info(rec);
    if (info[RT_SI_KIND] == S_KIND_FILE)
        return s_str_is(rec[RT_SR_PATH]);
    if (info[RT_SI_KIND] != S_KIND_MEM || !rec[RT_SR_BUFP] || !rec[RT_SR_SIZEP] ||
        !s_obj_is(rec[RT_SR_BUF], LEV_T_BYTES, 1))
        return false;
    uint32_t count = rt_heap_find(rec[RT_SR_BUF])->count;
    return info[RT_SI_LEN] < count && info[RT_SI_CAP] == count;
}

int rt_stream_revive(const lev_module *m, void *recp, uint64_t vt_key, FILE **out, int *opened)
{
    void **rec = recp;
    *opened = 0;
    if (!s_record_ok(rec))
        return rt_err(LEV_EIMAGE, "damaged stream record in the image");
    uint64_t *info = s_info(rec);
    uint64_t kind = info[RT_SI_KIND];
    /* Still open here? */
    pthread_mutex_lock(&s_lock);
    for (size_t i = 0; i < s_n; i++) {
        s_entry *e = &s_tab[i];
        if (e->rec && e->nonce == info[RT_SI_NONCE] && e->serial == info[RT_SI_SERIAL]) {
            e->rec = rec;
            e->vt = vt_key;
            if (e->ck) {
                e->ck->rec = rec;
                e->ck->m = m;
            }
            *out = e->fp;
            pthread_mutex_unlock(&s_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&s_lock);
    FILE *fp = NULL;
    s_cookie *ck = NULL;
    if (kind == S_KIND_FILE) {
        int rc = s_reopen_file(rec, &fp);
        if (rc)
            return rc;
    } else if (!(fp = s_mem_file(m, rec, &ck))) {
        return rt_err(LEV_ENOMEM, "out of memory rebuilding a memory stream");
    }
    if (s_register(fp, rec, ck, vt_key, info[RT_SI_NONCE], info[RT_SI_SERIAL])) {
        fclose(fp);
        return rt_err(LEV_ENOMEM, "out of memory registering a stream");
    }
    *out = fp;
    *opened = 1;
    return 0;
}

void rt_stream_drop(FILE *fp)
{
    pthread_mutex_lock(&s_lock);
    s_entry *e = s_find(fp);
    if (e)
        s_drop(e);
    pthread_mutex_unlock(&s_lock);
    fclose(fp);
}
