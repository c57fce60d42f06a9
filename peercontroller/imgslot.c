/* imgslot.c - periodic images lent by an executor to its daemon in shared
 * memory (imgslot.h): the executor's pool of memfd slots, and the
 * daemon's mappings of them, whose buffers give a slot back when they go;
 * and the daemon's resume slot with the executor's mapping of it.
 */
#define _GNU_SOURCE
#include "imgslot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "envelope.h"
#include "lev_errors.h"

/* Slots grow by whole MiB; a free slot over S_SHRINK and four times too
 * large is made anew. */
#define S_ROUND ((size_t)1 << 20)
#define S_SHRINK ((size_t)64 << 20)

/* ===================================================================
 * The record of a lent slot
 * =================================================================== */

bool pc_slots_wanted(void)
{
    const char *env = getenv("LEV_IMAGE_SLOTS");
    return !env || strcmp(env, "0") != 0;
}

void pc_slot_lend_encode(const pc_slot_lend *l, uint8_t *out)
{
    rt_le32_put(out, l->slot);
    out[4] = l->fd >= 0;
    rt_le64_put(out + 5, l->size);
    rt_le64_put(out + 13, l->off);
    rt_le64_put(out + 21, l->len);
}

bool pc_slot_lend_has_fd(const uint8_t *p, size_t n) { return n > 4 && p[4]; }

/* ===================================================================
 * The executor's pool
 * =================================================================== */

enum { SL_FREE, SL_FILLING, SL_READY, SL_LENT };

typedef struct s_slot {
    int fd; /* -1 until made */
    uint8_t *map;
    size_t size;
    size_t elen; /* the envelope's length once finished */
    int state;
    size_t daemon_size; /* the size the daemon mapped it at (0: never sent) */
} s_slot;

struct pc_slots {
    pthread_mutex_t mu;
    s_slot sl[PC_SLOTS_MAX];
    int n;
    bool off; /* memfds failed: no slots from now on */
};

pc_slots *pc_slots_new(void)
{
    pc_slots *s = calloc(1, sizeof *s);
    if (s && pthread_mutex_init(&s->mu, NULL)) {
        free(s);
        s = NULL;
    }
    return s;
}

void pc_slots_destroy(pc_slots **s_p)
{
    pc_slots *s = s_p ? *s_p : NULL;
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        if (s->sl[i].map)
            munmap(s->sl[i].map, s->sl[i].size);
        if (s->sl[i].fd >= 0)
            close(s->sl[i].fd);
    }
    pthread_mutex_destroy(&s->mu);
    free(s);
    *s_p = NULL;
}

/* Under mu: makes slot x at least `need` bytes (its bytes kept), making
 * its memfd at first; false (errno set) when the system refuses. */
static bool s_grow(s_slot *x, size_t need)
{
    if (need <= x->size)
        return true;
    if (need > SIZE_MAX - S_ROUND) {
        errno = ENOMEM;
        return false;
    }
    size_t size = (need + S_ROUND - 1) / S_ROUND * S_ROUND;
    if (x->fd < 0) {
        x->fd = memfd_create("lev-image", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (x->fd < 0)
            return false;
        /* the daemon maps it: it may never shrink under that mapping */
        if (fcntl(x->fd, F_ADD_SEALS, F_SEAL_SHRINK))
            return false;
    }
    if (ftruncate(x->fd, (off_t)size))
        return false;
    void *p = x->map
                  ? mremap(x->map, x->size, size, MREMAP_MAYMOVE)
                  : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, x->fd, 0);
    if (p == MAP_FAILED)
        return false;
    x->map = p;
    x->size = size;
    return true;
}

uint8_t *pc_slots_alloc(pc_slots *s, size_t len)
{
    if (!s || len > SIZE_MAX - PC_SLOT_IMAGE_OFF - PC_SLOT_SLACK)
        return NULL;
    size_t need = PC_SLOT_IMAGE_OFF + len + PC_SLOT_SLACK;
    pthread_mutex_lock(&s->mu);
    int best = -1, big = -1;
    for (int i = 0; !s->off && i < s->n; i++) {
        const s_slot *x = &s->sl[i];
        if (x->state != SL_FREE)
            continue;
        if (x->size >= need && (best < 0 || x->size < s->sl[best].size))
            best = i;
        if (big < 0 || x->size > s->sl[big].size)
            big = i;
    }
    if (best < 0 && !s->off) {
        best = big; /* the largest free one grows */
        if (best < 0 && s->n < PC_SLOTS_MAX) {
            best = s->n++;
            s->sl[best] = (s_slot){.fd = -1};
        }
    }
    uint8_t *img = NULL;
    if (best >= 0 && s->sl[best].size > S_SHRINK && s->sl[best].size / 4 > need) {
        /* sealed against shrinking: a slot left far too large by one big
         * image is made anew at the size needed (the daemon maps it anew) */
        s_slot *x = &s->sl[best];
        munmap(x->map, x->size);
        close(x->fd);
        *x = (s_slot){.fd = -1};
    }
    if (best >= 0) {
        s_slot *x = &s->sl[best];
        bool fresh = x->fd < 0;
        if (s_grow(x, need)) {
            x->state = SL_FILLING;
            img = x->map + PC_SLOT_IMAGE_OFF;
        } else if (fresh) {
            /* no memfd here (or none that seals): images go as bytes */
            fprintf(stderr,
                    "levpeer executor: images go through the channel: no shared memory (%s)\n",
                    strerror(errno));
            s->off = true;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return img;
}

int pc_slots_find(pc_slots *s, const uint8_t *img)
{
    if (!s || !img)
        return -1;
    pthread_mutex_lock(&s->mu);
    int found = -1;
    for (int i = 0; i < s->n && found < 0; i++)
        if (s->sl[i].map && s->sl[i].map + PC_SLOT_IMAGE_OFF == img)
            found = i;
    pthread_mutex_unlock(&s->mu);
    return found;
}

int pc_slots_finish(pc_slots *s, int i, size_t ilen, const void *tail, size_t tlen)
{
    pthread_mutex_lock(&s->mu);
    s_slot *x = &s->sl[i];
    int rc = 0;
    if (ilen > UINT32_MAX || tlen > UINT32_MAX ||
        ilen + tlen > SIZE_MAX - PC_SLOT_IMAGE_OFF - PC_ENV_HEAD ||
        !s_grow(x, PC_SLOT_IMAGE_OFF + ilen + tlen)) {
        x->state = SL_FREE;
        rc = LEV_ENOMEM;
    } else {
        uint8_t *head = x->map + PC_SLOT_IMAGE_OFF - PC_ENV_HEAD;
        rt_le32_put(head, PC_ENV_MAGIC);
        rt_le32_put(head + 4, (uint32_t)tlen);
        if (tlen)
            memcpy(x->map + PC_SLOT_IMAGE_OFF + ilen, tail, tlen);
        x->elen = PC_ENV_HEAD + ilen + tlen;
        x->state = SL_READY;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void pc_slots_lend(pc_slots *s, int i, pc_slot_lend *l)
{
    pthread_mutex_lock(&s->mu);
    s_slot *x = &s->sl[i];
    /* the daemon maps a slot anew, from its memfd, when it is new or grew */
    *l = (pc_slot_lend){.slot = (uint32_t)i,
                        .fd = x->daemon_size == x->size ? -1 : x->fd,
                        .size = x->size,
                        .off = PC_SLOT_IMAGE_OFF - PC_ENV_HEAD,
                        .len = x->elen};
    x->daemon_size = x->size;
    x->state = SL_LENT;
    pthread_mutex_unlock(&s->mu);
}

void pc_slots_release(pc_slots *s, int i)
{
    pthread_mutex_lock(&s->mu);
    if (s->sl[i].state != SL_LENT)
        s->sl[i].state = SL_FREE;
    pthread_mutex_unlock(&s->mu);
}

int pc_slots_back(pc_slots *s, uint32_t i)
{
    int rc = LEV_EINVAL;
    pthread_mutex_lock(&s->mu);
    if (i < (uint32_t)s->n && s->sl[i].state == SL_LENT) {
        s->sl[i].state = SL_FREE;
        rc = 0;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* ===================================================================
 * The daemon's mappings
 * =================================================================== */

/* One slot as the daemon maps it (its memfd is closed once mapped: a
 * daemon of many executors keeps no descriptor per slot); the table holds
 * a reference, and so does each buffer over it. */
typedef struct s_map {
    atomic_int refs;
    atomic_bool back; /* its buffer went: give the slot back */
    uint8_t *base;
    size_t size;
    bool lent; /* a buffer over it was made and has not been given back (daemon thread) */
} s_map;

struct pc_slotmaps {
    s_map *m[PC_SLOTS_MAX];
    char why[160];
};

static void s_map_unref(s_map *x)
{
    if (atomic_fetch_sub(&x->refs, 1) != 1)
        return;
    if (x->base)
        munmap(x->base, x->size);
    free(x);
}

/* The last reference to a buffer over the slot went (on any thread). */
static void s_map_done(void *ctx)
{
    s_map *x = ctx;
    atomic_store(&x->back, true);
    s_map_unref(x);
}

pc_slotmaps *pc_slotmaps_new(void) { return calloc(1, sizeof(pc_slotmaps)); }

void pc_slotmaps_destroy(pc_slotmaps **m_p)
{
    pc_slotmaps *m = m_p ? *m_p : NULL;
    if (!m)
        return;
    for (int i = 0; i < PC_SLOTS_MAX; i++)
        if (m->m[i])
            s_map_unref(m->m[i]);
    free(m);
    *m_p = NULL;
}

/* Refuses a record: closes fd, sets *why, returns NULL. */
static pc_buf *s_refuse(pc_slotmaps *m, int fd, const char **why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static pc_buf *s_refuse(pc_slotmaps *m, int fd, const char **why, const char *fmt, ...)
{
    if (fd >= 0)
        close(fd);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, sizeof m->why, fmt, ap);
    va_end(ap);
    *why = m->why;
    return NULL;
}

pc_buf *pc_slotmaps_take(pc_slotmaps *m, const uint8_t *p, size_t n, int fd, const char **why)
{
    rt_rbuf r;
    rt_rbuf_init(&r, p, n);
    uint32_t slot = rt_get_u32(&r);
    uint8_t has_fd = rt_get_u8(&r);
    uint64_t size = rt_get_u64(&r), off = rt_get_u64(&r), len = rt_get_u64(&r);
    if (!rt_rbuf_done(&r))
        return s_refuse(m, fd, why, "malformed image slot: %s", rt_rbuf_why(&r));
    if ((has_fd != 0) != (fd >= 0))
        return s_refuse(m, fd, why, "image slot %u: the record names %s", slot,
                        has_fd ? "a memfd and none came" : "no memfd and one came");
    if (slot >= PC_SLOTS_MAX)
        return s_refuse(m, fd, why, "image slot %u is past the bound of %d", slot, PC_SLOTS_MAX);
    s_map *x = m->m[slot];
    if (x && x->lent)
        return s_refuse(m, fd, why, "image slot %u lent again while its last image is held", slot);
    if (size > SIZE_MAX || off > size || len > size - off || len == 0)
        return s_refuse(m, fd, why, "image slot %u: %llu bytes at %llu do not fit its %llu bytes",
                        slot, (unsigned long long)len, (unsigned long long)off,
                        (unsigned long long)size);
    if (fd < 0 && !x)
        return s_refuse(m, -1, why, "image slot %u was never given its memfd", slot);
    if (fd < 0 && x->size != size)
        return s_refuse(m, -1, why,
                        "image slot %u of %llu bytes came without its memfd (mapped at %zu)", slot,
                        (unsigned long long)size, x->size);
    if (fd >= 0) { /* a new slot, or one that grew: mapped anew */
        int seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0 || !(seals & F_SEAL_SHRINK))
            return s_refuse(m, fd, why, "image slot %u: not a memfd sealed against shrinking",
                            slot);
        struct stat st;
        if (fstat(fd, &st) || (uint64_t)st.st_size < size)
            return s_refuse(m, fd, why, "image slot %u: its memfd is smaller than %llu bytes", slot,
                            (unsigned long long)size);
        s_map *nx = calloc(1, sizeof *nx);
        if (!nx)
            return s_refuse(m, fd, why, "no memory for image slot %u", slot);
        nx->base = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (nx->base == MAP_FAILED) {
            free(nx);
            return s_refuse(m, fd, why, "image slot %u: cannot map %llu bytes: %s", slot,
                            (unsigned long long)size, strerror(errno));
        }
        close(fd); /* the mapping keeps the memory */
        nx->size = (size_t)size;
        atomic_init(&nx->refs, 1);
        if (x)
            s_map_unref(x);
        m->m[slot] = x = nx;
    }
    atomic_fetch_add(&x->refs, 1);
    pc_buf *b = pc_buf_wrap(x->base + off, (size_t)len, s_map_done, x);
    if (!b) {
        atomic_fetch_sub(&x->refs, 1);
        return s_refuse(m, -1, why, "no memory for the buffer of image slot %u", slot);
    }
    atomic_store(&x->back, false);
    x->lent = true;
    return b;
}

int pc_slotmaps_returned(pc_slotmaps *m, uint32_t *ids, int cap)
{
    int k = 0;
    for (uint32_t i = 0; m && i < PC_SLOTS_MAX && k < cap; i++) {
        s_map *x = m->m[i];
        if (x && x->lent && atomic_load(&x->back)) {
            x->lent = false;
            ids[k++] = i;
        }
    }
    return k;
}

/* ===================================================================
 * The resume slot (X_RESUME_SLOT)
 * =================================================================== */

void pc_rslot_init(pc_rslot *s) { *s = (pc_rslot){.fd = -1}; }

void pc_rslot_close(pc_rslot *s)
{
    if (s->fd >= 0)
        close(s->fd);
    pc_rslot_init(s);
}

int pc_rslot_fill(pc_rslot *s, const void *data, size_t len, uint8_t *rec, int *fd)
{
    if (s->lent || !len)
        return -1;
    if (s->fd < 0) {
        s->fd = memfd_create("lev-resume", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (s->fd < 0)
            return -1;
        if (fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK)) {
            pc_rslot_close(s);
            return -1;
        }
        s->size = 0;
        s->mapped = false;
    }
    if (s->size < len) { /* grown by whole MiB: the executor maps it anew */
        uint64_t size = ((uint64_t)len + S_ROUND - 1) / S_ROUND * S_ROUND;
        if (ftruncate(s->fd, (off_t)size))
            return -1;
        s->size = size;
        s->mapped = false;
    }
    const uint8_t *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(s->fd, p + done, len - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    rt_le64_put(rec, s->size);
    rt_le64_put(rec + 8, len);
    rec[16] = !s->mapped;
    *fd = s->mapped ? -1 : s->fd;
    s->mapped = true;
    s->lent = true;
    return 0;
}

void pc_rslot_back(pc_rslot *s) { s->lent = false; }

void pc_rslot_reset(pc_rslot *s)
{
    s->mapped = false;
    s->lent = false;
}

const uint8_t *pc_rslot_take(pc_rslot_map *m, const uint8_t *p, size_t n, int fd, uint64_t *len,
                             const char **why)
{
    bool ok = false;
    uint64_t size = n == PC_RSLOT_REC_LEN ? rt_le64_get(p) : 0;
    *len = n == PC_RSLOT_REC_LEN ? rt_le64_get(p + 8) : 0;
    bool along = n == PC_RSLOT_REC_LEN && p[16];
    struct stat st;
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    if (n != PC_RSLOT_REC_LEN)
        *why = "its record is malformed";
    else if (along != (fd >= 0))
        *why =
            along ? "the record names a memfd and none came" : "a memfd came that it does not name";
    else if (along && (seals < 0 || !(seals & F_SEAL_SHRINK)))
        *why = "its descriptor is not a memfd sealed against shrinking";
    else if (along &&
             (size == 0 || size > SIZE_MAX || fstat(fd, &st) || (uint64_t)st.st_size < size))
        *why = "its memfd is smaller than the record's size";
    else if (!along && (!m->base || m->size != size))
        *why = m->base ? "it came without its memfd at another size" : "its memfd never came";
    else if (*len == 0 || *len > size)
        *why = "its length is 0 or past the slot";
    else
        ok = true;
    if (ok && along) { /* mapped anew */
        void *base = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED) {
            *why = "its memfd cannot be mapped";
            ok = false;
        } else {
            pc_rslot_unmap(m);
            m->base = base;
            m->size = size;
        }
    }
    if (fd >= 0)
        close(fd);
    return ok ? m->base : NULL;
}

void pc_rslot_unmap(pc_rslot_map *m)
{
    if (m->base)
        munmap((void *)m->base, (size_t)m->size);
    m->base = NULL;
    m->size = 0;
}
