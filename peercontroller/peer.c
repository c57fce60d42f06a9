/* peer.c - a peer controller (peer.h): its start (bind, what it offers
 * (capacity.h), membership), its network thread (one zmq_poll loop over the transport,
 * the executors' channels and a wake pipe), the dispatch of each received
 * message to the participation manager, deployer, worker or holder, and
 * its graceful leave.
 */
#define _GNU_SOURCE
#include "peer.h"
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "capacity.h"
#include "execproc.h"
#include "image.h"
#include "lev_errors.h"
#include "log.h"
#include "peer_private.h"
#include "portprobe.h"
#include "rt.h"
#include "transport.h"
#include "vtchan.h"

#define PC_POLL_MAX 256
#define PC_RECV_BURST 256 /* messages handled before the timers run again */

uint64_t pc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

const pc_member *pc_peer_member(pc_peer *p, const char *endpoint)
{
    return pc_members_find(p->mem, endpoint);
}

bool pc_peer_alive(pc_peer *p, const char *endpoint)
{
    const pc_member *m = pc_members_find(p->mem, endpoint);
    return m && m->state == PC_MEMBER_ALIVE;
}

uint64_t pc_peer_now(const pc_peer *p) { return p->env.now(p->env.ud); }

int pc_peer_send_raw(pc_peer *p, const char *to, pc_hdr h, const void *body, size_t len,
                     pc_buf *bulk)
{
    return p->env.send(p->env.ud, to, h, body, len, bulk);
}

int pc_peer_send(pc_peer *p, const char *to, pc_hdr h, const pc_wbuf *body, pc_buf *bulk)
{
    if (body && body->err) {
        pc_buf_drop(&bulk);
        return body->err;
    }
    return pc_peer_send_raw(p, to, h, body ? body->data : NULL, body ? body->len : 0, bulk);
}

/* The real world: the monotonic clock, the transport, the runtime. */
static uint64_t s_env_now(void *ud)
{
    (void)ud;
    return pc_now_ms();
}

static int s_env_send(void *ud, const char *to, pc_hdr h, const void *body, size_t len,
                      pc_buf *bulk)
{
    pc_peer *p = ud;
    return pc_transport_send_raw(p->tr, to, h, body, len, bulk);
}

static int s_env_exec_start(void *ud, void **x, int *pid)
{
    return pc_execs_start(((pc_peer *)ud)->execs, x, pid);
}

static int s_env_exec_send(void *ud, void *x, pc_hdr h, const struct iovec *iov, int n)
{
    return pc_execs_send(((pc_peer *)ud)->execs, x, h, iov, n);
}

static int s_env_exec_send_fd(void *ud, void *x, pc_hdr h, const struct iovec *iov, int n, int fd)
{
    return pc_execs_send_fd(((pc_peer *)ud)->execs, x, h, iov, n, fd);
}

static void s_env_exec_stop(void *ud, void *x) { pc_execs_stop(((pc_peer *)ud)->execs, x); }

static int s_env_image_id(void *ud, const uint8_t *img, size_t len, uint64_t *vt, uint32_t *epoch)
{
    (void)ud;
    rt_image_info info;
    int rc = rt_image_info_get(img, len, &info);
    if (rc)
        return rc;
    *vt = info.vt_id;
    *epoch = info.epoch;
    return 0;
}

const char *pc_peer_endpoint(const pc_peer *p) { return p->self.endpoint; }

/* ===================================================================
 * Membership glue: the participation manager
 * =================================================================== */

static void s_members_send(void *ud, const char *to, uint16_t type, const void *payload, size_t len)
{
    pc_peer *p = ud;
    pc_transport_send_raw(p->tr, to, pc_hdr_make(type, 0, 0, 0, 0), payload, len, NULL);
}

static void s_members_changed(void *ud, const pc_member *m, pc_member_state old)
{
    pc_peer *p = ud;
    if (!strcmp(m->rec.endpoint, p->self.endpoint))
        return;
    if (m->state != old)
        pc_log(m->state == PC_MEMBER_ALIVE ? PC_LOG_INFO : PC_LOG_WARN, "peer %s: %s -> %s",
               m->rec.endpoint, pc_member_state_name(old), pc_member_state_name(m->state));
    else
        pc_log(PC_LOG_INFO, "peer %s joined (%u cores, rate %u, %s)", m->rec.endpoint, m->rec.cores,
               m->rec.rate, m->rec.arch);
    /* a crashed process's port refuses: its death is confirmed at once */
    if (m->state == PC_MEMBER_SUSPECT && old != PC_MEMBER_SUSPECT)
        pc_portprobe_start(p->probe, m->rec.endpoint, m->instance, pc_now_ms());
    pc_deployer_on_member(p->dep, m, old);
    pc_worker_on_member(p->wk, m, old);
    pc_holder_on_member(p->hold, m, old);
    if (m->state == PC_MEMBER_DEAD || m->state == PC_MEMBER_LEFT)
        pc_transport_forget(p->tr, m->rec.endpoint);
}

static void s_port_refused(void *ud, const char *endpoint, uint64_t instance)
{
    pc_peer *p = ud;
    pc_members_refused(p->mem, endpoint, instance, pc_now_ms());
}

/* ===================================================================
 * Dispatch
 * =================================================================== */

static void s_status(pc_peer *p, pc_msg *m)
{
    pc_wbuf json, body;
    pc_wbuf_init(&json);
    pc_wbuf_init(&body);
    pc_status_json(p, &json);
    pc_put_u8(&json, 0);
    pc_put_str(&body, json.err ? "{}" : (const char *)json.data);
    pc_hdr h = pc_hdr_make(PC_S_STATUS_REPLY, 0, 0, 0, m->h.seq);
    pc_transport_send(p->tr, m->from, h, &body, NULL);
    pc_wbuf_free(&json);
    pc_wbuf_free(&body);
}

pc_role pc_msg_role(uint16_t t)
{
    switch (t >> 8) {
    case 0x01:
        return PC_ROLE_MEMBERS;
    case 0x02:
        return PC_ROLE_DEPLOYER;
    case 0x03:
        if (t == PC_W_ENROL || t == PC_W_MODULE || t == PC_W_RUN || t == PC_W_RESUME ||
            t == PC_W_FENCE || t == PC_W_CLOSE || t == PC_W_HOLDERS || t == PC_W_IN ||
            t == PC_W_ACK || t == PC_W_MIGRATE || t == PC_W_FULL || t == PC_W_IN_REF ||
            t == PC_W_STABLE || t == PC_W_FLUSH || t == PC_W_FIX || t == PC_W_PLACE ||
            t == PC_W_TRIM || t == PC_W_LINKS || t == PC_W_GLOB || t == PC_W_READS_FROM)
            return PC_ROLE_WORKER;
        return PC_ROLE_DEPLOYER;
    case 0x04:
        return t == PC_H_HELD || t == PC_H_MISSING || t == PC_H_LOGGED ? PC_ROLE_DEPLOYER
                                                                       : PC_ROLE_HOLDER;
    case 0x05:
        return t == PC_S_STATUS ? PC_ROLE_STATUS : PC_ROLE_NONE;
    default:
        return PC_ROLE_NONE;
    }
}

static void s_dispatch(pc_peer *p, pc_msg *m)
{
    uint16_t t = m->h.type;
    const char *bad = NULL;
    if (pc_msg_role(t) != PC_ROLE_NONE &&
        pc_msg_check(&m->h, pc_buf_data(m->body), pc_buf_len(m->body), pc_buf_len(m->bulk), &bad)) {
        /* read whole against its fields before anything acts on it */
        p->refused++;
        pc_log_src(PC_LOG_WARN, m->from, "refused %s from %s: %s", pc_type_name(t), m->from, bad);
        return;
    }
    switch (pc_msg_role(t)) {
    case PC_ROLE_MEMBERS: {
        const char *why = NULL;
        if (pc_members_recv(p->mem, pc_now_ms(), m->from, t, pc_buf_data(m->body),
                            pc_buf_len(m->body), &why) < 0)
            pc_log_src(PC_LOG_WARN, m->from, "dropped %s from %s: %s", pc_type_name(t), m->from,
                       why ? why : "malformed");
        return;
    }
    case PC_ROLE_DEPLOYER:
        pc_deployer_on_msg(p->dep, m);
        return;
    case PC_ROLE_WORKER:
        pc_worker_on_msg(p->wk, m);
        return;
    case PC_ROLE_HOLDER:
        pc_holder_on_msg(p->hold, m);
        return;
    case PC_ROLE_STATUS:
        s_status(p, m);
        return;
    case PC_ROLE_NONE:
        break;
    }
    pc_log_src(PC_LOG_WARN, m->from,
               "dropped %s from %s: not a message a peer takes from the network", pc_type_name(t),
               m->from);
}

/* ===================================================================
 * The network thread
 * =================================================================== */

static void s_drain_wake(pc_peer *p)
{
    char buf[64];
    while (read(p->wake[0], buf, sizeof buf) > 0)
        ;
}

static void s_update_load(pc_peer *p, uint64_t now)
{
    uint32_t load = pc_worker_load(p->wk);
    if (load != p->self.load && now - p->load_sent_ms >= 1000) {
        p->self.load = load;
        p->load_sent_ms = now;
        pc_members_update_self(p->mem, &p->self, now);
    }
}

/* ===================================================================
 * The rate, measured again while idle
 * =================================================================== */

#define PC_RATE_RUNS 5         /* measurements in all, the one at start included */
#define PC_RATE_FIRST_MS 3000  /* the second comes 3-6 s after start... */
#define PC_RATE_EVERY_MS 60000 /* ...the others a minute apart (jittered) */
#define PC_RATE_GAIN 1.03      /* a rate this much better is announced */

static void s_wake(pc_peer *p);

static void *s_rate_main(void *arg)
{
    pc_peer *p = arg;
    atomic_store(&p->rate_new, pc_measure_rate());
    s_wake(p);
    return NULL;
}

/* Up to a tenth of `ms`, from the process id and the clock: peers
 * started together measure at different times. */
static uint64_t s_jitter(uint64_t ms)
{
    uint64_t x = ((uint64_t)getpid() * 0x9E3779B97F4A7C15ull) ^ (pc_now_ms() * 2654435761u);
    return (x >> 17) % (ms / 10 + 1);
}

/* Takes a finished measurement: the best so far is offered when it is
 * better than what the peer announces (a peer that measured while many
 * others did at start, or while its machine was busy, measured low). */
static void s_rate_take(pc_peer *p, uint32_t rate1)
{
    pthread_join(p->rate_thread, NULL);
    p->rate_busy = false;
    p->rate_runs++;
    if (rate1 <= p->rate_best)
        return;
    p->rate_best = rate1;
    uint32_t rate = pc_capacity_rate(&p->cap, rate1);
    if (rate < p->self.rate * PC_RATE_GAIN)
        return;
    pc_log(PC_LOG_INFO, "rate measured again while idle: %u per core (was %u)", rate, p->self.rate);
    p->cap.rate1 = rate1;
    p->cap.rate = p->self.rate = rate;
    pc_members_update_self(p->mem, &p->self, pc_now_ms());
}

/* Starts a measurement when one is due and no VT runs here, takes one
 * that finished; when the loop must look again. */
static uint64_t s_rate_tick(pc_peer *p, uint64_t now)
{
    if (p->rate_busy) {
        uint32_t r = atomic_exchange(&p->rate_new, 0);
        if (!r)
            return now + 50; /* still measuring (its end also wakes the loop) */
        s_rate_take(p, r);
    }
    if (!p->rate_next_ms)
        return UINT64_MAX;
    if (now < p->rate_next_ms)
        return p->rate_next_ms;
    if (pc_worker_load(p->wk) || p->leaving) {
        p->rate_next_ms = now + PC_RATE_FIRST_MS; /* busy: not a fair measure */
        return p->rate_next_ms;
    }
    if (pthread_create(&p->rate_thread, NULL, s_rate_main, p) == 0)
        p->rate_busy = true;
    p->rate_next_ms =
        p->rate_runs + 1 >= PC_RATE_RUNS ? 0 : now + PC_RATE_EVERY_MS + s_jitter(PC_RATE_EVERY_MS);
    return now + 50;
}

/* Handles a command of another thread; returns false when the loop ends. */
static bool s_command(pc_peer *p, uint64_t now)
{
    int cmd = atomic_exchange(&p->cmd, PC_CMD_NONE);
    if (cmd == PC_CMD_STOP)
        return false;
    if (cmd == PC_CMD_LEAVE && !p->leaving) {
        pc_log(PC_LOG_INFO, "leaving the mesh: migrating %u VTs first", pc_worker_load(p->wk));
        p->leaving = true;
        pc_worker_leave(p->wk);
    }
    if (p->leaving) {
        bool moved = pc_worker_load(p->wk) == 0;
        if (moved || now >= p->leave_deadline_ms) {
            pthread_mutex_lock(&p->mu);
            p->leave_rc = moved ? 0 : LEV_ETIMEDOUT;
            pthread_mutex_unlock(&p->mu);
            pc_members_leave(p->mem, now);
            pc_log(moved ? PC_LOG_INFO : PC_LOG_WARN, "left the mesh%s",
                   moved ? "" : ": some VTs could not be moved in time");
            return false;
        }
    }
    return true;
}

static void s_sooner(uint64_t *next, uint64_t t)
{
    if (t < *next)
        *next = t;
}

static void *s_thread(void *arg)
{
    pc_peer *p = arg;
    zmq_pollitem_t items[PC_POLL_MAX];
    for (;;) {
        uint64_t now = pc_now_ms();
        if (!s_command(p, now))
            break;
        /* each part's timers, in this order; the loop wakes for the
         * earliest next one */
        uint64_t next = now + 100;
        s_sooner(&next, pc_members_tick(p->mem, now));
        s_sooner(&next, pc_deployer_tick(p->dep, now));
        s_sooner(&next, pc_worker_tick(p->wk, now));
        s_sooner(&next, pc_holder_tick(p->hold, now));
        s_sooner(&next, pc_portprobe_tick(p->probe, now));
        s_sooner(&next, s_rate_tick(p, now));
        s_update_load(p, now);
        /* what the messages handled last time left due (one ack per burst) */
        pc_deployer_flush(p->dep);
        pc_execs_flush(p->execs);
        pc_log_tick(false); /* the counts of lines a flood had dropped */

        items[0] = (zmq_pollitem_t){.socket = pc_transport_socket(p->tr), .events = ZMQ_POLLIN};
        items[1] = (zmq_pollitem_t){.fd = p->wake[0], .events = ZMQ_POLLIN};
        int nx = pc_execs_poll_items(p->execs, items + 2, PC_POLL_MAX - 3);
        int np = pc_portprobe_poll_items(p->probe, items + 2 + nx, PC_POLL_MAX - 3 - nx);
        int n = 2 + nx + np;
        if (p->auth) /* connections wait for its answers */
            items[n++] = (zmq_pollitem_t){.socket = pc_auth_socket(p->auth), .events = ZMQ_POLLIN};
        now = pc_now_ms();
        long wait = next > now ? (long)(next - now) : 0;
        if (p->leaving && wait > 20)
            wait = 20;
        int rc = zmq_poll(items, n, wait);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            pc_log(PC_LOG_ERROR, "poll failed: %s", zmq_strerror(errno));
            break;
        }
        if (items[1].revents)
            s_drain_wake(p);
        if (nx)
            pc_execs_on_ready(p->execs, items + 2, nx);
        if (np)
            pc_portprobe_on_ready(p->probe, items + 2 + nx, np);
        if (p->auth && items[n - 1].revents)
            pc_auth_on_zap(p->auth);
        if (items[0].revents & ZMQ_POLLIN) {
            for (int i = 0; i < PC_RECV_BURST; i++) {
                pc_msg m;
                const char *why = NULL;
                int r = pc_transport_recv(p->tr, &m, &why);
                if (r == 0)
                    break;
                if (r < 0) {
                    pc_log_src(PC_LOG_WARN, m.from, "dropped a message from %s: %s",
                               m.from[0] ? m.from : "?", why ? why : "malformed");
                    continue;
                }
                s_dispatch(p, &m);
                pc_msg_close(&m);
            }
        }
    }
    pc_log_tick(true); /* the counts of lines dropped, whatever their window */
    if (p->rate_busy)
        pthread_join(p->rate_thread, NULL);
    p->rate_busy = false;
    pthread_mutex_lock(&p->mu);
    p->stopped = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void s_wake(pc_peer *p)
{
    ssize_t w = write(p->wake[1], "x", 1);
    (void)w;
}

/* ===================================================================
 * Life cycle
 * =================================================================== */

static void s_free(pc_peer *p)
{
    pc_deployer_destroy(&p->dep);
    pc_worker_destroy(&p->wk);
    pc_execs_destroy(&p->execs); /* after the worker, which stops its own */
    pc_holder_destroy(&p->hold);
    pc_portprobe_destroy(&p->probe);
    pc_members_destroy(&p->mem);
    pc_transport_destroy(&p->tr, p->leaving ? 2000 : 0);
    pc_auth_destroy(&p->auth);
    free(p->curve);
    if (p->zctx)
        zmq_ctx_term(p->zctx);
    if (p->wake[0] >= 0)
        close(p->wake[0]);
    if (p->wake[1] >= 0)
        close(p->wake[1]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->data_dir);
    free(p->exec_prog);
    free(p);
}

static void s_fill_self(pc_peer *p)
{
    struct utsname u;
    pc_ep_copy(p->self.endpoint, pc_transport_endpoint(p->tr));
    pc_capacity c = pc_capacity_get(p->o.cores, p->o.rate);
    p->self.cores = p->o.cores < 0 ? 0 : c.cores;
    p->self.rate = c.rate;
    p->cap = c;
    if (p->o.rate <= 0) { /* measured: measured again while idle */
        p->rate_best = c.rate1;
        p->rate_runs = 1;
        p->rate_next_ms = pc_now_ms() + PC_RATE_FIRST_MS + s_jitter(10 * PC_RATE_FIRST_MS);
    }
    snprintf(p->self.arch, sizeof p->self.arch, "%.15s", uname(&u) ? "unknown" : u.machine);
    uint16_t one = 1;
    p->self.big_endian = *(uint8_t *)&one == 0;
    p->self.version = PC_WIRE_VERSION;
}

/* The mesh's key pair and the ZAP handler admitting the authorised
 * keys (auth.h). 0, or LEV_EINVAL with the detail naming the file. */
static int s_keys(pc_peer *p, const pc_peer_opts *o)
{
    char err[512];
    p->curve = calloc(1, sizeof *p->curve);
    if (!p->curve)
        return LEV_ENOMEM;
    int rc = 0;
    if (o->key)
        rc = pc_key_read(o->key, p->curve, err, sizeof err);
    else
        *p->curve = *o->key_pair;
    if (!rc && !p->curve->sec[0]) {
        snprintf(err, sizeof err, "%s: a public key only; the mesh's key pair (NAME.key) is needed",
                 o->key);
        rc = LEV_EINVAL;
    }
    if (!rc)
        rc = pc_auth_new(&p->auth, p->zctx, p->curve, o->authorized_keys, err, sizeof err);
    if (rc)
        return rt_err(rc == LEV_ENOMEM ? rc : LEV_EINVAL, "keys: %s", err);
    pc_log(PC_LOG_INFO, "CurveZMQ on: %zu public keys admitted", pc_auth_count(p->auth));
    return 0;
}

int pc_peer_new(pc_peer **out, const pc_peer_opts *o)
{
    *out = NULL;
    pc_peer_opts def = {0};
    if (!o)
        o = &def;
    if (o->njoin < 0 || o->njoin > PC_JOIN_MAX)
        return rt_err(LEV_EINVAL, "at most %d seeds", PC_JOIN_MAX);
    for (int i = 0; i < o->njoin; i++)
        if (!pc_endpoint_valid(o->join[i]))
            return rt_err(LEV_EINVAL, "seed '%s' is not tcp://HOST:PORT", o->join[i]);
    rt_init(); /* the collector starts on this thread, never on the network thread */
    pc_peer *p = calloc(1, sizeof *p);
    if (!p)
        return LEV_ENOMEM;
    p->o = *o;
    p->env = (pc_env){.now = s_env_now,
                      .send = s_env_send,
                      .image_id = s_env_image_id,
                      .exec_start = s_env_exec_start,
                      .exec_send = s_env_exec_send,
                      .exec_send_fd = s_env_exec_send_fd,
                      .exec_stop = s_env_exec_stop,
                      .ud = p};
    p->wake[0] = p->wake[1] = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->data_dir = o->data_dir ? strdup(o->data_dir) : NULL;
    p->exec_prog = o->executor_program ? strdup(o->executor_program) : NULL;
    p->o.data_dir = p->data_dir;
    p->o.executor_program = p->exec_prog;
    p->o.listen = p->o.advertise = NULL;
    p->njoin = o->njoin;
    for (int i = 0; i < o->njoin; i++)
        pc_ep_copy(p->join[i], o->join[i]);
    if (!p->o.max_msg)
        p->o.max_msg = (size_t)1 << 30;
    if (!p->o.crash_limit)
        p->o.crash_limit = 3;
    pc_limits *l = &p->o.limits;
    l->vts = l->vts ? l->vts : PC_LIMIT_VTS;
    l->vt_memory = l->vt_memory ? l->vt_memory : PC_LIMIT_VT_MEMORY;
    l->value = l->value && l->value < RT_CH_MAX_VALUE ? l->value : RT_CH_MAX_VALUE;
    l->module_cache = l->module_cache ? l->module_cache : PC_LIMIT_MODULE_CACHE;
    l->module_age_s = l->module_age_s ? l->module_age_s : PC_LIMIT_MODULE_AGE_S;
    if (!p->o.client_timeout_ms)
        p->o.client_timeout_ms = 10000;

    int rc = LEV_ENOMEM;
    p->zctx = zmq_ctx_new();
    if (!p->zctx || pipe2(p->wake, O_NONBLOCK | O_CLOEXEC))
        goto fail;
    zmq_ctx_set(p->zctx, ZMQ_BLOCKY, 0);
    if ((o->key || o->key_pair) && (rc = s_keys(p, o)))
        goto fail;
    rc = pc_transport_new(&p->tr, p->zctx, o->listen ? o->listen : "tcp://127.0.0.1:0",
                          o->advertise, p->o.max_msg, p->curve);
    if (rc)
        goto fail;
    s_fill_self(p);
    uint64_t now = pc_now_ms();
    p->started_ms = now;
    pc_members_io io = {.send = s_members_send, .changed = s_members_changed, .ud = p};
    /* this start's instance, above every earlier start's on the endpoint
     * across reboots too: the wall clock in ms and 20 bits to tell starts
     * in one ms apart (as levpeer's daemon.c sets it) */
    pc_members_opts mo = o->members;
    if (!mo.instance) {
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        uint64_t ms = (uint64_t)rt.tv_sec * 1000u + (uint64_t)rt.tv_nsec / 1000000u;
        uint64_t low = ((uint64_t)rt.tv_nsec ^ (uint64_t)getpid() * 0x9E3779B1u) & 0xFFFFF;
        mo.instance = (ms + 1) << 20 | low;
    }
    uint64_t seed = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ now;
    p->vc_counter = seed << 20;
    if ((rc = pc_portprobe_new(&p->probe, s_port_refused, p)) ||
        (rc = pc_members_new(&p->mem, &p->self, &mo, &io, seed, now)) ||
        (rc = pc_deployer_new(&p->dep, p)) || (rc = pc_execs_new(&p->execs, p)) ||
        (rc = pc_worker_new(&p->wk, p)) || (rc = pc_holder_new(&p->hold, p)))
        goto fail;
    for (int i = 0; i < p->njoin; i++)
        pc_members_join(p->mem, p->join[i], now);
    if (pthread_create(&p->thread, NULL, s_thread, p)) {
        rc = LEV_ENOMEM;
        goto fail;
    }
    char quota[48] = "no CPU quota";
    if (p->cap.quota > 0)
        snprintf(quota, sizeof quota, "CPU quota %.2f cores", p->cap.quota);
    pc_log(PC_LOG_INFO, "peer %s ready: %u cores, rate %u (one core: %u; %u CPUs, %s), %s",
           p->self.endpoint, p->self.cores, p->self.rate, p->cap.rate1, p->cap.cpus, quota,
           p->self.arch);
    *out = p;
    return 0;
fail:
    s_free(p);
    return rc;
}

int pc_peer_leave(pc_peer *p, int timeout_ms)
{
    pthread_mutex_lock(&p->mu);
    p->leave_deadline_ms = pc_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    p->leave_rc = LEV_ETIMEDOUT;
    pthread_mutex_unlock(&p->mu);
    atomic_store(&p->cmd, PC_CMD_LEAVE);
    s_wake(p);
    pthread_mutex_lock(&p->mu);
    while (!p->stopped)
        pthread_cond_wait(&p->cv, &p->mu);
    int rc = p->leave_rc;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void pc_peer_destroy(pc_peer **p_p)
{
    pc_peer *p = p_p ? *p_p : NULL;
    if (!p)
        return;
    atomic_store(&p->cmd, PC_CMD_STOP);
    s_wake(p);
    pthread_join(p->thread, NULL);
    s_free(p);
    *p_p = NULL;
}
