/* jump.c - setjmp and longjmp between checkpointable functions of a VT:
 * the marker a mobile setjmp writes into a jmp_buf, and the longjmp that
 * reads it, finds the target frame by its depth in the arena, discards
 * the frames above it and jumps natively to the body's registration
 * (lev_abi.h, "setjmp / longjmp").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt.h"
#include "vt.h"

#define S_MAGIC 0x4C65764A6D704D6Bull /* "LevJmpMk" */

/* The check word of a marker: a mix of its words and the module's hash,
 * so that a marker of another module, or a jmp_buf holding anything
 * else, is not taken for one. */
static uint64_t s_check(const lev_module *m, uint64_t depth, uint64_t where)
{
    uint64_t h = S_MAGIC ^ lev_module_hash(m);
    uint64_t w[2] = {depth, where};
    for (int i = 0; i < 2; i++) {
        h ^= w[i] + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

__attribute__((noreturn, cold, format(printf, 1, 2))) static void s_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("leverage: longjmp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

typedef struct s_find {
    uint32_t depth; /* frames to skip */
    void *frame;    /* found: the frame at `depth` */
    void *want;     /* or: the frame whose depth is asked */
    uint32_t seen;
} s_find;

static int s_find_cb(void *frame, size_t size, void *ud)
{
    (void)size;
    s_find *f = ud;
    if (f->want ? frame == f->want : f->seen == f->depth) {
        f->frame = frame;
        return 1;
    }
    f->seen++;
    return 0;
}

int lev_setjmp(lev_ctx *ctx, void *frame, void *env, uint32_t site)
{
    rt_vt *vt = rt_vt_of(ctx);
    lev_jmp_reg *r = ctx->jmp;
    if (!r || r->frame != frame)
        s_die("setjmp in a body that did not register its frame (generated code is damaged)");
    if (!r->depth) {
        s_find f = {.want = frame};
        if (rt_arena_walk(ctx, &vt->arena, vt->mod, s_find_cb, &f) != 1)
            s_die("setjmp: its frame is not in the arena");
        r->depth = f.seen + 1;
    }
    uint64_t w[4];
    w[0] = S_MAGIC;
    w[1] = r->depth - 1;
    w[2] = (uint64_t)((lev_frame *)frame)->fn << 32 | site;
    w[3] = s_check(vt->mod, w[1], w[2]);
    memcpy(env, w, sizeof w);
    return 0;
}

static const char *s_fn_name(const rt_vt *vt, uint32_t fn)
{
    return fn < vt->mod->desc->nfns ? vt->mod->desc->fns[fn].name : "an unknown function";
}

/* Jumps to the target of marker w (w[0] is the magic word) in the VT of
 * ctx (NULL: none runs on this thread). */
__attribute__((noreturn)) static void s_jump(lev_ctx *ctx, const uint64_t *w, int v)
{
    if (!ctx)
        s_die("the jmp_buf was set by setjmp in a virtual thread, but no virtual thread runs "
              "here (a jmp_buf used outside its VT)");
    rt_vt *vt = rt_vt_of(ctx);
    if (w[3] != s_check(vt->mod, w[1], w[2]))
        s_die("the jmp_buf holds a damaged marker, or one of another module (a jmp_buf that "
              "setjmp did not set, or that was overwritten)");
    uint32_t fn = (uint32_t)(w[2] >> 32), site = (uint32_t)w[2];
    s_find f = {.depth = (uint32_t)w[1]};
    if (w[1] > UINT32_MAX || rt_arena_walk(ctx, &vt->arena, vt->mod, s_find_cb, &f) != 1 ||
        ((lev_frame *)f.frame)->fn != fn)
        s_die("the function that called setjmp (%s) has returned: C leaves this jump undefined",
              s_fn_name(vt, fn));
    lev_jmp_reg *r = ctx->jmp;
    while (r && r->frame != f.frame)
        r = r->up;
    if (!r)
        s_die("the function that called setjmp (%s) is not running its checkpointable body "
              "here",
              s_fn_name(vt, fn));
    size_t size = rt_frame_size(vt->mod, fn);
    rt_arena_cut(ctx, &vt->arena, f.frame, size);
    ctx->jmp = r;
    ((lev_frame *)f.frame)->pc = site;
    r->val = v ? v : 1;
    /* a hint set around a call that the jump leaves would outlive it */
    lev_hint_restore((lev_alloc_hint){NULL, LEV_HINT_NONE});
    longjmp(*(jmp_buf *)r->jb, 1);
}

void lev_longjmp_vt(lev_ctx *ctx, void *env, int v)
{
    uint64_t w[4];
    memcpy(w, env, sizeof w);
    if (w[0] != S_MAGIC)
        s_die("the jmp_buf was not set by setjmp in checkpointable code (a setjmp in native code, "
              "or none): levpp cannot jump to it from a checkpointable function");
    s_jump(ctx, w, v);
}

/* A longjmp of native code (or of a function that is not checkpointable):
 * a marker jumps in the running VT, anything else is the C library's. */
static int s_marked(void *env, int v)
{
    uint64_t w[4];
    memcpy(w, env, sizeof w);
    if (w[0] != S_MAGIC)
        return 0;
    rt_vt *vt = rt_vt_current();
    s_jump(vt ? &vt->ctx : NULL, w, v);
}

void lev_longjmp(struct __jmp_buf_tag *env, int v)
{
    s_marked(env, v);
    longjmp(env, v);
}

void lev_siglongjmp(struct __jmp_buf_tag *env, int v)
{
    s_marked(env, v);
    siglongjmp(env, v);
}
