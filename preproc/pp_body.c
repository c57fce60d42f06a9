/* pp_body.c - a checkpointable body as a whole: scopes, lazy frames, the
 * f__run / f__resume functions, spills and the per-site unwind blocks.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

typedef struct pp_scopes {
    unsigned magic; /* PP_MAGIC_SCOPES */
    pp_tok *v;      /* extents of the blocks and for statements of a body */
    unsigned n, cap;
} pp_scopes;

static enum CXChildVisitResult pp_scopes_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_scopes *sc = pp_visit_state(d, PP_MAGIC_SCOPES);
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_CompoundStmt || k == CXCursor_ForStmt) {
        PP_PUSH(sc->v, sc->n, sc->cap);
        sc->v[sc->n++] = (pp_tok){pp_begin(c), pp_end(c)};
    }
    return CXChildVisit_Recurse;
}

/* Where each local of fn is in scope: from its declaration to the end of
 * the innermost block or for statement around it. */
static void pp_scopes_of(pp_fn *fn)
{
    pp_scopes sc = {.magic = PP_MAGIC_SCOPES};
    clang_visitChildren(fn->body_c, pp_scopes_cb, &sc);
    for (unsigned i = fn->nparams; i < fn->nvars; i++) {
        pp_var *v = &fn->vars[i];
        unsigned d = pp_begin(v->decl), best = UINT_MAX;
        v->scope_b = 0;
        v->scope_e = UINT_MAX;
        if (clang_Cursor_isNull(v->decl) || pp_kind(v->decl) != CXCursor_VarDecl)
            continue;
        for (unsigned j = 0; j < sc.n; j++)
            if (sc.v[j].b <= d && d < sc.v[j].e && sc.v[j].e - sc.v[j].b < best) {
                best = sc.v[j].e - sc.v[j].b;
                v->scope_b = d;
                v->scope_e = sc.v[j].e;
            }
    }
    free(sc.v);
}

/* First pass over a checkpointable function: chooses its C locals and
 * walks its body, recording the edits of its safe points and call sites
 * (whose code is the same whichever prologue pp_rewrite gives it). */
static void pp_walk_fn(pp_fn *fn)
{
    pp_file *f = &ctx.files[fn->file];
    pp_kids k = pp_children(fn->def);
    fn->body_c = clang_getNullCursor();
    for (unsigned i = 0; i < k.n; i++)
        if (pp_kind(k.v[i]) == CXCursor_CompoundStmt)
            fn->body_c = k.v[i];
    free(k.v);
    pp_regs(fn);
    for (unsigned i = 0; fn->has_setjmp && i < fn->nvars; i++) {
        /* a longjmp to its body finds them in the frame (pp_setjmp.c) */
        fn->vars[i].sj_frame = fn->vars[i].reg;
        fn->vars[i].reg = 0;
    }
    pp_scopes_of(fn);
    pp_walk w = {fn, f, pp_begin(fn->body_c), pp_end(fn->body_c), 0, 0};
    pp_vla_params(&w);
    pp_stmt(&w, fn->body_c, 0);
}

/* Whether fn's whole state fits in C locals of its body: every variable it
 * uses, result slot and temporary is a scalar or a pointer whose address
 * is never taken. */
static int pp_frameless(pp_fn *fn)
{
    if (fn->is_task || fn->is_main || fn->has_setjmp)
        return 0;
    for (unsigned i = 0; i < fn->nvars; i++)
        if (fn->vars[i].refs && !fn->vars[i].reg)
            return 0;
    for (unsigned i = 0; i < fn->nslots; i++)
        if (!pp_local_ok(fn->slots[i].type))
            return 0;
    for (unsigned i = 0; i < fn->ntmps; i++)
        if (!pp_local_ok(fn->tmps[i].type))
            return 0;
    return 1;
}

/* Whether a lazy function's fresh body must reserve its frame (push it)
 * before it calls g: g is framed, or reserves itself (so may push). */
static int pp_pushes(const pp_fn *g) { return g->cp && (!g->lazy || g->reserving); }

/* Chooses the functions that run without a frame until they unwind
 * (lazy): every frameless one. A lazy function that may reach a framed
 * one (least fixpoint over the call graph) is *reserving*: around each
 * call whose callee may push a frame (pp_pushes) its fresh body pushes its
 * own frame, which an unwind of the callee fills instead of spilling one.
 * So along every chain of active calls the pushed frames (framed
 * functions, reserved frames, resumed bodies) come first and the spilled
 * ones after them, and the runtime lays the spilled frames above the
 * pushed ones in call order. */
static void pp_lazy(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++) {
        ctx.fns[i].lazy = ctx.fns[i].cp && ctx.fns[i].file >= 0 && pp_frameless(&ctx.fns[i]);
        ctx.fns[i].reserving = 0;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (unsigned i = 0; i < ctx.nfns; i++) {
            pp_fn *fn = &ctx.fns[i];
            for (unsigned c = 0; fn->lazy && !fn->reserving && c < fn->ncallees; c++)
                if (pp_pushes(&ctx.fns[fn->callees[c]])) {
                    fn->reserving = 1;
                    changed = 1;
                }
        }
    }
}

/* The C locals of slots and temporaries (pp_slot_ref) visited with fn(i,
 * x, k, t) for i = 0, 1, ...: x is 'r' or 't'. */
#define PP_EACH_SLOT(FN, X, K, T, ...)                                                             \
    do {                                                                                           \
        for (unsigned pp_i = 0; pp_i < (FN)->nslots + (FN)->ntmps; pp_i++) {                       \
            int X = pp_i < (FN)->nslots ? 'r' : 't';                                               \
            pp_slot *pp_s = X == 'r' ? &(FN)->slots[pp_i] : &(FN)->tmps[pp_i - (FN)->nslots];      \
            unsigned K = pp_s->k;                                                                  \
            CXType T = pp_s->type;                                                                 \
            if (pp_local_ok(T)) {                                                                  \
                __VA_ARGS__;                                                                       \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Declares the C locals of fn's body. `from`: how they start: 0 at 0
 * but the parameters loaded from the frame (a fresh frame), 1 all loaded
 * from the frame (resuming a lazy function), 2 at 0 with the parameters
 * left out (a lazy function's fresh __run, whose parameters they are). */
/* `dst = src;` for a C local or frame field of var v (arrays: memcpy). */
static void pp_copy(pp_buf *b, const pp_var *v, const char *indent, const char *dst,
                    const char *src)
{
    if (clang_getCanonicalType(v->type).kind == CXType_ConstantArray)
        pp_printf(b, "%s__builtin_memcpy(%s, %s, sizeof(%s));\n", indent, dst, src, dst);
    else
        pp_printf(b, "%s%s = %s;\n", indent, dst, src);
}

static void pp_locals(pp_buf *b, pp_fn *fn, int from)
{
    /* what the call sites test (pp_seqs): only a reserving function's
     * fresh __run has no frame of its own when it calls a function that
     * may push one; it reserves it in lev__rf, which its unwinds fill */
    pp_printf(b,
              "    enum { lev__reserve = %d };\n"
              "    struct %s__frame *lev__rf __attribute__((__unused__)) = NULL;\n",
              from == 2 && fn->reserving, fn->cname);
    for (unsigned i = 0; i < fn->nvars; i++)
        if (fn->vars[i].reg && !(from == 2 && i < fn->nparams)) {
            char *r = pp_var_ref(fn, (int)i);
            char *fld = pp_fmt("fr->%s", fn->vars[i].field);
            if (clang_getCanonicalType(fn->vars[i].type).kind == CXType_ConstantArray &&
                from == 1) {
                pp_printf(b, "    __typeof__(fr->%s) %s;\n", fn->vars[i].field, r);
                pp_copy(b, &fn->vars[i], "    ", r, fld);
            } else if (from == 1 || (from == 0 && i < fn->nparams))
                pp_printf(b, "    __typeof__(fr->%s) %s = fr->%s;\n", fn->vars[i].field, r,
                          fn->vars[i].field);
            else if (clang_getCanonicalType(fn->vars[i].type).kind == CXType_ConstantArray &&
                     !pp_has_pointer(fn->vars[i].type))
                /* bytes: what it holds before the program writes it is
                 * never read, and a capture copies it as it is */
                pp_printf(b, "    __typeof__(fr->%s) %s;\n", fn->vars[i].field, r);
            else
                pp_printf(b, "    __typeof__(fr->%s) %s = {0};\n", fn->vars[i].field, r);
            free(fld);
            free(r);
        }
    if (from == 1)
        PP_EACH_SLOT(fn, x, k, t,
                     pp_printf(b, "    __typeof__(fr->lev__%c%u) lev__%c%u = fr->lev__%c%u;\n", x,
                               k, x, k, x, k));
    else
        PP_EACH_SLOT(fn, x, k, t,
                     pp_printf(b, "    __typeof__(fr->lev__%c%u) lev__%c%u = {0};\n", x, k, x, k));
    if (fn->counters.p)
        pp_puts(b, fn->counters.p);
}

/* The resume path: reloads the C locals other than the parameters unless
 * `loaded`, and jumps to the resume point numbered by the frame's pc. */
static void pp_resume(pp_buf *b, pp_fn *fn, int loaded)
{
    for (unsigned i = fn->nparams; !loaded && i < fn->nvars; i++)
        if (fn->vars[i].reg) {
            char *r = pp_var_ref(fn, (int)i), *fld = pp_fmt("fr->%s", fn->vars[i].field);
            pp_copy(b, &fn->vars[i], "        ", r, fld);
            free(fld);
            free(r);
        }
    if (!loaded)
        PP_EACH_SLOT(fn, x, k, t, pp_printf(b, "        lev__%c%u = fr->lev__%c%u;\n", x, k, x, k));
    pp_printf(b, "        switch (%s) {\n", fn->pcf);
    for (unsigned i = 1; i <= fn->npc; i++)
        pp_printf(b, "        case %u:\n            goto lev__resume_%u;\n", i, i);
    char *ex = pp_return(fn, "LEV_RUN_EXIT", NULL);
    pp_printf(b,
              "        default:\n            lev_vt_fail(vt, LEV_EFAILED, \"%s: bad resume "
              "point\");\n            %s\n        }\n",
              fn->name, ex);
    free(ex);
}

/* Declares, as parameters of __spill, the C locals of a body that an
 * unwind stores: the vars kept in C locals, then the slots and
 * temporaries (PP_EACH_SLOT). */
static void pp_spill_list(pp_buf *b, pp_fn *fn)
{
    for (unsigned i = 0; i < fn->nvars; i++)
        if (fn->vars[i].reg) {
            char *r = pp_var_ref(fn, (int)i);
            pp_printf(b, ",\n    __typeof__(((struct %s__frame *)0)->%s) %s", fn->cname,
                      fn->vars[i].field, r);
            free(r);
        }
    PP_EACH_SLOT(fn, x, k, t,
                 pp_printf(b, ",\n    __typeof__(((struct %s__frame *)0)->lev__%c%u) lev__%c%u",
                           fn->cname, x, k, x, k));
}

/* Whether var vi of fn is in scope at site k (a variable out of scope
 * there is dead: its value is not kept). */
int pp_in_scope(pp_fn *fn, unsigned vi, unsigned k)
{
    unsigned at = fn->site_at[k];
    return vi < fn->nparams || (fn->vars[vi].scope_b <= at && at < fn->vars[vi].scope_e);
}

/* A lazy function's unwind out of line, so that its fresh __run stays
 * small enough to inline: the C locals passed in are stored, with the
 * resume point lev__pc, in the frame `fr` that a reserving function's
 * call site pushed, or else (NULL) in one spilled (lev_frame_spill). */
static void pp_spill_fn(pp_buf *b, pp_fn *fn)
{
    pp_printf(
        b,
        "__attribute__((__noinline__, __cold__)) static struct %s__ret %s__spill(lev_ctx *vt, "
        "struct %s__frame *fr, uint32_t lev__pc",
        fn->cname, fn->cname, fn->cname);
    pp_spill_list(b, fn);
    pp_printf(b,
              ")\n{\n    if (!fr)\n        fr = lev_frame_spill(vt, sizeof *fr, %s);\n"
              "    if (!fr)\n        return (struct %s__ret){.rc = LEV_RUN_EXIT};\n"
              "    fr->h.pc = lev__pc;\n",
              fn->idname, fn->cname);
    for (unsigned i = 0; i < fn->nvars; i++)
        if (fn->vars[i].reg) {
            char *r = pp_var_ref(fn, (int)i), *fld = pp_fmt("fr->%s", fn->vars[i].field);
            pp_copy(b, &fn->vars[i], "    ", fld, r);
            free(fld);
            free(r);
        }
    PP_EACH_SLOT(fn, x, k, t, pp_printf(b, "    fr->lev__%c%u = lev__%c%u;\n", x, k, x, k));
    pp_printf(b, "    return (struct %s__ret){.rc = LEV_RUN_UNWIND};\n}\n\n", fn->cname);
}

/* The blocks the sites jump to to unwind, one per site k at
 * lev__unwind_K: they store k as the pc and the C locals in scope at the
 * site in the frame (out of scope: 0, so that neither a stale value nor
 * its liveness is kept) and return LEV_RUN_UNWIND; a lazy function's
 * fresh __run (`spill`) passes them to its __spill instead. */
static void pp_unwind_block(pp_buf *b, pp_fn *fn, int spill)
{
    char *un = pp_return(fn, "LEV_RUN_UNWIND", NULL);
    pp_puts(b, "    if (0) {\n");
    for (unsigned k = 1; k <= fn->npc; k++) {
        pp_printf(b, "    lev__unwind_%u:\n", k);
        if (spill)
            pp_printf(b, "        return %s__spill(vt, lev__rf, %u", fn->cname, k);
        else
            pp_printf(b, "        %s = %u;\n", fn->pcf, k);
        pp_setjmp_dead(b, fn, k);
        for (unsigned i = 0; i < fn->nvars; i++)
            if (fn->vars[i].reg) {
                char *r = pp_in_scope(fn, i, k)         ? pp_var_ref(fn, (int)i)
                          : pp_scalar(fn->vars[i].type) ? pp_strdup("0")
                                                        : pp_fmt("(__typeof__(((struct %s__frame "
                                                                 "*)0)->%s)){0}",
                                                                 fn->cname, fn->vars[i].field);
                if (spill) {
                    pp_printf(b, ", %s", r);
                } else {
                    char *fld = pp_fmt("fr->%s", fn->vars[i].field);
                    pp_copy(b, &fn->vars[i], "        ", fld, r);
                    free(fld);
                }
                free(r);
            }
        if (spill) {
            PP_EACH_SLOT(fn, x, kk, t, pp_printf(b, ", lev__%c%u", x, kk));
            pp_puts(b, ");\n");
        } else {
            PP_EACH_SLOT(fn, x, kk, t,
                         pp_printf(b, "        fr->lev__%c%u = lev__%c%u;\n", x, kk, x, kk));
            pp_printf(b, "        %s\n", un);
        }
    }
    pp_puts(b, "    }\n");
    free(un);
}

/* Parameters of fn's __run after vt: one per C parameter, named by
 * pp_var_ref for a lazy function's C locals (`names`), else lev__aN. */
void pp_params(pp_buf *b, pp_fn *fn, int names)
{
    CXType ft = clang_getCursorType(fn->def);
    int n = clang_getNumArgTypes(ft);
    for (int i = 0; i < n; i++) {
        char *nm = names && fn->lazy && (unsigned)i < fn->nvars && fn->vars[i].reg
                       ? pp_var_ref(fn, i)
                       : pp_fmt("lev__a%d", i);
        char *d = pp_decl(pp_param_type(ft, (unsigned)i, clang_getArgType(ft, (unsigned)i)), nm);
        pp_printf(b, ", %s", d);
        free(d);
        free(nm);
    }
}

/* The definition of fn's result type, struct NAME__ret: the LEV_RUN_*
 * code and the value, returned in registers where the ABI allows. */
void pp_ret_struct(pp_buf *o, pp_fn *fn)
{
    /* whether a lazy caller reserves its frame before calling fn */
    pp_printf(o, "enum { %s__rsv = %d };\n", fn->cname, pp_pushes(fn));
    pp_printf(o, "struct %s__ret {\n    int rc;\n", fn->cname);
    if (!fn->ret_void) {
        char *d = pp_decl(clang_getUnqualifiedType(fn->ret), "v");
        pp_printf(o, "    %s;\n", d);
        free(d);
    }
    pp_puts(o, "};\n");
}

/* Whether function fn is declared always_inline (on any of its
 * declarations, also through a macro): its fresh __run is too, so that
 * what the native build inlines is inlined in levpp's output. */
static int pp_always_inline(pp_fn *fn)
{
    static const char *const names[] = {"always_inline", "__always_inline__", NULL};
    return pp_has_attr(fn->def, names);
}

/* Declaration text of what calls fn: its fresh entry __run (`resume` 0:
 * a prototype; -1: a lazy function's definition, whose parameters its
 * body names as its C locals; -2: a framed function's definition) or its
 * __resume (1: the frame restored by the runtime); task and main entries
 * have one __run(vt, frame) that the runtime calls. */
char *pp_run_proto(pp_fn *fn, int resume)
{
    if (fn->is_task || fn->is_main)
        return pp_fmt("static int %s__run(lev_ctx *vt, void *frame)", fn->cname);
    pp_buf b = {0};
    /* unused: a function no other input calls has no __xrun to call them */
    if (resume > 0) {
        pp_printf(
            &b,
            "static __attribute__((__unused__)) struct %s__ret %s__resume(lev_ctx *vt, struct "
            "%s__frame *fr)",
            fn->cname, fn->cname, fn->cname);
    } else {
        /* a lazy function's fresh entry is a candidate for inlining, also
         * into itself, as the native function would be; so is a framed
         * function's (-2), which pushes the frame and calls __resume */
        const char *kw = resume >= 0 || (resume == -1 && !fn->lazy) ? ""
                         : pp_always_inline(fn) ? "inline __attribute__((__always_inline__)) "
                                                : "inline ";
        pp_printf(&b, "static __attribute__((__unused__)) %sstruct %s__ret %s__run(lev_ctx *vt", kw,
                  fn->cname, fn->cname);
        pp_params(&b, fn, resume == -1);
        pp_puts(&b, ")");
    }
    return b.p;
}

/* Writes the body statement of fn after its prologue. */
static void pp_body_text(pp_buf *b, pp_fn *fn)
{
    pp_file *f = &ctx.files[fn->file];
    unsigned bb = pp_begin(fn->body_c), be = pp_end(fn->body_c);
    pp_printf(b, "#line %u \"%s\"\n", pp_line_of(f, bb), f->path);
    pp_render(b, f, bb, be, 1, R_SYNC);
    pp_puts(b, "\n");
}

/* Second pass: the code of fn in fn->body; pp_emit closes its last
 * function with `return LEV_RUN_DONE; }`.
 * - A task or main entry: __run(vt, frame) on the frame the runtime gave.
 * - A lazy function: __run(vt, args..., ret) runs the body in C locals
 *   with no resume point reachable and gets a frame only if it unwinds
 *   (lev_frame_spill); __resume(vt, fr, ret) reloads them from the frame
 *   and jumps to the resume point.
 * - Any other: __run pushes the frame, stores the arguments and runs
 *   __resume, the body, which starts afresh at pc 0 and resumes otherwise;
 *   __run pops the frame unless the body unwound. */
static void pp_rewrite(pp_fn *fn)
{
    pp_buf *b = &fn->body;
    char *p;
    if (fn->is_task || fn->is_main) {
        p = fn->has_setjmp ? pp_setjmp_wrap(b, fn) : pp_run_proto(fn, 0);
        pp_printf(b, "%s\n{\n", p);
        free(p);
        pp_printf(b, "    struct %s__frame *fr = frame;\n", fn->cname);
        pp_printf(b,
                  "    if (%s == 0)\n"
                  "        __builtin_memset((char *)fr + sizeof fr->%c, 0, sizeof *fr - sizeof "
                  "fr->%c);\n",
                  fn->pcf, fn->is_task ? 't' : 'm', fn->is_task ? 't' : 'm');
    } else if (fn->lazy) {
        pp_spill_fn(b, fn);
        p = pp_run_proto(fn, -1);
        pp_printf(
            b, "%s\n{\n    typedef struct %s__ret lev__ret_t;\n    struct %s__frame *fr = NULL;\n",
            p, fn->cname, fn->cname);
        free(p);
        for (unsigned i = 0; i < fn->nparams; i++)
            if (!fn->vars[i].reg)
                pp_printf(b, "    (void)lev__a%u;\n", i);
        pp_locals(b, fn, 2);
        pp_unwind_block(b, fn, 1);
        pp_body_text(b, fn);
        pp_reserve_release(b, fn);
        pp_puts(b, "    return (lev__ret_t){.rc = LEV_RUN_DONE};\n}\n\n");
        p = pp_run_proto(fn, 1);
        pp_printf(b, "%s\n{\n    typedef struct %s__ret lev__ret_t;\n", p, fn->cname);
        free(p);
        pp_locals(b, fn, 1);
        pp_puts(b, "    {\n");
        pp_resume(b, fn, 1);
        pp_puts(b, "    }\n");
        pp_unwind_block(b, fn, 0);
        pp_body_text(b, fn);
        return;
    } else {
        p = pp_run_proto(fn, -2);
        pp_printf(b,
                  "%s\n{\n    struct %s__frame *fr = "
                  "lev_frame_push_aligned(vt, sizeof *fr, __alignof__(struct %s__frame), %s);\n"
                  "    if (!fr) {\n"
                  "        lev_vt_fail(vt, LEV_ENOMEM, \"%s: no frame\");\n"
                  "        return (struct %s__ret){.rc = LEV_RUN_EXIT};\n    }\n",
                  p, fn->cname, fn->cname, fn->idname, fn->name, fn->cname);
        free(p);
        for (unsigned i = 0; i < fn->nparams; i++) {
            char *dst = pp_fmt("fr->%s", fn->vars[i].field), *src = pp_fmt("lev__a%u", i);
            char *cp = pp_copy_into(dst, src, fn->vars[i].type);
            pp_printf(b, "    %s;\n", cp);
            free(cp);
            free(src);
            free(dst);
        }
        /* initialised, not assigned: R may have a const member */
        pp_printf(b,
                  "    struct %s__ret lev__x = %s__resume(vt, fr);\n"
                  "    if (lev__x.rc != LEV_RUN_UNWIND)\n"
                  "        lev_frame_pop(vt, fr);\n    return lev__x;\n}\n\n",
                  fn->cname, fn->cname);
        p = fn->has_setjmp ? pp_setjmp_wrap(b, fn) : pp_run_proto(fn, 1);
        pp_printf(b, "%s\n{\n    typedef struct %s__ret lev__ret_t;\n", p, fn->cname);
        free(p);
    }
    pp_locals(b, fn, 0);
    pp_printf(b, "    if (%s != 0) {\n", fn->pcf);
    pp_resume(b, fn, 0);
    pp_puts(b, "    }\n");
    if (!fn->is_task && !fn->is_main) {
        /* first entry: the frame was pushed without clearing it; clear
         * the fields a capture walks as pointers that may be read before
         * they are written (the parameters are stored by __run, the C
         * locals spilled by the unwind) */
        for (unsigned i = fn->nparams; i < fn->nvars; i++)
            if (!fn->vars[i].reg && pp_has_pointer(fn->vars[i].type))
                pp_printf(b, "    __builtin_memset(&fr->%s, 0, sizeof fr->%s);\n",
                          fn->vars[i].field, fn->vars[i].field);
        for (unsigned i = 0; i < fn->nslots + fn->ntmps; i++) {
            int x = i < fn->nslots ? 'r' : 't';
            pp_slot *sl = x == 'r' ? &fn->slots[i] : &fn->tmps[i - fn->nslots];
            if (!pp_local_ok(sl->type) && pp_has_pointer(sl->type))
                pp_printf(b, "    __builtin_memset(&fr->lev__%c%u, 0, sizeof fr->lev__%c%u);\n", x,
                          sl->k, x, sl->k);
        }
    }
    pp_unwind_block(b, fn, 0);
    pp_body_text(b, fn);
}

/* Pass: walks each checkpointable body (its sites, temporaries and
 * lowered operators), then decides which functions run lazily. */
void pp_walk_bodies(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp)
            pp_walk_fn(&ctx.fns[i]);
    pp_lazy();
}

/* Pass: writes the resumable bodies, and renames a --main-task main to
 * main__native. */
void pp_rewrite_bodies(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp)
            pp_rewrite(&ctx.fns[i]);
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].is_main) {
            pp_file *f = &ctx.files[ctx.fns[i].file];
            CXCursor def = ctx.fns[i].def;
            CXSourceRange nr = clang_Cursor_getSpellingNameRange(def, 0, 0);
            pp_edit_add(f, pp_off(clang_getRangeStart(nr)), pp_off(clang_getRangeEnd(nr)), E_REPL,
                        0, 0, pp_strdup("main__native"));
            /* Only its address is used (the descriptor table's), and a
             * main that ends without `return` has one only as `main`. */
            pp_edit_add(f, pp_begin(def), pp_begin(def), E_PRE, 0, 0,
                        pp_strdup("_Pragma(\"GCC diagnostic push\") "
                                  "_Pragma(\"GCC diagnostic ignored \\\"-Wreturn-type\\\"\")\n"));
            pp_edit_add(f, pp_end(def), pp_end(def), E_POST, 0, 0,
                        pp_strdup("\n_Pragma(\"GCC diagnostic pop\")\n"));
            /* its other declarations with a prototype (`int main(void);`,
             * which the generated main(int, char **) contradicts) name it
             * too; `int main();` stays, for code that takes its address */
            pp_kids k = pp_children(clang_getTranslationUnitCursor(f->tu));
            for (unsigned j = 0; j < k.n; j++) {
                CXCursor d = k.v[j];
                if (pp_kind(d) != CXCursor_FunctionDecl || clang_isCursorDefinition(d) ||
                    clang_getCursorType(d).kind != CXType_FunctionProto ||
                    !clang_Location_isFromMainFile(PP_LOC(d)) || pp_in_macro(d))
                    continue;
                char *name = pp_cxstring(clang_getCursorSpelling(d));
                if (!strcmp(name, "main")) {
                    CXSourceRange dr = clang_Cursor_getSpellingNameRange(d, 0, 0);
                    pp_edit_add(f, pp_off(clang_getRangeStart(dr)), pp_off(clang_getRangeEnd(dr)),
                                E_REPL, 0, 0, pp_strdup("main__native"));
                }
                free(name);
            }
            free(k.v);
        }
}
