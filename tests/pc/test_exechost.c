/* test_exechost.c - executor processes.
 *
 * The test plays a worker daemon: it starts `levpeer --executor --fd N`
 * over a socketpair and talks the executor protocol (exechost.h) with the
 * task module built from pc_tasks.c: READY; MODULE, good and damaged;
 * RUN to DONE, and of unknown tasks to FAILED; periodic IMAGEs naming the
 * VT, one of them resumed in a second executor to the straight run's
 * result (pc_spin, and pc_big with 16 MiB of heap in each image); STOP
 * mid-run and the image resumed elsewhere; CANCEL; RESUME of damaged and
 * foreign images; a task that crashes its executor (CRASH, then the end
 * of the channel and death by SIGSEGV); an executor whose daemon goes
 * away, and one whose daemon dies while the channel stays open
 * (PR_SET_PDEATHSIG); the executor's low priority; levpeer's bad
 * arguments; an executor on a thread of this process, as an embedded
 * peer runs it (the module manager's own tests are in test_modmgr.c).
 * Every wait is for a record or a process, bounded; none sleeps.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define GC_THREADS
#include <gc/gc.h>

#include "causal.h"
#include "chan.h"
#include "envelope.h"
#include "exechost.h"
#include "image.h"
#include "imgslot.h"
#include "lev_errors.h"
#include "lev_task.h"
#include "modmgr.h"
#include "pc_test.h"
#include "rt.h"
#include "taskmod.h"
#include "vtchan.h"
#include "wire.h"

#ifndef PC_LEVPEER
#error "PC_LEVPEER: the path of the levpeer program"
#endif

extern char **environ;

#define LIMIT_MS 30000 /* bound of any wait for a record or a process */
#define SPIN_STEPS 64
#define SPIN_WORK 6000000 /* a straight run lasts about half a second */

/* ===================================================================
 * An executor process
 * =================================================================== */

typedef struct s_exe {
    pid_t pid;
    int pidfd;
    pc_chan *c;
    bool no_ack;        /* s_expect leaves outputs unacknowledged */
    pc_slotmaps *maps;  /* the image slots it lends, mapped as a daemon maps them */
    int lent, as_bytes; /* periodic images that came in slots, and as bytes */
    int stops_lent;     /* images of a STOP that came in slots */
    int slot_frees;     /* the resume slot given back (X_RESUME_FREE) */
} s_exe;

static const char *g_slots_env; /* LEV_IMAGE_SLOTS of the executors started (NULL: unset) */

static uint8_t *g_mod; /* the module's bytes */
static size_t g_mod_len;
static uint8_t g_hash[PC_HASH_LEN];

/* In a child: runs `levpeer --executor` over fd, with LEV_EXEC_NICE set
 * to nice (NULL: unset) and no core dump. Never returns. */
static void s_exec_executor(int fd, const char *nice)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    fcntl(fd, F_SETFD, 0);
    if (nice)
        setenv("LEV_EXEC_NICE", nice, 1);
    else
        unsetenv("LEV_EXEC_NICE");
    if (g_slots_env)
        setenv("LEV_IMAGE_SLOTS", g_slots_env, 1);
    else
        unsetenv("LEV_IMAGE_SLOTS");
    char arg[16];
    snprintf(arg, sizeof arg, "%d", fd);
    execl(PC_LEVPEER, "levpeer", "--executor", "--fd", arg, (char *)NULL);
    _exit(127);
}

/* Takes the channel (socket fd) of executor pid and waits for its READY,
 * which must name pid. */
static void s_adopt(s_exe *e, pid_t pid, int fd)
{
    e->pid = pid;
    e->no_ack = false;
    e->c = pc_chan_new(fd, 0);
    assert_non_null(e->c);
    e->maps = pc_slotmaps_new();
    assert_non_null(e->maps);
    e->lent = e->as_bytes = e->stops_lent = e->slot_frees = 0;
    pc_hdr h;
    uint8_t *p = NULL;
    assert_int_equal(pc_test_recv(e->c, &h, &p, NULL, LIMIT_MS), 1);
    assert_int_equal(h.type, PC_X_READY);
    pc_rbuf r;
    pc_rbuf_init(&r, p, h.len);
    assert_int_equal(pc_get_i32(&r), pid);
    assert_true(pc_rbuf_done(&r));
    free(p);
}

/* Starts an executor (nice as s_exec_executor) and waits for its READY. */
static void s_start(s_exe *e, const char *nice)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        s_exec_executor(sv[1], nice);
    close(sv[1]);
    e->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    assert_true(e->pidfd >= 0);
    s_adopt(e, pid, sv[0]);
}

/* Waits (bounded) for the executor to end; returns its wait status. */
static int s_reap(s_exe *e)
{
    struct pollfd p = {.fd = e->pidfd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, LIMIT_MS)) < 0 && errno == EINTR)
        ;
    if (n == 0) {
        kill(e->pid, SIGKILL);
        waitpid(e->pid, NULL, 0);
        fail_msg("the executor did not end within %d ms", LIMIT_MS);
    }
    int st = 0;
    assert_int_equal(waitpid(e->pid, &st, 0), e->pid);
    close(e->pidfd);
    return st;
}

/* Closes the daemon's end; the executor must exit with status 0. */
static void s_finish(s_exe *e)
{
    pc_chan_destroy(&e->c);
    pc_slotmaps_destroy(&e->maps);
    int st = s_reap(e);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void s_send(s_exe *e, pc_hdr h, pc_wbuf *w)
{
    assert_int_equal(w->err, 0);
    assert_int_equal(pc_chan_send_buf(e->c, h, w), 0);
    pc_wbuf_free(w);
}

static uint64_t g_lim_state; /* the VC's limit on a VT's image of the next CONFIG (0: none) */

static void s_config(s_exe *e, int checkpoint_ms, int threads)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_i32(&w, checkpoint_ms);
    pc_put_i32(&w, threads);
    pc_put_str(&w, ""); /* messages through the deployer */
    pc_put_str(&w, ""); /* no keys */
    pc_put_str(&w, "");
    pc_put_u64(&w, g_lim_state);
    pc_put_u64(&w, 0); /* the runtime's bounds on messages and values */
    pc_put_u64(&w, 0);
    s_send(e, pc_hdr_make(PC_X_CONFIG, 0, 0, 0, 0), &w);
}

/* What IMAGE and REPORT records showed while waiting for another. */
typedef struct s_seen {
    int images, reports;
    uint64_t image_seq, report_seq; /* the last ones */
    uint64_t first_report;          /* the number of the first report seen */
    bool keep;                      /* keep the first image that comes */
    int keep_from;                  /* after this many reports */
    uint8_t *img;
    size_t img_len;
} s_seen;

/* The blob of a payload (pointing inside it), which must be all of it. */
static const uint8_t *s_blob_only(const uint8_t *p, size_t n, size_t *len)
{
    pc_rbuf r;
    pc_rbuf_init(&r, p, n);
    const void *b = NULL;
    assert_true(pc_get_blob(&r, &b, len));
    assert_true(pc_rbuf_done(&r));
    return b;
}

/* The kind of an OUT record's output (rt_out_kind); its data into *data. */
static int s_out_kind(const pc_hdr *h, const uint8_t *p, const void **data, size_t *len)
{
    pc_rbuf r;
    pc_rbuf_init(&r, p, h->len);
    int kind = pc_get_u8(&r);
    pc_get_u64(&r);
    pc_get_u64(&r);
    pc_get_u8(&r);
    char name[LEV_NAME_MAX + 1];
    pc_get_str(&r, name, sizeof name);
    pc_get_blob(&r, data, len);
    assert_true(pc_rbuf_done(&r));
    return kind;
}

/* The image inside an envelope (envelope.h), which must be well formed. */
static const uint8_t *s_env_image(const uint8_t *b, size_t len, size_t *ilen)
{
    const uint8_t *chan = NULL, *img = NULL;
    size_t clen = 0;
    const char *why = NULL;
    *ilen = 0;
    if (!pc_env_split(b, len, &chan, &clen, &img, ilen, NULL, NULL, &why))
        fail_msg("%s", why);
    return img;
}

/* Checks an IMAGE or a report (an OUT of kind REPORT) against the VT it
 * names and notes it; other outputs and RESYNC are passed over. */
static void s_note(s_seen *s, const pc_hdr *h, const uint8_t *p)
{
    if (h->type == PC_X_RESYNC)
        return;
    if (h->type == PC_X_OUT) {
        const void *data;
        size_t dlen;
        if (s_out_kind(h, p, &data, &dlen) != RT_OUT_REPORT)
            return;
        assert_int_equal(dlen, sizeof(long));
        /* A number seen before is a re-send (an output sent again at
         * a resume, or before its acknowledgement arrived); a new one
         * comes next in order. */
        if (h->seq <= s->report_seq)
            return;
        if (!s->reports)
            s->first_report = h->seq; /* a resumed VT: after what was acknowledged */
        else
            assert_true(h->seq == s->report_seq + 1);
        s->report_seq = h->seq;
        s->reports++;
        return;
    }
    size_t len, ilen = 0;
    const uint8_t *b = s_blob_only(p, h->len, &len);
    rt_image_info info;
    const uint8_t *im = s_env_image(b, len, &ilen);
    assert_int_equal(rt_image_info_get(im, ilen, &info), 0);
    assert_true(info.vt_id == h->vt);
    assert_int_equal(info.epoch, h->epoch);
    /* seq: the input position the image stands at; nothing is delivered
     * to these VTs, so it is the first */
    assert_true(h->seq == 1);
    s->image_seq = h->seq;
    s->images++;
    if (s->keep && !s->img && s->reports >= s->keep_from) {
        s->img = malloc(len);
        assert_non_null(s->img);
        memcpy(s->img, b, len);
        s->img_len = len;
    }
}

/* As a daemon does with an image lent in a slot (IMAGE_SLOT, STOPPED_SLOT):
 * maps it (its memfd comes along the first time), and turns the record
 * into the IMAGE or STOPPED it stands for, a copy in *p; the slot then
 * goes back at once (SLOT_FREE). Other records are counted and left as
 * they are. */
static void s_unslot(s_exe *e, pc_hdr *h, uint8_t **p)
{
    if (h->type == PC_X_IMAGE)
        e->as_bytes++;
    bool stopped = h->type == PC_X_STOPPED_SLOT;
    if (h->type != PC_X_IMAGE_SLOT && !stopped)
        return;
    const char *why = NULL;
    int fd = pc_slot_lend_has_fd(*p, h->len) ? pc_chan_take_fd(e->c) : -1;
    pc_buf *b = pc_slotmaps_take(e->maps, *p, h->len, fd, &why);
    if (!b)
        fail_msg("image slot refused: %s", why);
    size_t len = pc_buf_len(b), pre = stopped ? 4 + 4 : 0; /* STOPPED: i32 0, s "" first */
    uint8_t *q = malloc(pre + 4 + len);
    assert_non_null(q);
    memset(q, 0, pre);
    rt_le32_put(q + pre, (uint32_t)len);
    memcpy(q + pre + 4, pc_buf_data(b), len);
    pc_buf_drop(&b);
    free(*p);
    *p = q;
    h->type = stopped ? PC_X_STOPPED : PC_X_IMAGE;
    h->len = (uint32_t)(pre + 4 + len);
    if (stopped)
        e->stops_lent++;
    else
        e->lent++;
    uint32_t ids[PC_SLOTS_MAX];
    int n = pc_slotmaps_returned(e->maps, ids, PC_SLOTS_MAX);
    assert_int_equal(n, 1);
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_u32(&w, ids[0]);
    assert_int_equal(pc_chan_send_buf(e->c, pc_hdr_make(PC_X_SLOT_FREE, 0, 0, 0, 0), &w), 0);
    pc_wbuf_free(&w);
}

/* Acknowledges a VT's outputs up to seq, as its deployer does. */
static void s_ack(s_exe *e, uint64_t vt, uint32_t epoch, uint64_t seq)
{
    s_send(e, pc_hdr_make(PC_X_ACK, 0, vt, epoch, seq), &(pc_wbuf){0});
}

/* Waits for the next record of `type` (of VT vt unless 0; PC_X_REPORT
 * stands for an OUT of kind REPORT); IMAGEs, OUTs and RESYNCs before it
 * go to seen (of VT vt only) or are passed over; any other record fails
 * the test. Every output is acknowledged (unless e->no_ack), as a
 * deployer does: a VT's DONE waits for that. The caller frees *p. */
static void s_expect(s_exe *e, uint16_t type, uint64_t vt, s_seen *seen, pc_hdr *h, uint8_t **p)
{
    for (;;) {
        const char *why = NULL;
        *p = NULL;
        int r = pc_test_recv(e->c, h, p, &why, LIMIT_MS);
        if (r != 1)
            fail_msg("waiting for %s: the channel ended: %s", pc_type_name(type), why);
        s_unslot(e, h, p);
        if (h->type == PC_X_OUT && !e->no_ack)
            s_ack(e, h->vt, h->epoch, h->seq);
        const void *d;
        size_t dl;
        bool is_report = h->type == PC_X_OUT && s_out_kind(h, *p, &d, &dl) == RT_OUT_REPORT;
        if ((h->type == type || (type == PC_X_REPORT && is_report)) && (!vt || h->vt == vt))
            return;
        e->slot_frees += h->type == PC_X_RESUME_FREE;
        if (h->type != PC_X_IMAGE && h->type != PC_X_OUT && h->type != PC_X_RESYNC &&
            h->type != PC_X_RESUME_FREE)
            fail_msg("waiting for %s of VT %llu, got %s of VT %llu", pc_type_name(type),
                     (unsigned long long)vt, pc_type_name(h->type), (unsigned long long)h->vt);
        if (seen && h->vt == vt && h->type != PC_X_RESUME_FREE)
            s_note(seen, h, *p);
        free(*p);
    }
}

/* Sends the module (its bytes with damage at byte `damage` unless it is
 * negative) and returns MODULE_OK's error; its detail goes to detail. */
static int s_module(s_exe *e, long damage, char *detail, size_t cap)
{
    uint8_t *b = malloc(g_mod_len);
    assert_non_null(b);
    memcpy(b, g_mod, g_mod_len);
    if (damage >= 0)
        b[damage] ^= 0x5A;
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_raw(&w, g_hash, PC_HASH_LEN);
    pc_put_u64(&w, rt_taskmod_digest(g_mod, g_mod_len));
    pc_put_blob(&w, b, g_mod_len);
    free(b);
    s_send(e, pc_hdr_make(PC_X_MODULE, 0, 0, 0, 77), &w);
    pc_hdr h;
    uint8_t *p;
    s_expect(e, PC_X_MODULE_OK, 0, NULL, &h, &p);
    assert_true(h.seq == 77);
    pc_rbuf r;
    pc_rbuf_init(&r, p, h.len);
    int err = pc_get_i32(&r);
    assert_true(pc_get_str(&r, detail, cap));
    assert_true(pc_rbuf_done(&r));
    free(p);
    return err;
}

/* Configures a started executor and loads the module. */
static void s_configure(s_exe *e, int checkpoint_ms, int threads)
{
    s_config(e, checkpoint_ms, threads);
    char detail[512];
    assert_int_equal(s_module(e, -1, detail, sizeof detail), 0);
    assert_string_equal(detail, "");
}

/* An executor with the module loaded and the given configuration. */
static void s_ready(s_exe *e, int checkpoint_ms, int threads)
{
    s_start(e, "0");
    s_configure(e, checkpoint_ms, threads);
}

static void s_run(s_exe *e, uint64_t vt, uint32_t epoch, const char *task, const void *arg,
                  size_t len)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_str(&w, task);
    pc_put_blob(&w, arg, len);
    s_send(e, pc_hdr_make(PC_X_RUN, 0, vt, epoch, 0), &w);
}

static void s_run_spin(s_exe *e, uint64_t vt, uint32_t epoch)
{
    long arg[2] = {SPIN_STEPS, SPIN_WORK};
    s_run(e, vt, epoch, "pc_spin", arg, sizeof arg);
}

/* An executor (checkpoints every checkpoint_ms) running pc_spin as VT vt
 * of epoch `epoch`, past its first report. */
static void s_spinning(s_exe *e, int checkpoint_ms, uint64_t vt, uint32_t epoch)
{
    s_ready(e, checkpoint_ms, 2);
    s_run_spin(e, vt, epoch);
    pc_hdr h;
    uint8_t *p;
    s_expect(e, PC_X_REPORT, vt, NULL, &h, &p);
    free(p);
}

static void s_resume(s_exe *e, uint64_t vt, uint32_t epoch, const uint8_t *img, size_t len)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_blob(&w, img, len);
    s_send(e, pc_hdr_make(PC_X_RESUME, 0, vt, epoch, 0), &w);
}

/* As a worker daemon resumes through its resume slot (imgslot.h): img
 * written into rs (made or grown), X_RESUME_SLOT with the memfd when the
 * executor has not mapped it at that size. */
static void s_resume_slot(s_exe *e, pc_rslot *rs, uint64_t vt, uint32_t epoch, const uint8_t *img,
                          size_t len)
{
    uint8_t rec[PC_RSLOT_REC_LEN];
    int fd = -1;
    assert_int_equal(pc_rslot_fill(rs, img, len, rec, &fd), 0);
    struct iovec io = {rec, sizeof rec};
    pc_hdr h = pc_hdr_make(PC_X_RESUME_SLOT, 0, vt, epoch, 0);
    assert_int_equal(fd >= 0 ? pc_chan_send_fd(e->c, h, &io, 1, fd) : pc_chan_send(e->c, h, &io, 1),
                     0);
}

/* An X_RESUME_SLOT record as given: rec[n], with fd passed along (-1: none). */
static void s_resume_slot_raw(s_exe *e, uint64_t vt, uint32_t epoch, const uint8_t *rec, size_t n,
                              int fd)
{
    struct iovec io = {(void *)rec, n};
    pc_hdr h = pc_hdr_make(PC_X_RESUME_SLOT, 0, vt, epoch, 0);
    assert_int_equal(fd >= 0 ? pc_chan_send_fd(e->c, h, &io, 1, fd) : pc_chan_send(e->c, h, &io, 1),
                     0);
}

/* Reads the err and detail that start a payload; the reader goes on. */
static int s_err_detail(pc_rbuf *r, const pc_hdr *h, const uint8_t *p, char *detail, size_t cap)
{
    pc_rbuf_init(r, p, h->len);
    int err = pc_get_i32(r);
    assert_true(pc_get_str(r, detail, cap));
    return err;
}

/* Waits for DONE of vt at epoch and returns its 8-byte result (which must
 * have no error). */
static uint64_t s_done_u64(s_exe *e, uint64_t vt, uint32_t epoch, s_seen *seen)
{
    pc_hdr h;
    uint8_t *p;
    s_expect(e, PC_X_DONE, vt, seen, &h, &p);
    assert_int_equal(h.epoch, epoch);
    pc_rbuf r;
    char detail[512];
    int err = s_err_detail(&r, &h, p, detail, sizeof detail);
    if (err)
        fail_msg("VT %llu failed: %s: %s", (unsigned long long)vt, lev_strerror(err), detail);
    const void *res;
    size_t len;
    assert_true(pc_get_blob(&r, &res, &len));
    assert_true(pc_rbuf_done(&r));
    assert_int_equal(len, 8);
    uint64_t v;
    memcpy(&v, res, 8);
    free(p);
    return v;
}

/* Runs pc_sum(n) as VT vt (epoch 1) and checks its result. */
static void s_sum(s_exe *e, uint64_t vt, long n)
{
    s_run(e, vt, 1, "pc_sum", &n, sizeof n);
    assert_true(s_done_u64(e, vt, 1, NULL) == (uint64_t)(n * (n - 1) / 2));
}

/* Waits for FAILED of vt; its error must be err and its detail hold what. */
static void s_expect_failed(s_exe *e, uint64_t vt, int err, const char *what)
{
    pc_hdr h;
    uint8_t *p;
    s_expect(e, PC_X_FAILED, vt, NULL, &h, &p);
    pc_rbuf r;
    char detail[512];
    int got = s_err_detail(&r, &h, p, detail, sizeof detail);
    assert_true(pc_rbuf_done(&r));
    free(p);
    if (got != err || !strstr(detail, what))
        fail_msg("expected FAILED %d with \"%s\", got %d: %s", err, what, got, detail);
}

/* The result of `task` run straight, without checkpoints; it must report
 * 8 times. */
static uint64_t s_straight(const char *task, const void *arg, size_t len)
{
    s_exe e;
    s_ready(&e, 0, 1);
    s_run(&e, 2, 1, task, arg, len);
    s_seen seen = {0};
    uint64_t result = s_done_u64(&e, 2, 1, &seen);
    assert_int_equal(seen.images, 0);
    assert_int_equal(seen.reports, 8);
    s_finish(&e);
    return result;
}

/* The result of pc_spin run straight (once). */
static uint64_t s_spin_straight(void)
{
    static uint64_t result;
    static bool known;
    if (!known) {
        long arg[2] = {SPIN_STEPS, SPIN_WORK};
        result = s_straight("pc_spin", arg, sizeof arg);
        known = true;
    }
    return result;
}

/* ===================================================================
 * Executor tests
 * =================================================================== */

static void t_ready_and_exit(void **state)
{
    (void)state;
    s_exe e;
    s_start(&e, "0");
    s_finish(&e);
}

static void t_module(void **state)
{
    (void)state;
    s_exe e;
    s_start(&e, "0");
    char detail[512];
    assert_int_equal(s_module(&e, (long)g_mod_len / 2, detail, sizeof detail), LEV_EMODULE);
    assert_non_null(strstr(detail, "damaged"));
    /* Before any module: a RUN fails, naming why. */
    long n = 10;
    s_run(&e, 5, 1, "pc_sum", &n, sizeof n);
    s_expect_failed(&e, 5, LEV_EMODULE, "no task module is loaded");
    /* A payload cut short. */
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_raw(&w, g_hash, 10);
    s_send(&e, pc_hdr_make(PC_X_MODULE, 0, 0, 0, 77), &w);
    pc_hdr h;
    uint8_t *p;
    s_expect(&e, PC_X_MODULE_OK, 0, NULL, &h, &p);
    pc_rbuf r;
    assert_int_equal(s_err_detail(&r, &h, p, detail, sizeof detail), LEV_EINVAL);
    assert_non_null(strstr(detail, "malformed MODULE"));
    free(p);
    assert_int_equal(s_module(&e, -1, detail, sizeof detail), 0);
    assert_int_equal(s_module(&e, -1, detail, sizeof detail), 0); /* again: reused */
    s_finish(&e);
}

/* A VT's DONE never overtakes its outputs: until they are acknowledged it
 * waits, and the executor sends the outbox again (every 2 s) instead;
 * once they are, DONE follows. */
static void t_done_waits_for_ack(void **state)
{
    (void)state;
    s_exe e;
    s_ready(&e, 0, 2);
    e.no_ack = true;
    s_run_spin(&e, 5, 1);
    pc_hdr h;
    uint8_t *p;
    uint64_t last = 0;
    for (int i = 0; i < 8; i++) { /* its eight reports, unacknowledged */
        s_expect(&e, PC_X_REPORT, 5, NULL, &h, &p);
        assert_true(h.seq > last);
        last = h.seq;
        free(p);
    }
    /* the VT has ended; what comes next is its outbox again, not DONE */
    s_expect(&e, PC_X_OUT, 5, NULL, &h, &p);
    free(p);
    assert_true(h.seq <= last);
    s_ack(&e, 5, 1, last);
    e.no_ack = false;
    s_done_u64(&e, 5, 1, NULL);
    s_finish(&e);
}

static void t_run(void **state)
{
    (void)state;
    s_exe e;
    s_ready(&e, 0, 2);
    long n = 100000;
    s_run(&e, 5, 3, "pc_sum", &n, sizeof n);
    assert_true(s_done_u64(&e, 5, 3, NULL) == (uint64_t)(n * (n - 1) / 2));
    s_run(&e, 6, 1, "pc_nope", &n, sizeof n);
    s_expect_failed(&e, 6, LEV_EMODULE, "no task named pc_nope");
    s_run(&e, 7, 1, "pc_mix", &n, sizeof n); /* a function, not a task */
    s_expect_failed(&e, 7, LEV_EMODULE, "no task named pc_mix");
    s_run(&e, 1, 1, "pc_sum", &n, sizeof n);
    s_expect_failed(&e, 1, LEV_EINVAL, "reserved");
    /* A RUN without its argument; a record the executor does not take. */
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_str(&w, "pc_sum");
    s_send(&e, pc_hdr_make(PC_X_RUN, 0, 9, 1, 0), &w);
    s_expect_failed(&e, 9, LEV_EINVAL, "malformed RUN: payload truncated");
    s_send(&e, pc_hdr_make(PC_X_DONE, 0, 9, 1, 0), &(pc_wbuf){0});
    /* The same id twice while it runs. */
    s_run_spin(&e, 8, 1);
    s_run(&e, 8, 1, "pc_sum", &n, sizeof n);
    s_expect_failed(&e, 8, LEV_EBUSY, "runs here already");
    s_done_u64(&e, 8, 1, NULL);
    /* Once it ended, the id is free again. */
    s_run(&e, 8, 2, "pc_sum", &n, sizeof n);
    assert_true(s_done_u64(&e, 8, 2, NULL) == (uint64_t)(n * (n - 1) / 2));
    s_finish(&e);
}

/* The recovery barrier: a malformed FLUSH is not answered, a good one is
 * (after any determinant held), with its number; positions fixed for a
 * VT that is not here, or malformed, change nothing, and the executor
 * goes on. */
static void t_barrier(void **state)
{
    (void)state;
    s_exe e;
    s_ready(&e, 0, 1);
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_put_u32(&w, 5); /* five fences, none there */
    s_send(&e, pc_hdr_make(PC_X_FLUSH, 0, 0, 0, 3), &w);
    pc_wbuf_free(&w);
    pc_wbuf_init(&w);
    pc_put_u32(&w, 1);
    pc_put_u64(&w, 9);
    pc_put_u32(&w, 2);
    s_send(&e, pc_hdr_make(PC_X_FLUSH, 0, 0, 0, 4), &w);
    pc_wbuf_free(&w);
    pc_hdr h;
    uint8_t *p;
    s_expect(&e, PC_X_FLUSHED, 0, NULL, &h, &p);
    assert_int_equal(h.seq, 4);
    assert_int_equal(h.len, 0);
    free(p);
    pc_wbuf_init(&w);
    pc_cx_det d = {.vt = 9, .pos = 1, .from = 0, .seq = 1, .epoch = 2};
    pc_cx_dets_encode(&w, &d, 1);
    s_send(&e, pc_hdr_make(PC_X_FIX, 0, 9, 2, 0), &w);
    pc_wbuf_free(&w);
    pc_wbuf_init(&w);
    pc_put_u32(&w, 3); /* three positions, none there */
    s_send(&e, pc_hdr_make(PC_X_FIX, 0, 9, 2, 0), &w);
    pc_wbuf_free(&w);
    /* its number and where VTs run; then a number out of range, and a
     * placement on an executor out of range */
    for (int i = 0; i < 3; i++) {
        pc_wbuf_init(&w);
        pc_put_u32(&w, 1);
        pc_put_u64(&w, 9);
        pc_put_u32(&w, 2);
        pc_put_u32(&w, i < 2 ? 1 : 99);
        s_send(&e, pc_hdr_make(PC_X_PLACE, 0, 0, 1, i == 1 ? 64 : 3), &w);
        pc_wbuf_free(&w);
    }
    s_sum(&e, 5, 1000);
    s_finish(&e);
}

/* Runs `task` with a checkpoint every 10 ms: IMAGEs come, naming the VT,
 * and the run gives the straight result; an image taken past half of the
 * run, resumed in another executor, gives it too. */
static void s_images_resume(const char *task, const void *arg, size_t len, uint64_t straight)
{
    s_exe e;
    s_ready(&e, 10, 1);
    s_run(&e, 42, 3, task, arg, len);
    s_seen seen = {.keep = true, .keep_from = 4};
    assert_true(s_done_u64(&e, 42, 3, &seen) == straight);
    assert_int_equal(seen.reports, 8);
    assert_int_equal(seen.first_report, 1);
    if (seen.images < 2 || !seen.img)
        fail_msg("%d images of a run with a checkpoint every 10 ms", seen.images);
    /* lent in slots, unless LEV_IMAGE_SLOTS=0 */
    bool bytes = g_slots_env && !strcmp(g_slots_env, "0");
    assert_true(bytes ? e.as_bytes > 0 && e.lent == 0 : e.lent > 0 && e.as_bytes == 0);
    s_finish(&e);

    s_exe other;
    s_ready(&other, 0, 1);
    s_resume(&other, 42, 4, seen.img, seen.img_len);
    s_seen after = {0};
    assert_true(s_done_u64(&other, 42, 4, &after) == straight);
    /* The reports issued before the image and not acknowledged when it
     * was taken come again from its outbox, the rest as it goes on: with
     * those acknowledged before, every output number once, in order
     * (s_note checks the order). */
    assert_true(after.first_report >= 1 && after.first_report <= 8);
    assert_int_equal(after.reports, 8 - (int)(after.first_report - 1));
    assert_int_equal(after.report_seq, 8);
    s_finish(&other);
    free(seen.img);
}

static void t_images_resume(void **state)
{
    (void)state;
    long arg[2] = {SPIN_STEPS, SPIN_WORK};
    s_images_resume("pc_spin", arg, sizeof arg, s_spin_straight());
}

/* The same with images sent as bytes through the channel
 * (LEV_IMAGE_SLOTS=0), as where memfds cannot be made. */
static void t_images_as_bytes(void **state)
{
    (void)state;
    long arg[2] = {SPIN_STEPS, SPIN_WORK};
    g_slots_env = "0";
    s_images_resume("pc_spin", arg, sizeof arg, s_spin_straight());
    g_slots_env = NULL;
}

/* The same with 16 MiB of live heap in every image. */
static void t_big_resume(void **state)
{
    (void)state;
    long arg[3] = {16, SPIN_STEPS, SPIN_WORK / 4};
    s_images_resume("pc_big", arg, sizeof arg, s_straight("pc_big", arg, sizeof arg));
}

/* Resumes through the resume slot, as a worker daemon does: the memfd
 * goes along the first time and when the slot grew, not between; the
 * slot comes back after each (X_RESUME_FREE); the results are the
 * straight ones. */
static void t_resume_slot(void **state)
{
    (void)state;
    long arg[2] = {SPIN_STEPS, SPIN_WORK};
    long big[3] = {16, SPIN_STEPS, SPIN_WORK / 4};
    uint8_t *img[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    uint64_t straight[2] = {s_spin_straight(), s_straight("pc_big", big, sizeof big)};
    for (int k = 0; k < 2; k++) { /* an image of pc_spin, then one of pc_big (16 MiB) */
        s_exe e;
        s_ready(&e, 10, 1);
        s_run(&e, 42, 3, k ? "pc_big" : "pc_spin", k ? (void *)big : (void *)arg,
              k ? sizeof big : sizeof arg);
        s_seen seen = {.keep = true, .keep_from = 4};
        assert_true(s_done_u64(&e, 42, 3, &seen) == straight[k]);
        assert_non_null(seen.img);
        img[k] = seen.img;
        len[k] = seen.img_len;
        s_finish(&e);
    }
    assert_true(len[1] > len[0] + ((size_t)1 << 20)); /* the slot grows for the second */
    s_exe e;
    s_ready(&e, 0, 1);
    pc_rslot rs;
    pc_rslot_init(&rs);
    int order[3] = {0, 0, 1}; /* memfd along, none (mapped), along again (grown) */
    for (int i = 0; i < 3; i++) {
        int k = order[i];
        bool along = !rs.mapped || rs.size < len[k];
        s_resume_slot(&e, &rs, 42, (uint32_t)(10 + i), img[k], len[k]);
        s_seen after = {0};
        assert_true(s_done_u64(&e, 42, (uint32_t)(10 + i), &after) == straight[k]);
        pc_hdr h;
        uint8_t *p;
        if (e.slot_frees == i) /* it came after the DONE */
            s_expect(&e, PC_X_RESUME_FREE, 42, NULL, &h, &p), free(p), e.slot_frees++;
        assert_int_equal(e.slot_frees, i + 1);
        pc_rslot_back(&rs);
        assert_true(i != 1 || !along);
        assert_true(i == 1 || along);
    }
    pc_rslot_close(&rs);
    s_finish(&e);
    free(img[0]);
    free(img[1]);
}

/* X_RESUME_SLOT refused, the VT failed with the reason and the slot given
 * back each time: a slot never mapped, a memfd named and none came, one
 * that came unnamed, one not sealed against shrinking, one smaller than
 * the record says, a length past the slot, a malformed record; then a
 * good one resumes. */
static void t_resume_slot_bad(void **state)
{
    (void)state;
    s_exe e;
    s_start(&e, "0");
    s_config(&e, 5, 1);
    char detail[512];
    assert_int_equal(s_module(&e, -1, detail, sizeof detail), 0);
    s_run_spin(&e, 9, 1);
    s_seen seen = {.keep = true};
    uint64_t straight = s_done_u64(&e, 9, 1, &seen);
    assert_non_null(seen.img);
    uint8_t rec[PC_RSLOT_REC_LEN];
    rt_le64_put(rec, (uint64_t)1 << 20);
    rt_le64_put(rec + 8, seen.img_len);
    rec[16] = 0;
    struct {
        int fd_kind; /* 0 none, 1 a sealed memfd of 1 MiB, 2 unsealed, 3 of 4 KiB */
        uint8_t along;
        uint64_t len;
        size_t n;
        const char *says;
    } bad[] = {
        {0, 0, seen.img_len, PC_RSLOT_REC_LEN, "its memfd never came"},
        {0, 1, seen.img_len, PC_RSLOT_REC_LEN, "the record names a memfd and none came"},
        {1, 0, seen.img_len, PC_RSLOT_REC_LEN, "a memfd came that it does not name"},
        {2, 1, seen.img_len, PC_RSLOT_REC_LEN, "not a memfd sealed against shrinking"},
        {3, 1, seen.img_len, PC_RSLOT_REC_LEN, "smaller than the record's size"},
        {1, 1, ((uint64_t)1 << 20) + 1, PC_RSLOT_REC_LEN, "its length is 0 or past the slot"},
        {0, 0, seen.img_len, PC_RSLOT_REC_LEN - 1, "its record is malformed"},
    };
    int frees = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int fd = -1;
        if (bad[i].fd_kind) {
            fd = memfd_create("test-slot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
            assert_true(fd >= 0);
            assert_int_equal(ftruncate(fd, bad[i].fd_kind == 3 ? 4096 : (off_t)1 << 20), 0);
            if (bad[i].fd_kind != 2)
                assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
        }
        rt_le64_put(rec + 8, bad[i].len);
        rec[16] = bad[i].along;
        s_resume_slot_raw(&e, 9, 2, rec, bad[i].n, fd);
        if (fd >= 0)
            close(fd);
        s_expect_failed(&e, 9, LEV_EIMAGE, bad[i].says);
        pc_hdr h;
        uint8_t *p;
        s_expect(&e, PC_X_RESUME_FREE, 9, NULL, &h, &p);
        free(p);
        frees++;
    }
    /* damage in the image is found in the mapping as in bytes */
    pc_rslot rs;
    pc_rslot_init(&rs);
    seen.img[seen.img_len / 2] ^= 0x11;
    s_resume_slot(&e, &rs, 9, 2, seen.img, seen.img_len);
    seen.img[seen.img_len / 2] ^= 0x11;
    s_expect_failed(&e, 9, LEV_EIMAGE, "");
    pc_hdr h;
    uint8_t *p;
    s_expect(&e, PC_X_RESUME_FREE, 9, NULL, &h, &p);
    free(p);
    pc_rslot_back(&rs);
    /* a slot that is lent is not written again */
    uint8_t r2[PC_RSLOT_REC_LEN];
    int fd2 = -1;
    s_resume_slot(&e, &rs, 9, 2, seen.img, seen.img_len);
    assert_int_equal(pc_rslot_fill(&rs, seen.img, seen.img_len, r2, &fd2), -1);
    s_seen after = {0};
    assert_true(s_done_u64(&e, 9, 2, &after) == straight);
    pc_rslot_close(&rs);
    assert_int_equal(frees, (int)(sizeof bad / sizeof *bad));
    s_finish(&e);
    free(seen.img);
}

static void t_resume_bad(void **state)
{
    (void)state;
    s_exe e;
    s_start(&e, "0");
    s_config(&e, 5, 1);
    static const uint8_t junk[64] = "not an image";
    s_resume(&e, 9, 1, junk, sizeof junk);
    s_expect_failed(&e, 9, LEV_EIMAGE, "");
    char detail[512];
    assert_int_equal(s_module(&e, -1, detail, sizeof detail), 0);
    s_run_spin(&e, 9, 1);
    s_seen seen = {.keep = true};
    s_done_u64(&e, 9, 1, &seen);
    assert_non_null(seen.img);
    s_resume(&e, 10, 1, seen.img, seen.img_len);
    s_expect_failed(&e, 10, LEV_EIMAGE, "is of virtual thread 9, not 10");
    /* the executor's causal state of another VT than the image's */
    const uint8_t *chan = NULL, *img = NULL, *cx = NULL;
    size_t clen = 0, ilen = 0, cxlen = 0;
    const char *why = NULL;
    assert_true(pc_env_split(seen.img, seen.img_len, &chan, &clen, &img, &ilen, &cx, &cxlen, &why));
    assert_true(cxlen >= 8);
    uint8_t *cxw = seen.img + (cx - seen.img), keep[8];
    memcpy(keep, cxw, 8);
    rt_le64_put(cxw, 77);
    s_resume(&e, 9, 2, seen.img, seen.img_len);
    s_expect_failed(&e, 9, LEV_EIMAGE, "causal state is of virtual thread 77");
    /* ... or cut short */
    memcpy(cxw, keep, 8);
    rt_le32_put(seen.img + seen.img_len - 4, (uint32_t)cxlen - 5);
    s_resume(&e, 9, 2, seen.img, seen.img_len);
    s_expect_failed(&e, 9, LEV_EIMAGE, "");
    rt_le32_put(seen.img + seen.img_len - 4, (uint32_t)cxlen);
    seen.img[seen.img_len / 2] ^= 0x11;
    s_resume(&e, 9, 2, seen.img, seen.img_len);
    s_expect_failed(&e, 9, LEV_EIMAGE, "");
    s_finish(&e);
    free(seen.img);
}

static void t_stop_resume(void **state)
{
    (void)state;
    uint64_t straight = s_spin_straight();
    s_exe e;
    s_spinning(&e, 0, 20, 1);
    s_run_spin(&e, 21, 1);
    s_sum(&e, 22, 1000); /* a VT that ends while others run */
    pc_hdr h;
    uint8_t *p;
    s_send(&e, pc_hdr_make(PC_X_STOP, 0, 99, 0, 0), &(pc_wbuf){0});
    s_expect(&e, PC_X_STOPPED, 99, NULL, &h, &p);
    pc_rbuf r;
    char detail[512];
    assert_int_equal(s_err_detail(&r, &h, p, detail, sizeof detail), LEV_ENOVT);
    free(p);
    s_send(&e, pc_hdr_make(PC_X_STOP, 0, 0, 0, 0), &(pc_wbuf){0});
    uint8_t *img[2] = {NULL, NULL};
    size_t len[2];
    for (int i = 0; i < 2; i++) {
        s_expect(&e, PC_X_STOPPED, 0, NULL, &h, &p);
        assert_true(h.vt == 20 || h.vt == 21);
        int k = (int)(h.vt - 20);
        assert_null(img[k]);
        int err = s_err_detail(&r, &h, p, detail, sizeof detail);
        if (err)
            fail_msg("STOPPED with %s: %s", lev_strerror(err), detail);
        const void *b;
        assert_true(pc_get_blob(&r, &b, &len[k]));
        assert_true(pc_rbuf_done(&r));
        rt_image_info info;
        size_t ilen;
        const uint8_t *im = s_env_image(b, len[k], &ilen);
        assert_int_equal(rt_image_info_get(im, ilen, &info), 0);
        assert_true(info.vt_id == h.vt);
        img[k] = malloc(len[k]);
        memcpy(img[k], b, len[k]);
        free(p);
    }
    assert_int_equal(e.stops_lent, 2); /* both images lent in slots, no copy */
    s_finish(&e);

    s_exe other;
    s_ready(&other, 0, 2);
    for (int k = 0; k < 2; k++)
        s_resume(&other, 20 + (uint64_t)k, 2, img[k], len[k]);
    for (int k = 0; k < 2; k++) { /* in either order */
        s_expect(&other, PC_X_DONE, 0, NULL, &h, &p);
        assert_true(h.vt == 20 || h.vt == 21);
        assert_int_equal(h.epoch, 2);
        int err = s_err_detail(&r, &h, p, detail, sizeof detail);
        const void *res;
        size_t n;
        assert_int_equal(err, 0);
        assert_true(pc_get_blob(&r, &res, &n));
        assert_int_equal(n, sizeof straight);
        assert_memory_equal(res, &straight, n);
        free(p);
        free(img[k]);
    }
    s_finish(&other);
}

static void t_cancel(void **state)
{
    (void)state;
    s_exe e;
    s_spinning(&e, 5, 30, 5);
    pc_hdr h;
    uint8_t *p;
    s_send(&e, pc_hdr_make(PC_X_CANCEL, 0, 30, 5, 0), &(pc_wbuf){0}); /* not older: stays */
    s_send(&e, pc_hdr_make(PC_X_CANCEL, 0, 30, 6, 0), &(pc_wbuf){0});
    long n = 1000;
    s_run(&e, 30, 6, "pc_sum", &n, sizeof n); /* the id is free at once */
    /* Neither DONE of epoch 5 nor anything of it after DONE of epoch 6. */
    assert_true(s_done_u64(&e, 30, 6, NULL) == 499500);
    s_run(&e, 31, 1, "pc_sum", &n, sizeof n);
    for (;;) {
        const char *why;
        assert_int_equal(pc_test_recv(e.c, &h, &p, &why, LIMIT_MS), 1);
        free(p);
        if (h.type == PC_X_DONE && h.vt == 31)
            break;
        if (h.vt == 30)
            fail_msg("%s of the canceled VT (epoch %u)", pc_type_name(h.type), h.epoch);
    }
    s_finish(&e);
}

/* A VT whose state outgrows the VC's limit: its first checkpoint image
 * above it is not sent, and the VT ends with LEV_ERANGE, its detail naming
 * the limit and the option; a VT within it in the same executor ends
 * well. */
static void t_state_limit(void **state)
{
    (void)state;
    s_exe e;
    g_lim_state = 1 << 20;
    s_ready(&e, 20, 2);
    g_lim_state = 0;
    long arg[3] = {8, SPIN_STEPS, SPIN_WORK}; /* 8 MiB of heap */
    s_run(&e, 40, 1, "pc_big", arg, sizeof arg);
    pc_hdr h;
    uint8_t *p;
    s_seen seen = {0};
    s_expect(&e, PC_X_DONE, 40, &seen, &h, &p);
    assert_int_equal(seen.images, 0);
    pc_rbuf r;
    char detail[512];
    int err = s_err_detail(&r, &h, p, detail, sizeof detail);
    free(p);
    if (err != LEV_ERANGE || !strstr(detail, "above the VC's limit of 1048576 bytes per VT") ||
        !strstr(detail, "--max-vt-memory"))
        fail_msg("expected DONE with LEV_ERANGE and the limit, got %d: %s", err, detail);
    s_sum(&e, 41, 1000);
    s_finish(&e);
}

static void t_crash(void **state)
{
    (void)state;
    s_exe e;
    s_ready(&e, 0, 2);
    s_run(&e, 11, 4, "pc_crash", NULL, 0);
    pc_hdr h;
    uint8_t *p;
    s_expect(&e, PC_X_CRASH, 0, NULL, &h, &p);
    assert_true(h.vt == 11);
    assert_int_equal(h.epoch, 4);
    pc_rbuf r;
    pc_rbuf_init(&r, p, h.len);
    assert_int_equal(pc_get_i32(&r), SIGSEGV);
    assert_true(pc_rbuf_done(&r));
    free(p);
    const char *why = NULL;
    assert_int_equal(pc_test_recv(e.c, &h, &p, &why, LIMIT_MS), LEV_EPEER);
    assert_non_null(strstr(why, "closed"));
    int st = s_reap(&e);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGSEGV);
    pc_chan_destroy(&e.c);
    pc_slotmaps_destroy(&e.maps);
}

static void t_daemon_gone(void **state)
{
    (void)state;
    s_exe e;
    s_spinning(&e, 5, 12, 1);
    s_finish(&e); /* cancels the running VT and exits 0 */
}

/* The executor's parent (its daemon) is killed while the executor runs
 * a VT and its channel stays open: the executor dies too. */
static void t_parent_dies(void **state)
{
    (void)state;
    int sv[2], pp[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
    pid_t daemon = fork();
    assert_true(daemon >= 0);
    if (daemon == 0) {
        pid_t ex = fork();
        if (ex == 0)
            s_exec_executor(sv[1], "0");
        if (write(pp[1], &ex, sizeof ex) != (ssize_t)sizeof ex)
            _exit(1);
        for (;;)
            pause();
    }
    close(sv[1]);
    close(pp[1]);
    pid_t ex = -1;
    assert_int_equal(read(pp[0], &ex, sizeof ex), (ssize_t)sizeof ex);
    close(pp[0]);
    assert_true(ex > 0);
    s_exe e;
    e.pidfd = (int)syscall(SYS_pidfd_open, ex, 0);
    assert_true(e.pidfd >= 0);
    s_adopt(&e, ex, sv[0]);
    s_configure(&e, 0, 1);
    s_run_spin(&e, 16, 1);
    pc_hdr h;
    uint8_t *p;
    s_expect(&e, PC_X_REPORT, 16, NULL, &h, &p);
    free(p);

    assert_int_equal(kill(daemon, SIGKILL), 0);
    assert_int_equal(waitpid(daemon, NULL, 0), daemon);
    struct pollfd pf = {.fd = e.pidfd, .events = POLLIN};
    int n;
    while ((n = poll(&pf, 1, LIMIT_MS)) < 0 && errno == EINTR)
        ;
    if (n == 0) {
        kill(ex, SIGKILL);
        fail_msg("the executor outlived its daemon by %d ms", LIMIT_MS);
    }
    const char *why = NULL;
    int r;
    while ((r = pc_test_recv(e.c, &h, &p, &why, LIMIT_MS)) == 1)
        free(p); /* what it sent before it died */
    assert_int_equal(r, LEV_EPEER);
    close(e.pidfd);
    pc_chan_destroy(&e.c);
    pc_slotmaps_destroy(&e.maps);
}

/* Scheduling policy and nice value of thread tid of process pid, from
 * /proc (fields 19 and 41 of stat). */
static void s_sched_of(pid_t pid, const char *tid, int *policy, int *nice)
{
    char path[320], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%s/stat", (int)pid, tid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *s = strrchr(buf, ')'); /* after the command name */
    assert_non_null(s);
    int field = 2;
    *policy = *nice = -100;
    for (char *tok = strtok(s + 1, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 19)
            *nice = atoi(tok);
        if (field == 41)
            *policy = atoi(tok);
    }
}

/* Every thread of the executor runs at SCHED_IDLE or nice 19 (low), or
 * else at the test's own priority. */
static void s_assert_threads(const s_exe *e, bool low)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)e->pid);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int threads = 0;
    for (struct dirent *t = readdir(d); t; t = readdir(d)) {
        if (t->d_name[0] == '.')
            continue;
        int policy, nice;
        s_sched_of(e->pid, t->d_name, &policy, &nice);
        threads++;
        if (low && policy != SCHED_IDLE && nice != 19)
            fail_msg("thread %s runs with policy %d, nice %d", t->d_name, policy, nice);
        if (!low && (policy != SCHED_OTHER || nice != getpriority(PRIO_PROCESS, 0)))
            fail_msg("thread %s runs with policy %d, nice %d", t->d_name, policy, nice);
    }
    closedir(d);
    assert_true(threads >= 3); /* main, sender, workers */
}

static void t_priority(void **state)
{
    (void)state;
    for (int low = 1; low >= 0; low--) {
        s_exe e;
        s_start(&e, low ? NULL : "0");
        assert_int_equal(sched_getscheduler(e.pid), low ? SCHED_IDLE : SCHED_OTHER);
        s_configure(&e, 0, 1);
        s_sum(&e, 13, 10);
        s_assert_threads(&e, low);
        s_finish(&e);
    }
}

/* Runs levpeer with args; returns its exit status and stderr. */
static int s_levpeer(char *const argv[], char *err, size_t cap)
{
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, PC_LEVPEER, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap &&
           ((r = read(pipefd[0], err + n, cap - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
        n += r > 0 ? (size_t)r : 0;
    err[n] = '\0';
    close(pipefd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static void t_bad_args(void **state)
{
    (void)state;
    char err[512];
    /* the daemon's own settings */
    assert_int_equal(s_levpeer((char *[]){"levpeer", "--bogus", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "unknown setting 'bogus'"));
    assert_int_equal(s_levpeer((char *[]){"levpeer", "--cores", "x", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "--cores: 'x' is not a number"));
    assert_int_equal(s_levpeer((char *[]){"levpeer", "--cores", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "--cores needs a value"));
    assert_int_equal(
        s_levpeer((char *[]){"levpeer", "--listen", "udp://x:1", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "is not tcp://HOST:PORT"));
    assert_int_equal(s_levpeer((char *[]){"levpeer", "--config", "/nonexistent/levpeer.conf", NULL},
                               err, sizeof err),
                     2);
    assert_non_null(strstr(err, "cannot read '/nonexistent/levpeer.conf'"));
    assert_int_equal(s_levpeer((char *[]){"levpeer", "stray", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "unexpected argument 'stray'"));
    /* no keys and no --insecure: refused, saying how to make keys */
    unsetenv("LEV_INSECURE");
    unsetenv("LEV_KEY");
    assert_int_equal(
        s_levpeer((char *[]){"levpeer", "--listen", "tcp://127.0.0.1:0", NULL}, err, sizeof err),
        2);
    assert_non_null(strstr(err, "no keys"));
    assert_non_null(strstr(err, "levctl keygen NAME"));
    assert_non_null(strstr(err, "--insecure"));
    assert_int_equal(s_levpeer((char *[]){"levpeer", "--insecure=maybe", NULL}, err, sizeof err),
                     2);
    assert_non_null(strstr(err, "--insecure: 'maybe' is not 1, 0, true or false"));
    assert_int_equal(
        s_levpeer((char *[]){"levpeer", "--key", "/nonexistent/mesh.key", NULL}, err, sizeof err),
        2);
    assert_non_null(strstr(err, "/nonexistent/mesh.key"));
    assert_int_equal(s_levpeer((char *[]){"levpeer", "--executor", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "usage"));
    assert_int_equal(
        s_levpeer((char *[]){"levpeer", "--executor", "--fd", "x1", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "descriptor number"));
    assert_int_equal(
        s_levpeer((char *[]){"levpeer", "--executor", "--fd", "200", NULL}, err, sizeof err), 2);
    assert_non_null(strstr(err, "not an open stream socket"));
}

static void *s_embedded_main(void *arg)
{
    return (void *)(intptr_t)pc_exechost_run(*(int *)arg, false);
}

/* An executor on a thread of this process: the same protocol, and none of
 * a process's settings (priority, fault handlers). */
static void t_embedded(void **state)
{
    (void)state;
    rt_init();
    struct sigaction before, after;
    assert_int_equal(sigaction(SIGSEGV, NULL, &before), 0);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    pthread_t th;
    assert_int_equal(GC_pthread_create(&th, NULL, s_embedded_main, &sv[1]), 0);
    s_exe e = {.pidfd = -1};
    s_adopt(&e, getpid(), sv[0]);
    s_configure(&e, 5, 1);
    s_sum(&e, 14, 1000);
    s_run_spin(&e, 15, 1);
    s_seen seen = {0};
    assert_true(s_done_u64(&e, 15, 1, &seen) == s_spin_straight());
    assert_int_equal(seen.reports, 8);
    assert_true(seen.images > 0);

    assert_int_equal(sigaction(SIGSEGV, NULL, &after), 0);
    assert_true(after.sa_handler == before.sa_handler); /* cmocka's, not the executor's */
    assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
    assert_true(e.lent > 0); /* slots work within one process too */
    pc_chan_destroy(&e.c);
    pc_slotmaps_destroy(&e.maps);
    void *rc = (void *)1;
    assert_int_equal(GC_pthread_join(th, &rc), 0);
    assert_null(rc);
}

static int s_setup(void **state)
{
    (void)state;
    g_mod = pc_test_slurp(LEV_TASK_MODULE_PATH, &g_mod_len);
    pc_module_hash(g_mod, g_mod_len, g_hash);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static int s_teardown(void **state)
{
    (void)state;
    free(g_mod);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_ready_and_exit),
        cmocka_unit_test(t_state_limit),
        cmocka_unit_test(t_module),
        cmocka_unit_test(t_run),
        cmocka_unit_test(t_done_waits_for_ack),
        cmocka_unit_test(t_barrier),
        cmocka_unit_test(t_images_resume),
        cmocka_unit_test(t_resume_slot),
        cmocka_unit_test(t_resume_slot_bad),
        cmocka_unit_test(t_images_as_bytes),
        cmocka_unit_test(t_big_resume),
        cmocka_unit_test(t_resume_bad),
        cmocka_unit_test(t_stop_resume),
        cmocka_unit_test(t_cancel),
        cmocka_unit_test(t_crash),
        cmocka_unit_test(t_daemon_gone),
        cmocka_unit_test(t_parent_dies),
        cmocka_unit_test(t_priority),
        cmocka_unit_test(t_bad_args),
        cmocka_unit_test(t_embedded),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
