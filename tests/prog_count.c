/* prog_count.c - a whole program in the shape `levpp --main-task` gives it:
 * main is a checkpointable entry run by lev_main_run, so the process can
 * be checkpointed to a file, killed, and resumed in a new process.
 *
 * Source it stands for:
 *
 *   static uint64_t mix_block(uint64_t v);     // native: no safe point
 *   uint64_t step(uint64_t v, long work, long depth) {
 *       if (depth > 0)
 *           v = mix_block(step(v ^ depth, work / 2, depth - 1));
 *       for (long j = 0; j < work; j++)
 *           v = mix_block(v);                   // auto poll in the loop
 *       return v;
 *   }
 *   int main(int argc, char **argv) {
 *       long n = argc > 1 ? atol(argv[1]) : 100;
 *       long work = argc > 2 ? atol(argv[2]) : 100;
 *       uint64_t v = 1, *ring = calloc(8, sizeof *ring);
 *       for (long i = 1; n ? i <= n : i <= last_step(argc > 3 ? argv[3] : NULL); i++) {
 *           v = step(v, work, 2);
 *           ring[i % 8] = v;
 *           printf("step %ld %016llx\n", i, v);
 *           fflush(stdout);
 *           lev_checkpoint();
 *       }
 *       uint64_t r = 0;
 *       for (int k = 0; k < 8; k++) r = r * 31 + ring[k];
 *       const char *tag = getenv("PROG_COUNT_TAG");
 *       printf("result %016llx argc %d tag %s\n", r, argc, tag ? tag : "-");
 *       return (int)(r % 7) + 10;
 *   }
 *
 * With N = 0 the number of steps is read at every step from the file
 * named by the third argument (last_step): until that file exists the
 * program runs until it is killed, so a test can kill it whatever the
 * machine's speed, then let the resumed run end at a step it chooses.
 *
 * Built twice: PROG_COUNT_OTHER gives the module another name, hence
 * another identity, for the foreign-image test.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lev_task.h"

#ifdef PROG_COUNT_OTHER
#define S_MODULE_NAME "prog_count_other"
#else
#define S_MODULE_NAME "prog_count"
#endif

enum { FN_MAIN, FN_STEP, NFNS };
enum { T_MAIN = LEV_T_USER, T_STEP };

static lev_module *s_mod;

static uint64_t mix_block(uint64_t v)
{
    for (int k = 0; k < 1000; k++) {
        v ^= v >> 29;
        v *= 0xbf58476d1ce4e5b9ull;
        v ^= v >> 32;
    }
    return v;
}

/* --- uint64_t step(uint64_t v, long work, long depth) ---------------- */

struct step__frame {
    lev_frame h;
    uint64_t v;
    int64_t work;
    int64_t depth;
    int64_t j;
    uint64_t r; /* result slot of step() */
};

static int step__run(lev_ctx *vt, struct step__frame *fr, uint64_t *ret)
{
    struct step__frame *cf;
    uint64_t v;
    int64_t j;
    int rc;
    switch (fr->h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        v = fr->v;
        j = fr->j;
        goto resume_2;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "step: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->depth > 0) {
        cf = lev_frame_push(vt, sizeof *cf, FN_STEP);
        if (!cf) {
            lev_vt_fail(vt, LEV_ENOMEM, "step: no frame");
            return LEV_RUN_EXIT;
        }
        cf->v = fr->v ^ (uint64_t)fr->depth;
        cf->work = fr->work / 2;
        cf->depth = fr->depth - 1;
        if (0) {
        resume_1:
            cf = lev_frame_callee(vt, fr, sizeof *fr);
        }
        rc = step__run(vt, cf, &fr->r);
        if (rc != LEV_RUN_DONE) {
            if (rc == LEV_RUN_UNWIND)
                fr->h.pc = 1;
            else
                lev_frame_pop(vt, cf);
            return rc;
        }
        lev_frame_pop(vt, cf);
        fr->v = mix_block(fr->r);
    }
    v = fr->v;
    for (j = 0; j < fr->work; j++) {
        v = mix_block(v);
        if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_POLL)) {
            fr->h.pc = 2;
            fr->v = v;
            fr->j = j;
            return LEV_RUN_UNWIND;
        }
    resume_2:;
    }
    *ret = v;
    return LEV_RUN_DONE;
}

/* --- int main(int argc, char **argv) --------------------------------- */

/* The last step to run: the number in the file at path, or INT64_MAX while
 * there is no such file (or no path, or no number in it). Native code. */
static int64_t last_step(const char *path)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    long long n = INT64_MAX;
    if (f) {
        if (fscanf(f, "%lld", &n) != 1)
            n = INT64_MAX;
        fclose(f);
    }
    return (int64_t)n;
}

struct main__frame {
    lev_main_frame m;
    int64_t n, work, i;
    uint64_t v;
    uint64_t *ring; /* heap: the last 8 values */
    uint64_t r;     /* result slot of step() */
};

static int main__run(lev_ctx *vt, void *frame)
{
    struct main__frame *fr = frame;
    struct step__frame *cf;
    int rc;
    switch (fr->m.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    case 2:
        goto resume_2;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "main: bad resume point");
        return LEV_RUN_EXIT;
    }
    fr->n = fr->m.argc > 1 ? atol(fr->m.argv[1]) : 100;
    fr->work = fr->m.argc > 2 ? atol(fr->m.argv[2]) : 100;
    fr->v = 1;
    fr->ring = lev_alloc(s_mod, LEV_T_U64, 8);
    if (!fr->ring) {
        lev_vt_fail(vt, LEV_ENOMEM, "main: no ring");
        return LEV_RUN_EXIT;
    }
    for (fr->i = 1;
         fr->n ? fr->i <= fr->n : fr->i <= last_step(fr->m.argc > 3 ? fr->m.argv[3] : NULL);
         fr->i++) {
        cf = lev_frame_push(vt, sizeof *cf, FN_STEP);
        if (!cf) {
            lev_vt_fail(vt, LEV_ENOMEM, "main: no frame");
            return LEV_RUN_EXIT;
        }
        cf->v = fr->v;
        cf->work = fr->work;
        cf->depth = 2;
        if (0) {
        resume_1:
            cf = lev_frame_callee(vt, fr, sizeof *fr);
        }
        rc = step__run(vt, cf, &fr->r);
        if (rc != LEV_RUN_DONE) {
            if (rc == LEV_RUN_UNWIND)
                fr->m.h.pc = 1;
            else
                lev_frame_pop(vt, cf);
            return rc;
        }
        lev_frame_pop(vt, cf);
        fr->v = fr->r;
        fr->ring[fr->i % 8] = fr->v;
        printf("step %" PRId64 " %016" PRIx64 "\n", fr->i, fr->v);
        fflush(stdout);
        if (lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
            fr->m.h.pc = 2;
            return LEV_RUN_UNWIND;
        }
    resume_2:;
    }
    uint64_t r = 0;
    for (int k = 0; k < 8; k++)
        r = r * 31 + fr->ring[k];
    const char *tag = getenv("PROG_COUNT_TAG");
    printf("result %016" PRIx64 " argc %d tag %s\n", r, fr->m.argc, tag ? tag : "-");
    fflush(stdout);
    fr->m.ret = (int)(r % 7) + 10;
    return LEV_RUN_DONE;
}

/* --- descriptors ----------------------------------------------------- */

#define F(type, field, kind)                                                                       \
    {                                                                                              \
#field, (uint32_t)offsetof(type, field), kind, 1, 0                                        \
    }

static const lev_field_desc s_step_f[] = {
    F(struct step__frame, v, LEV_K_B8), F(struct step__frame, work, LEV_K_B8),
    F(struct step__frame, depth, LEV_K_B8), F(struct step__frame, j, LEV_K_B8),
    F(struct step__frame, r, LEV_K_B8)};
static const lev_field_desc s_main_f[] = {
    F(struct main__frame, m.argc, LEV_K_B4), F(struct main__frame, m.argv, LEV_K_PTR),
    F(struct main__frame, m.ret, LEV_K_B4),  F(struct main__frame, n, LEV_K_B8),
    F(struct main__frame, work, LEV_K_B8),   F(struct main__frame, i, LEV_K_B8),
    F(struct main__frame, v, LEV_K_B8),      F(struct main__frame, ring, LEV_K_PTR),
    F(struct main__frame, r, LEV_K_B8)};

static const lev_type_desc s_types[] = {
    {"frame main", sizeof(struct main__frame), sizeof s_main_f / sizeof s_main_f[0], s_main_f,
     _Alignof(struct main__frame)},
    {"frame step", sizeof(struct step__frame), sizeof s_step_f / sizeof s_step_f[0], s_step_f,
     _Alignof(struct step__frame)},
};

static const lev_fn_desc s_fns[NFNS] = {
    [FN_MAIN] = {"main", NULL, main__run, T_MAIN, LEV_FN_MAIN},
    [FN_STEP] = {"step", NULL, NULL, T_STEP, 0},
};

static const lev_module_desc s_desc = {LEV_ABI_VERSION,
                                       S_MODULE_NAME,
                                       sizeof s_types / sizeof s_types[0],
                                       s_types,
                                       NFNS,
                                       s_fns,
                                       0,
                                       NULL};

/* What levpp emits for main: register the module (for lev_alloc) and run
 * main as a virtual thread. */
int main(int argc, char **argv)
{
    if (lev_module_register(&s_desc, &s_mod)) {
        fprintf(stderr, "%s: %s (%s)\n", argv[0], lev_strerror(LEV_EINVAL), lev_errdetail());
        return 2;
    }
    return lev_main_run(&s_desc, FN_MAIN, argc, argv);
}
