/* mesh.c - levpeer processes on loopback for the multi-process tests
 * (mesh.h). Every wait is for an event (a line, an exit, a state) and is
 * bounded in time and count. */
#define _GNU_SOURCE
#include "mesh.h"
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "wire.h"

static uint64_t s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void s_print_log(const mesh_peer *p)
{
    FILE *f = fopen(p->log, "r");
    char line[512];
    fprintf(stderr, "---- %s\n", p->log);
    for (int i = 0; f && i < 200 && fgets(line, sizeof line, f); i++)
        fputs(line, stderr);
    if (f)
        fclose(f);
}

const char *mesh_listen(void)
{
    static char ep[32];
    if (!ep[0])
        snprintf(ep, sizeof ep, "tcp://127.0.0.%d:0", 2 + (int)(getpid() % 250));
    return ep;
}

int mesh_start(mesh_peer *p, const char *levpeer, const char *dir, int limit_ms,
               const char *const *args)
{
    return mesh_start_in(p, NULL, levpeer, dir, limit_ms, args);
}

int mesh_start_in(mesh_peer *p, const char *netns, const char *levpeer, const char *dir,
                  int limit_ms, const char *const *args)
{
    static int serial;
    memset(p, 0, sizeof *p);
    snprintf(p->log, sizeof p->log, "%s/peer%d-%d.log", dir, (int)getpid(), serial++);
    int out[2];
    if (pipe2(out, O_CLOEXEC))
        return -1;
    const char *argv[64] = {"levpeer"};
    int n = 1;
    for (; args && args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* a peer dies with its test, even one that failed before it
         * stopped its peers or was killed at its time limit */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(127);
        if (netns) { /* into the network namespace `ip netns add` made */
            char path[256];
            snprintf(path, sizeof path, "/run/netns/%s", netns);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0 || setns(fd, CLONE_NEWNET))
                _exit(126);
            close(fd);
        }
        /* a test's mesh runs without keys (levpeer refuses to unless told),
         * but for one given --key */
        bool keys = false;
        for (int i = 1; argv[i]; i++)
            keys |= !strcmp(argv[i], "--key");
        if (!keys)
            setenv("LEV_INSECURE", "1", 1);
        int log = open(p->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out[1], 1);
        if (log >= 0)
            dup2(log, 2);
        execv(levpeer, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    p->pid = pid;
    size_t got = 0;
    uint64_t end = s_ms() + (uint64_t)limit_ms;
    while (got < sizeof p->ep - 1 && !memchr(p->ep, '\n', got)) {
        uint64_t now = s_ms();
        struct pollfd pf = {.fd = out[0], .events = POLLIN};
        if (now >= end || poll(&pf, 1, (int)(end - now)) <= 0)
            break;
        ssize_t r = read(out[0], p->ep + got, sizeof p->ep - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(out[0]);
    char *nl = memchr(p->ep, '\n', got);
    if (!nl) {
        fprintf(stderr, "mesh: levpeer printed no endpoint within %d ms\n", limit_ms);
        mesh_signal(p, SIGKILL);
        mesh_reap(p, 5000);
        s_print_log(p);
        return -1;
    }
    *nl = '\0';
    return 0;
}

void mesh_signal(mesh_peer *p, int sig)
{
    if (p->pid > 0)
        kill(p->pid, sig);
}

bool mesh_reap(mesh_peer *p, int limit_ms)
{
    if (p->pid <= 0)
        return true;
    /* wait for the exit itself: a pidfd becomes readable when it happens */
    int fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
    if (fd >= 0) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        uint64_t end = s_ms() + (uint64_t)limit_ms;
        while (poll(&pf, 1, (int)(end > s_ms() ? end - s_ms() : 0)) < 0 && errno == EINTR)
            ;
        close(fd);
    }
    if (waitpid(p->pid, &p->status, fd >= 0 ? WNOHANG : 0) == p->pid) {
        p->pid = 0;
        return true;
    }
    return false;
}

void mesh_stop_all(mesh_peer *v, int n)
{
    for (int i = 0; i < n; i++) {
        if (v[i].pid > 0) {
            kill(v[i].pid, SIGCONT);
            mesh_signal(&v[i], SIGKILL);
            mesh_reap(&v[i], 10000);
        }
    }
}

static void *s_ctx(void)
{
    static void *ctx;
    if (!ctx)
        ctx = zmq_ctx_new();
    return ctx;
}

/* As a client: CurveZMQ with the keys LEV_MESH_KEY and LEV_CLIENT_KEY
 * name (peercontroller/auth.h), when they are set. */
static void s_keys(void *s)
{
    pc_keypair m, c;
    char err[512];
    if (pc_client_keys(&m, &c, err, sizeof err) == 1)
        pc_auth_connect(s, &c, m.pub);
}

char *mesh_status(const char *ep, int limit_ms)
{
    void *s = zmq_socket(s_ctx(), ZMQ_DEALER);
    s_keys(s);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    char id[64];
    snprintf(id, sizeof id, "test:%d", (int)getpid());
    zmq_setsockopt(s, ZMQ_ROUTING_ID, id, strlen(id));
    char *out = NULL;
    if (zmq_connect(s, ep) == 0) {
        uint8_t hb[PC_HDR_LEN];
        pc_hdr h = pc_hdr_make(PC_S_STATUS, 0, 0, 0, 7);
        pc_hdr_encode(&h, hb);
        zmq_send(s, hb, sizeof hb, 0);
        zmq_pollitem_t it = {.socket = s, .events = ZMQ_POLLIN};
        uint64_t end = s_ms() + (uint64_t)limit_ms;
        while (!out && s_ms() < end) {
            if (zmq_poll(&it, 1, (long)(end - s_ms())) <= 0)
                continue;
            zmq_msg_t f[2];
            zmq_msg_init(&f[0]);
            zmq_msg_init(&f[1]);
            if (zmq_msg_recv(&f[0], s, 0) >= 0 && zmq_msg_more(&f[0]) &&
                zmq_msg_recv(&f[1], s, 0) >= 0) {
                pc_rbuf r;
                pc_rbuf_init(&r, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]));
                out = pc_get_strdup(&r, 1 << 24);
            }
            zmq_msg_close(&f[0]);
            zmq_msg_close(&f[1]);
        }
    }
    zmq_close(s);
    return out;
}

bool mesh_log_holds(const mesh_peer *p, const char *text)
{
    FILE *f = fopen(p->log, "r");
    char line[1024];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return found;
}

bool mesh_log_has(const mesh_peer *p, const char *text)
{
    bool found = mesh_log_holds(p, text);
    if (!found)
        fprintf(stderr, "log of %s lacks '%s'\n", p->ep, text);
    return found;
}

void mesh_send_raw(const char *ep, const void *const *frames, const size_t *lens, int n)
{
    void *s = zmq_socket(s_ctx(), ZMQ_DEALER);
    int linger = 2000;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s, ZMQ_ROUTING_ID, "test:raw", 8);
    if (zmq_connect(s, ep) == 0)
        for (int i = 0; i < n; i++)
            zmq_send(s, frames[i], lens[i], i + 1 < n ? ZMQ_SNDMORE : 0);
    zmq_close(s);
}

bool mesh_wait(const char *ep, bool (*cond)(const char *json, void *ctx), void *ctx, int limit_ms)
{
    uint64_t end = s_ms() + (uint64_t)limit_ms;
    char *last = NULL;
    for (int i = 0; i < 100000 && s_ms() < end; i++) {
        char *js = mesh_status(ep, 2000);
        bool ok = js && cond(js, ctx);
        if (ok) {
            free(js);
            free(last);
            return true;
        }
        if (js) {
            free(last);
            last = js;
        }
        zmq_pollitem_t none;
        zmq_poll(&none, 0, 20); /* between two looks at the state */
    }
    /* what the condition was last tested on, so that a failure says why */
    fprintf(stderr, "mesh_wait: gave up after %d ms; the last status of %s:\n%s\n", limit_ms, ep,
            last ? last : "(none answered)");
    free(last);
    return false;
}

/* ---- the status document ---- */

int js_count(const char *s, const char *needle)
{
    int n = 0;
    size_t len = strlen(needle);
    for (const char *p = strstr(s, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

/* The object of VT vt in the "vts" list, or NULL. */
static const char *s_vt(const char *json, uint64_t vt)
{
    char key[64];
    snprintf(key, sizeof key, "{\"id\":%llu,\"task\":", (unsigned long long)vt);
    return strstr(json, key);
}

/* Copies the JSON string that starts at p (at its opening quote) into out. */
static bool s_str_at(const char *p, char *out, size_t cap)
{
    if (!p || *p != '"')
        return false;
    size_t n = 0;
    for (p++; *p && *p != '"' && n + 1 < cap; p++)
        out[n++] = *p;
    out[n] = '\0';
    return true;
}

/* Where the value of member `field` (followed by `open`: "" or "[") of
 * VT vt's object starts, or NULL if the object or the member is absent. */
static const char *s_vt_field(const char *json, uint64_t vt, const char *field, const char *open)
{
    const char *o = s_vt(json, vt);
    char key[64];
    snprintf(key, sizeof key, "\"%s\":%s", field, open);
    const char *f = o ? strstr(o, key) : NULL;
    const char *end = o ? strchr(o, '}') : NULL;
    if (!f || (end && f > end))
        return NULL;
    return f + strlen(key);
}

bool js_vt_str(const char *json, uint64_t vt, const char *field, char *out, size_t cap)
{
    return s_str_at(s_vt_field(json, vt, field, ""), out, cap);
}

long long js_vt_int(const char *json, uint64_t vt, const char *field)
{
    const char *v = s_vt_field(json, vt, field, "");
    return v ? strtoll(v, NULL, 10) : INT64_MIN;
}

long long js_int(const char *json, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(json, pat);
    return at ? strtoll(at + strlen(pat), NULL, 10) : INT64_MIN;
}

long long js_obj_sum(const char *json, const char *obj, const char *key)
{
    char opat[96], kpat[96];
    snprintf(opat, sizeof opat, "\"%s\":{", obj);
    snprintf(kpat, sizeof kpat, "\"%s\":", key);
    long long sum = INT64_MIN;
    for (const char *at = strstr(json, opat); at; at = strstr(at + 1, opat)) {
        const char *end = strchr(at, '}'), *f = strstr(at, kpat);
        if (f && end && f < end)
            sum = (sum == INT64_MIN ? 0 : sum) + strtoll(f + strlen(kpat), NULL, 10);
    }
    return sum;
}

bool js_vt_holder(const char *json, uint64_t vt, const char *list, char *out, size_t cap)
{
    return s_str_at(s_vt_field(json, vt, list, "["), out, cap);
}

int js_workers(const char *json, const char *ep, bool *has)
{
    const char *f = strstr(json, "\"workers\":[");
    *has = false;
    if (!f)
        return 0;
    f += strlen("\"workers\":[");
    const char *end = strchr(f, ']');
    int n = 0;
    char one[160];
    while (f && end && f < end && *f == '"') {
        s_str_at(f, one, sizeof one);
        n++;
        *has |= ep && !strcmp(one, ep);
        f = strchr(f + 1, '"');
        f = f ? f + 1 : NULL;
        if (f && *f == ',')
            f++;
    }
    return n;
}

void js_peer_state(const char *json, const char *ep, char *out, size_t cap)
{
    char key[200];
    snprintf(key, sizeof key, "{\"endpoint\":\"%s\",\"state\":", ep);
    const char *f = strstr(json, key);
    out[0] = '\0';
    if (f)
        s_str_at(f + strlen(key), out, cap);
}

/* ---- added for the fault tests ---- */

void mesh_print_log_tail(const mesh_peer *p, int lines)
{
    FILE *f = fopen(p->log, "r");
    if (!f)
        return;
    enum { KEEP = 64 };
    static char ring[KEEP][512];
    int n = 0;
    while (n < 1000000 && fgets(ring[n % KEEP], sizeof ring[0], f))
        n++;
    fclose(f);
    if (lines > KEEP)
        lines = KEEP;
    fprintf(stderr, "---- %s (%s), last lines\n", p->log, p->ep);
    for (int i = n > lines ? n - lines : 0; i < n; i++)
        fputs(ring[i % KEEP], stderr);
}

bool js_has_executor(const char *json)
{
    const char *e = strstr(json, "\"executors\":[");
    return e && e[strlen("\"executors\":[")] != ']';
}

bool js_vt_listed(const char *json, uint64_t vt, const char *list, const char *ep)
{
    const char *f = s_vt_field(json, vt, list, "[");
    const char *end = f ? strchr(f, ']') : NULL;
    char one[160];
    for (int i = 0; f && end && f < end && *f == '"' && i < 64; i++) {
        s_str_at(f, one, sizeof one);
        if (!strcmp(one, ep))
            return true;
        f = strchr(f + 1, '"'); /* past this entry's closing quote */
        f = f ? f + 1 : NULL;
        if (f && *f == ',')
            f++;
    }
    return false;
}

/* ===================================================================
 * A client's reports
 * =================================================================== */

void mesh_reports_init(mesh_reports *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
}

void mesh_on_report(lev_vt_id vt, const void *buf, size_t len, void *ctx)
{
    mesh_reports *r = ctx;
    pthread_mutex_lock(&r->mu);
    if (vt < MESH_REPORT_VTS && (len == sizeof(int64_t) || len == sizeof(int32_t))) {
        int64_t v64 = 0;
        int32_t v32 = 0;
        if (len == sizeof v64)
            memcpy(&v64, buf, sizeof v64);
        else
            memcpy(&v32, buf, sizeof v32), v64 = v32;
        r->last[vt] = v64;
        r->n[vt]++;
    } else {
        r->bad++;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

bool mesh_wait_reports(mesh_reports *r, lev_vt_id vt, int n, int limit_ms)
{
    if (vt >= MESH_REPORT_VTS)
        return false;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += limit_ms / 1000;
    pthread_mutex_lock(&r->mu);
    while (r->n[vt] < n)
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until))
            break;
    int got = r->n[vt];
    pthread_mutex_unlock(&r->mu);
    if (got < n)
        fprintf(stderr, "VT %llu sent %d reports, not %d\n", (unsigned long long)vt, got, n);
    return got >= n;
}
