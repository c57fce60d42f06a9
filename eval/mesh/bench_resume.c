/* bench_resume.c - the hand-over of an image to resume, from a worker
 * daemon to its executor, in one process: a daemon thread and an
 * executor thread over a socketpair channel (chan.h).
 *
 *   bytes  what levpeer falls back to (X_RESUME): the envelope through
 *          the channel's socket, read into a buffer of its size by the
 *          executor;
 *   memfd  the alternative, measured and not taken: the envelope written
 *          into a new memfd sealed against change, the descriptor passed
 *          with the record (SCM_RIGHTS), the executor mapping it, as
 *          periodic images go the other way (imgslot.h). One copy fewer,
 *          but every hand-over makes its shared-memory pages anew;
 *   slot   what levpeer does when it can (X_RESUME_SLOT, imgslot.h): the
 *          daemon's resume slot, one memfd made and mapped once and
 *          written again for each hand-over (the first hand-over, which
 *          makes and maps it, left out).
 *
 * The process keeps freed memory as an executor does (mallopt, as in
 * exechost.c), so a buffer of the image's size is reused from one
 * hand-over to the next. The executor then reads every byte once, as a
 * restore does. For each size, rounds alternate the three ways; the table
 * gives the median wall time of a hand-over and the CPU time of both
 * threads per hand-over.
 *
 *   bench_resume [ROUNDS]   (default 7)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "bytes.h"
#include "chan.h"
#include "imgslot.h"
#include "wire.h"

enum { WAY_BYTES, WAY_MEMFD, WAY_SLOT, WAYS };

/* WAY_SLOT: the daemon's resume slot and the executor's mapping of it
 * (imgslot.h), kept from one hand-over to the next as levpeer keeps them. */
static pc_rslot g_rs;
static pc_rslot_map g_map;

typedef struct job {
    pc_chan *exec; /* the executor's end */
    size_t len;
    uint64_t sum; /* of the bytes it read */
    int err;
} job;

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double s_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static uint64_t s_read_all(const uint8_t *p, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i += 64)
        s += p[i];
    return s;
}

/* The memfd way, daemon side: len bytes of data in a new memfd sealed
 * against change; -1 when it cannot be made. */
static int s_memfd(const void *data, size_t len)
{
    int fd = memfd_create("bench-resume", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, (const uint8_t *)data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    if (done < len || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The memfd way, executor side: the sealed memfd mapped read-only, or
 * NULL. */
static const uint8_t *s_map(int fd, uint64_t len)
{
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    struct stat st;
    if (seals < 0 || !(seals & F_SEAL_WRITE) || fstat(fd, &st) || (uint64_t)st.st_size < len)
        return NULL;
    void *p = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* The executor: one record, then the envelope read whole. */
static void *s_exec(void *arg)
{
    job *j = arg;
    pc_hdr h;
    uint8_t *payload = NULL;
    const char *why = NULL;
    int r = pc_chan_recv(j->exec, &h, &payload, 1, &why);
    if (r <= 0) {
        j->err = 1;
        return NULL;
    }
    if (h.seq == WAY_BYTES) {
        j->sum = s_read_all(payload + 4, h.len - 4);
    } else if (h.type == PC_X_RESUME_SLOT) {
        uint64_t len = 0;
        const char *bad = NULL;
        const uint8_t *p =
            pc_rslot_take(&g_map, payload, h.len, pc_chan_take_fd(j->exec), &len, &bad);
        if (!p)
            j->err = 1;
        else
            j->sum = s_read_all(p, (size_t)len);
    } else {
        int fd = pc_chan_take_fd(j->exec);
        uint64_t len = rt_le64_get(payload);
        const uint8_t *p = s_map(fd, len);
        close(fd);
        if (!p)
            j->err = 1;
        else
            j->sum = s_read_all(p, (size_t)len);
        if (p)
            munmap((void *)p, (size_t)len);
    }
    free(payload);
    return NULL;
}

/* One hand-over of env[len] the way `way`: its wall time; *cpu gets the
 * process's CPU time it took. */
static double s_once(const uint8_t *env, size_t len, int way, double *cpu)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        perror("socketpair");
        exit(1);
    }
    pc_chan *daemon = pc_chan_new(sv[0], 0);
    job j = {.exec = pc_chan_new(sv[1], 0), .len = len};
    if (!daemon || !j.exec) {
        fprintf(stderr, "bench_resume: no memory for a channel\n");
        exit(1);
    }
    pthread_t t;
    double c0 = s_cpu(), t0 = s_now();
    pthread_create(&t, NULL, s_exec, &j);
    int rc;
    if (way == WAY_BYTES) {
        uint8_t l4[4];
        rt_le32_put(l4, (uint32_t)len);
        struct iovec io[2] = {{l4, 4}, {(void *)env, len}};
        rc = pc_chan_send(daemon, pc_hdr_make(PC_X_RESUME, 0, 2, 1, WAY_BYTES), io, 2);
    } else if (way == WAY_SLOT) {
        uint8_t rec[PC_RSLOT_REC_LEN];
        int fd = -1;
        struct iovec io = {rec, sizeof rec};
        pc_hdr hs = pc_hdr_make(PC_X_RESUME_SLOT, 0, 2, 1, WAY_SLOT);
        rc = pc_rslot_fill(&g_rs, env, len, rec, &fd) ? -1
             : fd >= 0                                ? pc_chan_send_fd(daemon, hs, &io, 1, fd)
                                                      : pc_chan_send(daemon, hs, &io, 1);
    } else {
        int fd = s_memfd(env, len);
        uint8_t l8[8];
        rt_le64_put(l8, len);
        struct iovec io = {l8, 8};
        rc = fd < 0 ? -1
                    : pc_chan_send_fd(daemon, pc_hdr_make(PC_X_RESUME, 0, 2, 1, WAY_MEMFD), &io, 1,
                                      fd);
        if (fd >= 0)
            close(fd);
    }
    pthread_join(t, NULL);
    pc_rslot_back(&g_rs); /* (X_RESUME_FREE) */
    double wall = s_now() - t0;
    *cpu = s_cpu() - c0;
    if (rc || j.err || j.sum != s_read_all(env, len)) {
        fprintf(stderr, "bench_resume: the %s hand-over of %zu bytes failed\n",
                way == WAY_BYTES  ? "bytes"
                : way == WAY_SLOT ? "slot"
                                  : "memfd",
                len);
        exit(1);
    }
    pc_chan_destroy(&daemon);
    pc_chan_destroy(&j.exec);
    return wall;
}

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double s_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, s_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: bench_resume [ROUNDS]   (1 to 1000, default 7)\n");
        return 2;
    }
    /* as an executor process keeps image memory (exechost.c) */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    static const size_t mib[] = {1, 16, 64};
    static const char *const names[WAYS] = {"bytes", "memfd", "slot"};
    printf("image to resume, daemon to executor: %d rounds, the ways alternating, medians\n\n",
           rounds);
    printf("| envelope | way | wall | / bytes | CPU | / bytes |\n| --- | --- | --- | --- | --- | "
           "--- |\n");
    for (size_t s = 0; s < sizeof mib / sizeof *mib; s++) {
        size_t len = mib[s] << 20;
        uint8_t *env = malloc(len);
        if (!env)
            return 1;
        for (size_t i = 0; i < len; i++)
            env[i] = (uint8_t)(i * 2654435761u >> 13);
        pc_rslot_init(&g_rs);
        double w[WAYS][1000], c[WAYS][1000], dummy;
        s_once(env, len, WAY_SLOT, &dummy); /* the slot made, grown and mapped */
        for (int r = 0; r < rounds; r++)
            for (int k = 0; k < WAYS; k++) {
                int way = (r + k) % WAYS;
                w[way][r] = s_once(env, len, way, &c[way][r]);
            }
        double wb = s_median(w[WAY_BYTES], rounds), cb = s_median(c[WAY_BYTES], rounds);
        for (int way = 0; way < WAYS; way++) {
            double wm = s_median(w[way], rounds), cm = s_median(c[way], rounds);
            printf("| %zu MiB | %s | %.2f ms | %.2f | %.2f ms | %.2f |\n", mib[s], names[way],
                   wm * 1e3, wm / wb, cm * 1e3, cm / cb);
        }
        pc_rslot_close(&g_rs);
        pc_rslot_unmap(&g_map);
        free(env);
    }
    return 0;
}
