/* causalsim_int.h - what the parts of the causal-logging model share: the
 * world (causalsim.c), the workers' protocol (causalsim_worker.c) and the
 * deployer's (causalsim_dep.c). Times are in simulated microseconds.
 */
#ifndef CAUSALSIM_INT_H
#define CAUSALSIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "causal.h"
#include "causalsim.h"
#include "detlog.h"
#include "simq.h"

#define CS_W 6             /* workers at most */
#define CS_V 8             /* VTs at most, ids 1..CS_V; 0 is the deployer as a sender */
#define CS_SEQ 4096        /* outputs of one VT at most */
#define CS_INC 256         /* incarnations of one VT at most */
#define CS_EP_D CS_W       /* the deployer's endpoint */
#define CS_EP_H (CS_W + 1) /* the image store's (holders, stable) */
#define CS_EPS (CS_W + 2)
#define CS_HB 10000         /* a worker's heartbeat */
#define CS_TICK 5000        /* the deployer's clock: suspicion, watermarks */
#define CS_DETECT 40000     /* silence after which a worker is taken for dead */
#define CS_LIMIT 120000000u /* a run not done by then hangs */

/* A determinant: input `pos` of VT `vt` is message `seq` of the channel
 * from `from` to `vt`, the position given by incarnation `inc` of `vt`. */
typedef struct cs_det {
    uint8_t vt, from;
    uint16_t inc;
    uint32_t pos, seq;
} cs_det;

/* A determinant between the model's form and the engines' (causal.h). */
static inline cs_det cs_det_of(const pc_cx_det *d)
{
    return (cs_det){.vt = (uint8_t)d->vt,
                    .from = (uint8_t)d->from,
                    .inc = (uint16_t)d->epoch,
                    .pos = (uint32_t)d->pos,
                    .seq = (uint32_t)d->seq};
}

static inline pc_cx_det cs_det_cx(const cs_det *d)
{
    return (pc_cx_det){.vt = d->vt, .pos = d->pos, .from = d->from, .seq = d->seq, .epoch = d->inc};
}

/* A message between VTs, as its sender logged it. */
typedef struct cs_msg {
    uint8_t from, to;
    uint16_t from_inc, to_inc; /* the sender's incarnation; the receiver's it addressed */
    uint32_t seq;              /* its number on the channel from -> to, from 1 */
    uint64_t pay;
} cs_msg;

/* An image of a VT at a safe point between two inputs: its program's state,
 * how far it consumed each channel to it (a channel's messages take
 * positions in their order, so a watermark says it all), the numbers of
 * its channels out, and its sender log (what it sent that may still be
 * needed by a receiver that is lost). */
typedef struct cs_image {
    uint8_t vt;
    bool started;
    uint16_t inc;
    uint32_t p, n, r, tokens; /* inputs consumed, outputs made, reports made */
    uint64_t h;
    uint32_t cons[CS_V + 1]; /* per sender: its channel consumed up to here */
    uint32_t chan[CS_V + 1]; /* per receiver: the last number sent on the channel */
    cs_msg *sl;
    size_t nsl;
    cs_det *dets; /* held by its worker, not yet stable, when it was taken */
    size_t ndets;
} cs_image;

enum { CS_OUT_DONE = 1, CS_OUT_FINAL = 2 };

enum {
    CS_P_DIRECT = 1, /* worker to worker (or deployer to worker): a message and determinants */
    CS_P_DETS,       /* worker to deployer: determinants */
    CS_P_OUT,        /* worker to deployer: a report */
    CS_P_HB,         /* worker to deployer: alive */
    CS_P_FENCED,     /* deployer to a worker it took for dead: start again empty */
    CS_P_FLUSH,      /* deployer to workers: these incarnations are fenced; answer */
    CS_P_FLUSHED,    /* worker to deployer: every determinant I know is sent */
    CS_P_RESUME,     /* deployer to a worker: run this VT from this image */
    CS_P_PLACE,      /* deployer to workers: where each VT runs, and which incarnation */
    CS_P_WM,         /* deployer to workers: positions stable up to here */
    CS_P_GC,         /* deployer to workers: what a VT's stable image consumed */
    CS_P_IMG         /* worker to the image store */
};

typedef struct cs_pkt {
    int type, src, dst;
    uint32_t src_gen, sent_gen; /* the sender's life; the receiver's when sent */
    bool lost;
    cs_msg m;
    cs_det *dets;
    size_t ndets, capdets;
    uint8_t vt;
    uint16_t inc;
    uint32_t n, r, bid;
    int okind;
    uint64_t val, val2;
    uint16_t incs[CS_V + 1];
    int8_t locs[CS_V + 1];
    uint32_t wm[CS_V + 1];
    cs_image *img;
    uint32_t gc[CS_V + 1]; /* CS_P_GC: per sender, consumed by vt's stable image up to here */
} cs_pkt;

/* An input the engine handed to its VT, not yet consumed. */
typedef struct cs_in {
    uint8_t from;
    uint32_t seq;
    uint64_t pay;
} cs_in;

/* A VT's program as its worker runs it (the engine holds the rest). */
typedef struct cs_vt {
    bool here, ended, started, stepping;
    uint16_t inc;
    uint64_t h;
    uint32_t p, n, r, tokens, since;
    cs_in *inbox; /* delivered, not consumed */
    size_t ninbox, capinbox;
} cs_vt;

/* A worker: its life, its VTs' programs, and the causal-logging engine of
 * the peer controller (peercontroller/causal.h) that does the protocol. */
typedef struct cs_worker {
    struct cs_sim *sim;
    bool up, paused;
    uint32_t gen;
    uint64_t pause_until;
    cs_vt vt[CS_V + 1];
    pc_cx *cx;
    uint16_t kinc[CS_V + 1]; /* each VT's incarnation as the deployer said */
} cs_worker;

typedef struct cs_dout {
    bool have;
    int kind;
    uint64_t val, val2;
} cs_dout;

/* A VT as the deployer sees it. */
typedef struct cs_dvt {
    uint32_t wm; /* as last told to the workers */
    uint16_t inc;
    int loc; /* -1: none */
    bool lost, pending, done, stop_sent;
    uint32_t reports; /* reports taken, contiguous from 1 */
    uint8_t *rep;     /* rep[r]: taken */
    cs_dout *out;     /* out[n] */
    cs_image *stable; /* the newest image it may resume from */
    cs_image **pend;  /* images waiting for the reports before them */
    size_t npend, cappend;
    uint32_t (*posof)[CS_SEQ]; /* the invariant: no message at two positions */
} cs_dvt;

typedef struct cs_dep {
    cs_dvt v[CS_V + 1];
    bool alive[CS_W];
    uint32_t gen[CS_W];
    uint64_t last_hb[CS_W];
    pc_detlog *log;
    bool barrier;
    uint32_t bid;
    uint8_t *done; /* by token */
    int ndone, finals;
    uint64_t final_tokens;
} cs_dep;

enum { CS_E_PKT = 1, CS_E_STEP, CS_E_HB, CS_E_TICK, CS_E_FAULT, CS_E_CRASH, CS_E_UP };

typedef struct cs_ev {
    uint64_t at, seq;
    int kind, node, vt;
    uint32_t gen;
    uint64_t arg;
    cs_pkt *p;
} cs_ev;

typedef struct cs_sim {
    cs_opts o;
    cs_report *r;
    uint64_t now, seq, rng;
    simq q; /* of cs_ev */
    uint64_t link_last[CS_EPS][CS_EPS];
    cs_worker w[CS_W];
    cs_dep d;
    int gone;                  /* workers down for good */
    uint64_t slow_until[CS_W]; /* its link to the deployer is slow until then */
    bool failed, done;
} cs_sim;

/* causalsim.c */
uint64_t cs_rand(cs_sim *s);
uint64_t cs_between(cs_sim *s, uint64_t lo, uint64_t hi);
uint64_t cs_mix(uint64_t h, uint64_t v);
void cs_trace(cs_sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_fail(cs_sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *cs_grow(void *p, size_t *cap, size_t n, size_t size);
void cs_push(cs_sim *s, cs_ev e);
cs_pkt *cs_pkt_new(int type);
void cs_pkt_free(cs_pkt *p);
void cs_send(cs_sim *s, int src, int dst, cs_pkt *p);
cs_image *cs_image_copy(const cs_image *a);
void cs_image_free(cs_image *im);
void cs_prog_start(cs_sim *s, cs_worker *w, int vt);
void cs_prog_input(cs_sim *s, cs_worker *w, int vt, int from, uint64_t pay);
int cs_pick(const cs_sim *s, uint64_t h, int self);

/* causalsim_worker.c */
void cs_worker_on_pkt(cs_sim *s, int w, cs_pkt *p);
void cs_worker_step(cs_sim *s, int w, int vt);
void cs_worker_heartbeat(cs_sim *s, int w);
void cs_worker_reset(cs_sim *s, int w); /* a new life, empty */
void cs_worker_free(cs_sim *s, int w);
void cs_worker_explain(cs_sim *s, int w);
void cs_out_msg(cs_sim *s, cs_worker *k, int vt, int to, uint64_t pay);
void cs_out_report(cs_sim *s, cs_worker *k, int vt, int kind, uint64_t val, uint64_t val2);

/* causalsim_dep.c */
void cs_dep_open(cs_sim *s);
void cs_dep_on_pkt(cs_sim *s, cs_pkt *p);
void cs_dep_on_image(cs_sim *s, cs_pkt *p);
void cs_dep_tick(cs_sim *s);
void cs_dep_check_end(cs_sim *s);
void cs_dep_explain_hang(cs_sim *s);
void cs_dep_free(cs_sim *s);

#endif
