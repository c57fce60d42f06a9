/* pp_expr.c - expression lowering: the units of sites (safe points,
 * calls, indirect calls) of an expression, operators lowered to
 * statements that keep their short-circuit and order, and their text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Rewriting a checkpointable body
 * =================================================================== */

/* How an expression is evaluated: F_COND in an operand that runs
 * conditionally and could not be lowered, F_UNEVAL not at all (sizeof,
 * __typeof__), F_STMTEXPR in a statement expression that is not lowered,
 * F_LATE in a macro's expansion after other code of it, conditionally or
 * repeatedly (see pp_macro_walk). */
enum { F_COND = 1, F_UNEVAL = 16, F_STMTEXPR = 32, F_LATE = 64 };

/* What a unit holds, in evaluation order: safe points and calls, and the
 * operators whose later operands hold sites (S_AND...), lowered to
 * statements that keep their short-circuit and order:
 *
 *   S_AND  L && R   t = !!(L); if (t) { R's sites; t = !!(R); }   (|| : if (!t))
 *   S_COND C ? A : B   if (C) { A's sites; t = (A); } else { B's sites; t = (B); }
 *   S_COMMA L, R    (void)(L);  then R's sites in the same unit
 *   S_ELVIS A ?: B  t = (A); if (!t) { B's sites; t = (B); }
 *   S_STMTEXPR ({ ctx...; E; })   { ctx... { E's sites; t = (E); } }
 *
 * t is a frame field lev__tK (it may be read after a later site resumes),
 * and the operator's text becomes t, or (void)0 when its value is unused. */
enum {
    S_POINT = 0,
    S_CALL = 1,
    S_ICALL,
    S_SETJMP,
    S_BLOCK, /* a blocking Leverage call (pp_block.c) */
    S_AND,
    S_OR,
    S_COND,
    S_COMMA,
    S_ELVIS,
    S_STMTEXPR
};

static const char *pp_ctx_name(int flags)
{
    if (flags & F_STMTEXPR)
        return "a statement expression";
    return "a conditionally evaluated operand (&&, ||, ?:)";
}

static void pp_expr_kids(pp_walk *w, CXCursor c, int flags, pp_unit *u)
{
    pp_kids k = pp_children(c);
    for (unsigned i = 0; i < k.n; i++)
        pp_expr(w, k.v[i], flags, u);
    free(k.v);
}

static void pp_declref(pp_walk *w, CXCursor c)
{
    CXCursor ref = clang_getCursorReferenced(c);
    enum CXCursorKind rk = pp_kind(ref);
    if (rk != CXCursor_VarDecl && rk != CXCursor_ParmDecl) {
        if (rk == CXCursor_FunctionDecl)
            return;
    }
    int vi = pp_var_find(w->fn, ref);
    char *name = pp_cxstring(clang_getCursorSpelling(ref));
    if (vi < 0) {
        if ((rk == CXCursor_VarDecl || rk == CXCursor_FunctionDecl) &&
            (!strcmp(name, "vt") || !strcmp(name, "fr") || !strcmp(name, "ret")))
            pp_error(PP_LOC(c),
                     "'%s' names a file-scope object, and checkpointable code uses this name "
                     "for its frame; rename it",
                     name);
        free(name);
        return;
    }
    unsigned b, e;
    if (!pp_in_macro(c)) {
        b = pp_begin(c);
        e = pp_end(c);
    } else {
        CXFile file;
        clang_getSpellingLocation(PP_LOC(c), &file, NULL, NULL, &b);
        e = b + (unsigned)strlen(name);
        if (!clang_File_isEqual(file, w->f->cxf) || b < w->body_b || e > w->body_e ||
            memcmp(w->f->text + b, name, strlen(name))) {
            pp_error(PP_LOC(c),
                     "local '%s' of checkpointable function '%s' is used inside the body of a "
                     "macro; pass it to the macro as an argument",
                     name, w->fn->name);
            free(name);
            return;
        }
        for (unsigned i = 0; i < w->f->nedits; i++)
            if (w->f->edits[i].b == b && w->f->edits[i].e == e) {
                free(name);
                return; /* a macro argument expanded twice */
            }
    }
    pp_edit_add(w->f, b, e, E_REPL, 0, 1, pp_var_ref(w->fn, vi));
    free(name);
}

/* An error at offset off of the input being rewritten: text written in a
 * macro argument, which libclang would locate at the macro's name. */
static void __attribute__((format(printf, 3, 4)))
pp_error_at(pp_walk *w, unsigned off, const char *fmt, ...)
{
    unsigned line = pp_line_of(w->f, off);
    va_list ap;
    va_start(ap, fmt);
    pp_vdiag(PP_ERROR, 1, w->f->path, line, off - w->f->lines[line - 1] + 1, fmt, ap);
    va_end(ap);
}

/* Whether an expression that levpp replaces (a call, a lowered operator)
 * at [b, e) is replaced there for the first time: an expression written in
 * a macro argument that the macro evaluates twice would be run once and
 * read twice (an error, naming the call `what` `name` if not NULL). */
static int pp_arg_once(pp_walk *w, CXCursor c, unsigned b, unsigned e, const char *what,
                       const char *name)
{
    if (!pp_in_macro(c))
        return 1;
    for (unsigned i = 0; i < w->f->nedits; i++) {
        pp_edit *ed = &w->f->edits[i];
        if (ed->cls == E_REPL && ed->run && ed->b == b && ed->e == e) {
            if (name)
                pp_error_at(w, b,
                            "a macro argument that calls %s '%s' in '%s' is evaluated more than "
                            "once by the macro; call it before the macro and pass the result",
                            what, name, w->fn->name);
            else
                pp_error_at(w, b,
                            "a macro argument that calls a checkpointable function in '%s' is "
                            "evaluated more than once by the macro; call it before the macro and "
                            "pass the result",
                            w->fn->name);
            return 0;
        }
    }
    return 1;
}

/* The text of f that spells c (pp_span), or its extent. */
static void pp_text_of(const pp_file *f, CXCursor c, unsigned *b, unsigned *e)
{
    if (!pp_span(f, c, b, e)) {
        *b = pp_begin(c);
        *e = pp_end(c);
    }
}

static int pp_is_top(pp_unit *u, CXCursor c)
{
    return u && u->has_top && clang_equalCursors(pp_strip(u->top), c);
}

/* How a result slot (x 'r') or temporary (x 't') k of type t is named:
 * a C local of the body (lev__rK, lev__tK) for scalars and pointers, else
 * its frame field. */
char *pp_slot_ref(int x, unsigned k, CXType t)
{
    return pp_fmt(pp_local_ok(t) ? "lev__%c%u" : "fr->lev__%c%u", x, k);
}

/* How the expression reads slot or temporary k (see pp_slot_ref): one
 * that may hold a pointer is cleared as it is read, so that no stale copy
 * is left to dangle once its object is freed. */
static char *pp_slot_read(int x, unsigned k, CXType t)
{
    char *r = pp_slot_ref(x, k, t);
    if (!pp_has_pointer(t))
        return r;
    char *s = pp_scalar(t)
                  ? pp_fmt("({ __typeof__(%s) lev__v = %s; %s = 0; lev__v; })", r, r, r)
                  : pp_fmt("({ __typeof__(%s) lev__v = %s; __builtin_memset(&%s, 0, sizeof "
                           "lev__v); lev__v; })",
                           r, r, r);
    free(r);
    return s;
}

/* A call through a pointer that may reach a checkpointable function (a
 * candidate: pp_icall_candidate) becomes a resumable site (S_ICALL), dispatched on
 * the pointer's value; with no candidate it stays a native call. */
static void pp_icall(pp_walk *w, CXCursor c, int flags, pp_unit *u)
{
    if (!pp_icall_cp(c))
        return;
    unsigned cb, ce;
    if (!pp_span(w->f, c, &cb, &ce)) {
        pp_error(PP_LOC(c), "call through a pointer that may reach a checkpointable function "
                            "inside a macro expansion is not supported; call it outside the macro");
    } else if (flags & F_LATE) {
        pp_error_at(w, cb,
                    "call through a pointer that may reach a checkpointable function in a macro "
                    "argument that the macro evaluates after other code of its expansion, "
                    "conditionally or repeatedly, is not supported; call it before the macro and "
                    "pass the result");
    } else if (!u || flags) {
        pp_error(PP_LOC(c),
                 "call through a pointer that may reach a checkpointable function inside %s is "
                 "not supported yet",
                 u ? pp_ctx_name(flags) : "this context");
    } else if (pp_arg_once(w, c, cb, ce, NULL, NULL)) {
        unsigned k = pp_site_new(w->fn, pp_begin(c));
        PP_PUSH(u->v, u->n, u->cap);
        u->v[u->n++] = (pp_site){.kind = S_ICALL, .cur = c, .callee = -1, .k = k};
        CXType rt = clang_getCursorType(c);
        int is_void = clang_getCanonicalType(rt).kind == CXType_Void;
        if (!is_void) {
            pp_fn *fn = w->fn;
            PP_PUSH(fn->slots, fn->nslots, fn->capslots);
            fn->slots[fn->nslots++] = (pp_slot){k, rt};
        }
        char *rd = pp_is_top(u, c) || is_void ? pp_strdup("(void)0") : pp_slot_read('r', k, rt);
        pp_edit_add(w->f, cb, ce, E_REPL, 0, 1, rd);
    }
}

static void pp_call(pp_walk *w, CXCursor c, int flags, pp_unit *u)
{
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) != CXCursor_FunctionDecl) {
        pp_expr_kids(w, c, flags, u);
        if (!(flags & F_UNEVAL))
            pp_icall(w, c, flags, u);
        return;
    }
    char *name = pp_cxstring(clang_getCursorSpelling(ref));
    int sj = pp_setjmp_kind(name, NULL);
    if (sj == PP_SJ_REFUSED)
        pp_error(PP_LOC(c),
                 "%s in checkpointable function '%s': its buffer holds machine addresses that "
                 "cannot be made mobile; use setjmp and longjmp",
                 name, w->fn->name);
    if (!strcmp(name, "pthread_create") || !strcmp(name, "thrd_create"))
        pp_error(PP_LOC(c),
                 "%s in checkpointable function '%s': a native thread cannot be captured", name,
                 w->fn->name);
    if (!strcmp(name, "signal") || !strcmp(name, "sigaction"))
        pp_error(PP_LOC(c),
                 "%s in checkpointable function '%s': signal handlers cannot be made mobile", name,
                 w->fn->name);
    char *usr = pp_fn_usr(ref);
    int g = pp_fn_find(usr);
    free(usr);
    const char *spk = pp_safepoint_kind(name);
    int is_ck = spk != NULL;
    int is_block = is_ck && !strcmp(spk, "LEV_SP_BLOCK");
    int is_ret = !strcmp(name, "lev_return");
    pp_expr_kids(w, c, flags, u);
    if (flags & F_UNEVAL) {
        free(name);
        return;
    }
    if (sj == PP_SJ_LONG)
        pp_longjmp_call(w, c);
    else if ((g < 0 || ctx.fns[g].file < 0) && !is_ck)
        pp_setjmp_args(w->fn, c, name);
    int is_sj = sj == PP_SJ_SET;
    if (is_ret) {
        if (!u || flags || !pp_is_top(u, c) || u->lev_return || u->nested)
            pp_error(PP_LOC(c),
                     "lev_return in checkpointable function '%s' must be a statement of its own",
                     w->fn->name);
        else
            u->lev_return = 1;
    }
    unsigned cb, ce;
    const char *what = is_block ? "blocking function"
                       : is_ck  ? "safe point"
                       : is_sj  ? "setjmp"
                                : "checkpointable function";
    if (is_ck || is_sj || (g >= 0 && ctx.fns[g].cp)) {
        if (!pp_span(w->f, c, &cb, &ce)) {
            pp_error(PP_LOC(c),
                     "call to %s '%s' inside a macro expansion is not supported; call it "
                     "outside the macro",
                     what, name);
        } else if (flags & F_LATE) {
            pp_error_at(w, cb,
                        "call to %s '%s' in a macro argument that the macro evaluates after "
                        "other code of its expansion, conditionally or repeatedly, is not "
                        "supported; call it before the macro and pass the result",
                        what, name);
        } else if (!u || flags) {
            pp_error(PP_LOC(c), "call to %s '%s' inside %s is not supported yet", what, name,
                     u ? pp_ctx_name(flags) : "this context");
        } else if (is_sj) {
            unsigned k = pp_site_new(w->fn, pp_begin(c));
            PP_PUSH(u->v, u->n, u->cap);
            u->v[u->n++] = (pp_site){.kind = S_SETJMP, .cur = c, .callee = -1, .k = k};
            int top = pp_is_top(u, c);
            u->v[u->n - 1].used = !top;
            if (!top) {
                pp_fn *fn = w->fn;
                PP_PUSH(fn->slots, fn->nslots, fn->capslots);
                fn->slots[fn->nslots++] = (pp_slot){k, clang_getCursorType(c)};
            }
            pp_edit_add(w->f, cb, ce, E_REPL, 0, 1, pp_fmt(top ? "(void)0" : "lev__r%u", k));
        } else if (!is_ck && (ctx.fns[g].is_task || ctx.fns[g].is_main)) {
            pp_error(PP_LOC(c), "direct call of the entry '%s' is not supported", name);
        } else if (!is_ck && clang_Cursor_getNumArguments(c) >= 0 &&
                   (unsigned)clang_Cursor_getNumArguments(c) != ctx.fns[g].nparams &&
                   clang_isFunctionTypeVariadic(clang_getCursorType(ctx.fns[g].def)) != 1) {
            /* only possible without a prototype: C leaves such a call undefined */
            pp_error(PP_LOC(c),
                     "call of '%s' with %d argument(s), but its definition has %u parameter(s): "
                     "the call is undefined in C",
                     name, clang_Cursor_getNumArguments(c), ctx.fns[g].nparams);
        } else if (!pp_arg_once(w, c, cb, ce, what, name)) {
            /* reported */
        } else if (is_block) {
            unsigned a0 = pp_block_args(w->fn, c, ref, name);
            if (a0) {
                unsigned k = pp_site_new(w->fn, pp_begin(c));
                PP_PUSH(u->v, u->n, u->cap);
                u->v[u->n++] =
                    (pp_site){.kind = S_BLOCK, .cur = c, .callee = -1, .k = k, .arg0 = a0};
                pp_fn *fn = w->fn;
                CXType rt = clang_getCursorType(c);
                PP_PUSH(fn->slots, fn->nslots, fn->capslots);
                fn->slots[fn->nslots++] = (pp_slot){k, rt};
                pp_edit_add(w->f, cb, ce, E_REPL, 0, 1,
                            pp_is_top(u, c) ? pp_strdup("(void)0") : pp_slot_read('r', k, rt));
            }
        } else {
            unsigned k = pp_site_new(w->fn, pp_begin(c));
            PP_PUSH(u->v, u->n, u->cap);
            u->v[u->n++] = (pp_site){
                .kind = is_ck ? S_POINT : S_CALL, .cur = c, .callee = g, .k = k, .spk = spk};
            int top = pp_is_top(u, c);
            const char *text = top ? "(void)0" : is_ck ? "0" : NULL;
            if (!is_ck && !ctx.fns[g].ret_void) {
                pp_fn *fn = w->fn;
                PP_PUSH(fn->slots, fn->nslots, fn->capslots);
                fn->slots[fn->nslots++] = (pp_slot){k, ctx.fns[g].ret};
            }
            if (!is_ck && ctx.fns[g].ret_void)
                text = "(void)0";
            /* A slot that holds a pointer is cleared as it is read: a stale
             * copy would dangle once its object is freed. */
            char *rd = text ? pp_strdup(text) : pp_slot_read('r', k, ctx.fns[g].ret);
            pp_edit_add(w->f, cb, ce, E_REPL, 0, 1, rd);
        }
    }
    free(name);
}

/* A temporary of type t in the frame (lev__tK): written by the code of a
 * unit, read where the lowered operator was (or by a blocking call). */
unsigned pp_tmp_new(pp_fn *fn, CXType t)
{
    PP_PUSH(fn->tmps, fn->ntmps, fn->captmps);
    fn->tmps[fn->ntmps] = (pp_slot){fn->ntmps + 1, t};
    return ++fn->ntmps;
}

/* How the expression reads temporary k: like a result slot, one that may
 * hold a pointer is cleared as it is read. */
static char *pp_tmp_read(unsigned k, CXType t) { return pp_slot_read('t', k, t); }

/* A lowered operator's item, its operands null. */
static pp_site pp_site_op(int kind, CXCursor c)
{
    pp_site s = {.kind = kind, .cur = c};
    for (int i = 0; i < 3; i++)
        s.op[i] = clang_getNullCursor();
    return s;
}

static pp_unit *pp_unit_sub(CXCursor top, int has_top)
{
    pp_unit *s = pp_xrealloc(NULL, sizeof *s);
    memset(s, 0, sizeof *s);
    s->top = top;
    s->has_top = has_top;
    s->nested = 1;
    return s;
}

/* Whether the value of lowered expression c is used (it is not what its
 * statement evaluates, nor void); then it needs a temporary of its type,
 * which must have a name (what: the operator, for the error). */
static int pp_value_used(pp_walk *w, CXCursor c, pp_unit *u, const char *what)
{
    CXType t = clang_getCursorType(c);
    if (pp_is_top(u, c) || clang_getCanonicalType(t).kind == CXType_Void)
        return 0;
    char *sp = pp_cxstring(clang_getTypeSpelling(t));
    if (what && pp_bad_spelling(sp))
        pp_error(PP_LOC(c),
                 "%s of an unnamed type whose operand calls a checkpointable function in "
                 "'%s' is not supported yet; name the type",
                 what, w->fn->name);
    free(sp);
    return 1;
}

/* Ends the lowering of s (expression s->cur): its temporary if its value
 * is used, read where the expression was, and s appended to u. */
static void pp_site_done(pp_walk *w, pp_site *s, pp_unit *u)
{
    CXType t = clang_getCursorType(s->cur);
    unsigned b, e;
    pp_text_of(w->f, s->cur, &b, &e);
    if (s->used)
        s->k = pp_tmp_new(w->fn, t);
    pp_edit_add(w->f, b, e, E_REPL, 0, 1, s->used ? pp_tmp_read(s->k, t) : pp_strdup("(void)0"));
    PP_PUSH(u->v, u->n, u->cap);
    u->v[u->n++] = *s;
}

/* Whether an operator whose later operands hold sites can be lowered: it
 * is written in the input or in a macro argument evaluated once; written
 * in a macro's body, it cannot (an error). */
static int pp_lowerable(pp_walk *w, CXCursor c)
{
    unsigned b, e;
    if (pp_span(w->f, c, &b, &e))
        return pp_arg_once(w, c, b, e, NULL, NULL);
    pp_error(PP_LOC(c),
             "operator from a macro expansion whose operand calls a checkpointable function in "
             "'%s' is not supported; write the operator outside the macro",
             w->fn->name);
    return 0;
}

/* L && R, L || R whose R holds a site: L's sites, then L, then R's sites
 * only if L does not decide. */
static void pp_lower_logic(pp_walk *w, CXCursor c, int kind, CXCursor l, CXCursor r, int flags,
                           pp_unit *u)
{
    pp_expr(w, l, flags, u);
    pp_site s = pp_site_op(kind, c);
    s.op[0] = l;
    s.op[1] = r;
    s.used = pp_value_used(w, c, u, NULL);
    s.sub[0] = pp_unit_sub(r, !s.used);
    pp_expr(w, r, flags, s.sub[0]);
    pp_site_done(w, &s, u);
}

/* C ? A : B whose A or B holds a site: C's sites, then C, then the sites
 * of the chosen operand only. */
static void pp_lower_cond(pp_walk *w, CXCursor c, CXCursor *ops, int flags, pp_unit *u)
{
    pp_expr(w, ops[0], flags, u);
    pp_site s = pp_site_op(S_COND, c);
    memcpy(s.op, ops, sizeof s.op);
    s.used = pp_value_used(w, c, u, "?:");
    for (int i = 0; i < 2; i++) {
        s.sub[i] = pp_unit_sub(ops[i + 1], !s.used);
        pp_expr(w, ops[i + 1], flags, s.sub[i]);
    }
    pp_site_done(w, &s, u);
}

/* A ?: B (GNU) whose B holds a site: A's sites, then A once, then B's
 * sites only if A is zero. */
static void pp_lower_elvis(pp_walk *w, CXCursor c, CXCursor a, CXCursor b, int flags, pp_unit *u)
{
    pp_expr(w, a, flags, u);
    pp_site s = pp_site_op(S_ELVIS, c);
    s.op[0] = a;
    s.op[1] = b;
    s.used = pp_value_used(w, c, u, "?:");
    s.sub[0] = pp_unit_sub(b, !s.used);
    pp_expr(w, b, flags, s.sub[0]);
    pp_site_done(w, &s, u);
}

/* L, R whose R holds a site: L's sites and L as a statement, then R's
 * sites; the expression keeps R only. */
static void pp_lower_comma(pp_walk *w, CXCursor c, CXCursor l, CXCursor r, int flags, pp_unit *u)
{
    pp_file *f = w->f;
    unsigned lb, le;
    pp_text_of(f, l, &lb, &le);
    unsigned i = pp_tok_from(f, le);
    if (!pp_tok_is(f, i, ",")) {
        pp_error(PP_LOC(c), "cannot find the comma of this expression");
        return;
    }
    pp_expr(w, l, flags, u);
    pp_site s = pp_site_op(S_COMMA, c);
    s.op[0] = l;
    PP_PUSH(u->v, u->n, u->cap);
    u->v[u->n++] = s;
    pp_edit_add(f, lb, f->toks[i].e, E_REPL, 0, 1, pp_strdup(""));
    if (pp_is_top(u, c))
        u->top = r; /* R is what the statement evaluates now */
    pp_expr(w, r, flags, u);
}

static enum CXChildVisitResult pp_effect_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_UnaryExpr)
        return CXChildVisit_Continue; /* sizeof: not evaluated */
    if (k == CXCursor_CallExpr || k == CXCursor_StmtExpr || pp_writes_operand(c) ||
        clang_isVolatileQualifiedType(clang_getCursorType(c))) {
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether evaluating expression c has no side effect: no call, no
 * assignment, no ++ or --, no volatile access (sizeof operands aside). */
static int pp_no_effect(CXCursor c) { return !pp_visit_finds(c, pp_effect_cb); }

/* The first full expression that macro-expanded statement c evaluates, and
 * evaluates once, before anything else of it: the condition of an if or a
 * switch, the initialiser of the first declarator, an expression
 * statement; the first statement of a block or of a `do ... while (0)`.
 * Null when there is none (a loop, say). */
CXCursor pp_macro_first(CXCursor c)
{
    for (int guard = 0; guard < 64; guard++) {
        enum CXCursorKind k = pp_kind(c);
        if (clang_isExpression(k))
            return c;
        pp_kids kk = pp_children(c);
        CXCursor next = clang_getNullCursor();
        if (k == CXCursor_CompoundStmt || k == CXCursor_IfStmt || k == CXCursor_SwitchStmt) {
            if (kk.n)
                next = kk.v[0];
        } else if (k == CXCursor_DoStmt && kk.n == 2) {
            CXEvalResult ev = clang_Cursor_Evaluate(kk.v[1]);
            if (ev && clang_EvalResult_getKind(ev) == CXEval_Int &&
                clang_EvalResult_getAsLongLong(ev) == 0)
                next = kk.v[0];
            if (ev)
                clang_EvalResult_dispose(ev);
        } else if (k == CXCursor_DeclStmt && kk.n && pp_kind(kk.v[0]) == CXCursor_VarDecl) {
            next = clang_Cursor_getVarDeclInitializer(kk.v[0]);
        }
        free(kk.v);
        if (clang_Cursor_isNull(next))
            return next;
        c = next;
    }
    return clang_getNullCursor();
}

/* Walks statement or expression c written by a macro (levpp cannot
 * rewrite inside it): the sites of `first` (pp_macro_first), written in
 * macro arguments, join unit u and run before the statement u belongs to,
 * which is exact since nothing of the expansion runs before them; a site
 * anywhere else is an error (F_LATE). Statements of c written in the input
 * (the body of a loop or an if whose head a macro writes) are rewritten as
 * usual. */
void pp_macro_walk(pp_walk *w, CXCursor c, CXCursor first, pp_unit *u, int depth)
{
    enum CXCursorKind k = pp_kind(c);
    if (!clang_Cursor_isNull(first) && clang_equalCursors(c, first)) {
        pp_expr(w, c, 0, u);
        return;
    }
    if ((clang_isStatement(k) || clang_isExpression(k)) && !pp_in_macro(c)) {
        pp_stmt(w, c, depth + 1); /* a statement written in the input */
        return;
    }
    if (clang_isExpression(k)) {
        pp_expr(w, c, F_LATE, u);
        return;
    }
    if (k == CXCursor_ReturnStmt) {
        /* the body returns through its own convention, which a macro's
         * text cannot be rewritten to */
        pp_error(PP_LOC(c),
                 "return from a macro in checkpointable function '%s' is not supported; "
                 "return outside the macro",
                 w->fn->name);
        return;
    }
    pp_kids kk = pp_children(c);
    CXCursor init =
        k == CXCursor_VarDecl ? clang_Cursor_getVarDeclInitializer(c) : clang_getNullCursor();
    for (unsigned i = 0; i < kk.n; i++) {
        if (k == CXCursor_VarDecl && !clang_equalCursors(kk.v[i], init))
            pp_expr(w, kk.v[i], F_UNEVAL, u); /* __typeof__ operand */
        else
            pp_macro_walk(w, kk.v[i], first, u, depth + 1);
    }
    free(kk.v);
}

/* A statement expression with sites, written in the input: its statements
 * are rewritten as statements (declarations, loops and safe points
 * included) and run, as one block, where the expression is evaluated in
 * unit u; its value, the last expression statement, goes to a temporary. */
static void pp_stmtexpr(pp_walk *w, CXCursor c, pp_unit *u)
{
    pp_kids k = pp_children(c);
    CXCursor body = k.n == 1 ? k.v[0] : clang_getNullCursor();
    free(k.v);
    if (pp_kind(body) != CXCursor_CompoundStmt) {
        pp_error(PP_LOC(c), "cannot find the block of this statement expression");
        return;
    }
    pp_kids st = pp_children(body);
    pp_site s = pp_site_op(S_STMTEXPR, c);
    s.op[0] = body;
    int has_val = st.n && clang_isExpression(pp_kind(st.v[st.n - 1]));
    s.used = pp_value_used(w, c, u, "a statement expression");
    for (unsigned i = 0; i + (has_val ? 1 : 0) < st.n; i++)
        pp_stmt(w, st.v[i], w->depth + 2);
    if (has_val) {
        s.op[1] = st.v[st.n - 1];
        s.sub[0] = pp_unit_sub(s.op[1], !s.used);
        pp_expr(w, s.op[1], 0, s.sub[0]);
    }
    free(st.v);
    pp_site_done(w, &s, u);
}

/* A binary operator of an expression (pp_expr): &&, || and the comma
 * operator are lowered when a later operand holds a site. */
static void pp_expr_binary(pp_walk *w, CXCursor c, int flags, pp_unit *u, int lower)
{
    enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(c);
    pp_kids k = pp_children(c);
    int seq =
        op == CXBinaryOperator_LAnd || op == CXBinaryOperator_LOr || op == CXBinaryOperator_Comma;
    int comma = op == CXBinaryOperator_Comma;
    if (k.n == 2 && seq && lower && comma && pp_has_site(k.v[1]) && pp_no_effect(k.v[0])) {
        /* nothing of L to keep before R's sites (glibc's assert) */
        pp_expr(w, k.v[0], flags, u);
        pp_expr(w, k.v[1], flags, u);
    } else if (k.n == 2 && seq && lower &&
               (pp_has_site(k.v[1]) || (comma && pp_has_site(k.v[0])))) {
        if (!pp_lowerable(w, c))
            ;
        else if (comma)
            pp_lower_comma(w, c, k.v[0], k.v[1], flags, u);
        else
            pp_lower_logic(w, c, op == CXBinaryOperator_LAnd ? S_AND : S_OR, k.v[0], k.v[1], flags,
                           u);
    } else if (k.n == 2) {
        pp_expr(w, k.v[0], flags, u);
        pp_expr(w, k.v[1], flags | (seq && !comma ? F_COND : 0), u);
    } else {
        for (unsigned i = 0; i < k.n; i++)
            pp_expr(w, k.v[i], flags, u);
    }
    free(k.v);
}

/* A conditional operator of an expression (pp_expr). */
static void pp_expr_cond(pp_walk *w, CXCursor c, int flags, pp_unit *u, int lower)
{
    pp_kids k = pp_children(c);
    if (k.n == 3 && lower && (pp_has_site(k.v[1]) || pp_has_site(k.v[2]))) {
        if (pp_lowerable(w, c))
            pp_lower_cond(w, c, k.v, flags, u);
        free(k.v);
        return;
    }
    for (unsigned i = 0; i < k.n; i++)
        pp_expr(w, k.v[i], i ? flags | F_COND : flags, u);
    free(k.v);
}

/* An unexposed expression of an expression (pp_expr): GNU `a ?: b` has
 * children a, two opaque copies of a, b; b runs only if a is zero. */
static void pp_expr_unexposed(pp_walk *w, CXCursor c, int flags, pp_unit *u, int lower)
{
    /* GNU `a ?: b`: children a, two opaque copies of a, b; b runs
     * only if a is zero */
    pp_kids k = pp_children(c);
    if (pp_is_elvis(&k)) {
        CXCursor a = k.v[0], b = k.v[k.n - 1];
        if (lower && pp_has_site(b)) {
            if (pp_lowerable(w, c))
                pp_lower_elvis(w, c, a, b, flags, u);
        } else {
            pp_expr(w, a, flags, u);
            pp_expr(w, b, flags | F_COND, u);
        }
        free(k.v);
        return;
    }
    free(k.v);
    pp_expr_kids(w, c, flags, u);
}

/* A statement expression of an expression (pp_expr). */
static void pp_expr_stmtexpr(pp_walk *w, CXCursor c, int flags, pp_unit *u, int lower)
{
    if (lower && pp_has_site(c)) {
        unsigned b, e;
        if (!pp_in_macro(c)) {
            pp_stmtexpr(w, c, u);
        } else if (pp_span(w->f, c, &b, &e)) {
            pp_error_at(w, b,
                        "a statement expression in a macro argument that calls a "
                        "checkpointable function is not supported; write it outside the "
                        "macro");
        } else {
            pp_kids k = pp_children(c);
            for (unsigned i = 0; i < k.n; i++)
                pp_macro_walk(w, k.v[i], pp_macro_first(k.v[i]), u, w->depth + 1);
            free(k.v);
        }
        return;
    }
    pp_expr_kids(w, c, flags | F_STMTEXPR, u);
}

/* Inline assembly, as a statement or inside a statement expression. It
 * runs whole between two safe points, so what it does to registers is
 * gone by the next one, and its operands are C lvalues and values that
 * levpp renames like any other (a local moved into the frame is still an
 * lvalue): it is taken. Refused, with their reason: `asm goto`, whose
 * jumps to C labels would leave the frame's program counter behind, and
 * Microsoft-style blocks, whose operands are not C expressions. Returns
 * whether it was refused. */
int pp_asm_refused(pp_walk *w, CXCursor c)
{
    if (pp_kind(c) == CXCursor_MSAsmStmt) {
        pp_error(PP_LOC(c),
                 "Microsoft-style inline assembly in checkpointable function '%s' cannot be "
                 "made mobile (its operands are not C expressions)",
                 w->fn->name);
        return 1;
    }
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(w->f->tu, clang_getCursorExtent(c), &toks, &n);
    int is_goto = 0;
    for (unsigned i = 1; i < n && i < 6 && !is_goto; i++) { /* asm [volatile|inline] goto ( */
        CXString s = clang_getTokenSpelling(w->f->tu, toks[i]);
        const char *t = clang_getCString(s);
        is_goto = t && !strcmp(t, "goto");
        int stop = t && !strcmp(t, "(");
        clang_disposeString(s);
        if (stop)
            break;
    }
    clang_disposeTokens(w->f->tu, toks, n);
    if (is_goto)
        pp_error(PP_LOC(c),
                 "asm goto in checkpointable function '%s' cannot be made mobile (its jumps to "
                 "C labels would leave the frame's program counter behind)",
                 w->fn->name);
    return is_goto;
}

void pp_expr(pp_walk *w, CXCursor c, int flags, pp_unit *u)
{
    int lower = u && !(flags & (F_COND | F_UNEVAL | F_STMTEXPR | F_LATE));
    switch (pp_kind(c)) {
    case CXCursor_CallExpr:
        pp_call(w, c, flags, u);
        return;
    case CXCursor_DeclRefExpr:
        pp_declref(w, c);
        return;
    case CXCursor_GenericSelectionExpr:
        /* only the selected association is evaluated, and libclang does
         * not say which one it is */
        if (!(flags & F_UNEVAL) && pp_has_site(c)) {
            pp_error(PP_LOC(c),
                     "_Generic whose associations call checkpointable functions in '%s' is not "
                     "supported; select a function pointer or value with _Generic and call it "
                     "outside",
                     w->fn->name);
            return;
        }
        pp_expr_kids(w, c, flags | F_UNEVAL, u);
        return;
    case CXCursor_BinaryOperator:
        pp_expr_binary(w, c, flags, u, lower);
        return;
    case CXCursor_ConditionalOperator:
        pp_expr_cond(w, c, flags, u, lower);
        return;
    case CXCursor_UnaryExpr:
        pp_expr_kids(w, c, flags | F_UNEVAL, u);
        return;
    case CXCursor_UnexposedExpr:
        pp_expr_unexposed(w, c, flags, u, lower);
        return;
    case CXCursor_StmtExpr:
        pp_expr_stmtexpr(w, c, flags, u, lower);
        return;
    case CXCursor_VarDecl: {
        /* in a statement expression: an operand of __typeof__ in the
         * declared type is a child too, and is not evaluated */
        CXCursor init = clang_Cursor_getVarDeclInitializer(c);
        pp_kids k = pp_children(c);
        for (unsigned i = 0; i < k.n; i++)
            pp_expr(w, k.v[i], clang_equalCursors(k.v[i], init) ? flags : flags | F_UNEVAL, u);
        free(k.v);
        return;
    }
    case CXCursor_AddrLabelExpr:
        if (w->fn->label_table)
            return; /* an offset in lev__lbl_NAME (pp_libc.c) */
        pp_error(PP_LOC(c),
                 "computed goto (label address) in checkpointable function '%s' "
                 "cannot be made mobile",
                 w->fn->name);
        return;
    case CXCursor_GCCAsmStmt:
    case CXCursor_MSAsmStmt:
        if (!pp_asm_refused(w, c))
            pp_expr_kids(w, c, flags, u);
        return;
    default:
        pp_expr_kids(w, c, flags, u);
        return;
    }
}

/* The code of a lowered operator (see S_AND). */
static void pp_lowered(pp_walk *w, pp_site *s, pp_buf *b)
{
    char *t = s->used ? pp_slot_ref('t', s->k, w->fn->tmps[s->k - 1].type) : NULL;
    char *x[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++)
        if (!clang_Cursor_isNull(s->op[i]))
            x[i] = pp_render_str(w->f, s->op[i], 1);
    switch (s->kind) {
    case S_AND:
    case S_OR: {
        const char *neg = s->kind == S_OR ? "!" : "";
        if (t)
            pp_printf(b, "\n%s = !!(%s);\nif (%s%s) {", t, x[0], neg, t);
        else
            pp_printf(b, "\nif (%s(%s)) {", neg, x[0]);
        pp_seqs(w, s->sub[0], b);
        if (t)
            pp_printf(b, "\n%s = !!(%s);\n}", t, x[1]);
        else
            pp_printf(b, "\n(void)(%s);\n}", x[1]);
        break;
    }
    case S_COND:
        pp_printf(b, "\nif (%s) {", x[0]);
        for (int i = 0; i < 2; i++) {
            if (i)
                pp_puts(b, "\n} else {");
            pp_seqs(w, s->sub[i], b);
            if (t)
                pp_put_copy(b, t, x[i + 1], w->fn->tmps[s->k - 1].type);
            else
                pp_printf(b, "\n(void)(%s);", x[i + 1]);
        }
        pp_puts(b, "\n}");
        break;
    default: /* S_COMMA */
        pp_printf(b, "\n(void)(%s);", x[0]);
        break;
    }
    for (int i = 0; i < 3; i++)
        free(x[i]);
    free(t);
}

/* The code of a lowered GNU extension: `a ?: b` and a statement
 * expression (see S_ELVIS). */
static void pp_lowered_gnu(pp_walk *w, pp_site *s, pp_buf *b)
{
    char *t = s->used ? pp_slot_ref('t', s->k, w->fn->tmps[s->k - 1].type) : NULL;
    if (s->kind == S_ELVIS) {
        char *a = pp_render_str(w->f, s->op[0], 1), *x = pp_render_str(w->f, s->op[1], 1);
        if (t)
            pp_printf(b, "\n%s = (%s);\nif (!%s) {", t, a, t);
        else
            pp_printf(b, "\nif (!(%s)) {", a);
        pp_seqs(w, s->sub[0], b);
        pp_printf(b, t ? "\n%s = (%s);\n}" : "\n%s(void)(%s);\n}", t ? t : "", x);
        free(a);
        free(x);
    } else { /* S_STMTEXPR: the block's statements, then its value */
        unsigned from = pp_begin(s->op[0]) + 1;
        unsigned to = clang_Cursor_isNull(s->op[1]) ? pp_end(s->op[0]) - 1 : pp_begin(s->op[1]);
        pp_puts(b, "\n{");
        pp_render(b, w->f, from, to, 1, 0);
        if (!clang_Cursor_isNull(s->op[1])) {
            char *x = pp_render_str(w->f, s->op[1], 1);
            pp_puts(b, "\n{");
            pp_seqs(w, s->sub[0], b);
            if (t)
                pp_put_copy(b, t, x, w->fn->tmps[s->k - 1].type);
            else
                pp_printf(b, "\n(void)(%s);", x);
            pp_puts(b, "\n}");
            free(x);
        }
        pp_puts(b, "\n}");
    }
    free(t);
}

/* Records that input f calls checkpointable function g of another input,
 * whose body is only known in its own output (declarations: pp_emit). */
static void pp_note_xcallee(pp_file *f, int g)
{
    for (unsigned x = 0; x < f->nx; x++)
        if (f->xcallees[x] == g)
            return;
    PP_PUSH(f->xcallees, f->nx, f->capx);
    f->xcallees[f->nx++] = g;
}

/* The arguments of call c as written (edits applied), each in
 * parentheses after a comma. */
static void pp_args_text(pp_walk *w, CXCursor c, pp_buf *b)
{
    int nargs = clang_Cursor_getNumArguments(c);
    for (int a = 0; a < nargs; a++) {
        char *txt = pp_render_str(w->f, clang_Cursor_getArgument(c, (unsigned)a), 1);
        pp_printf(b, ", (%s)", txt);
        free(txt);
    }
}

/* A reserving function's fresh body pushes its own frame (lev__rf)
 * before the first call whose callee may push one (`cond`, constant in
 * each body: lev__reserve and the callees' NAME__rsv, pp_body.c), so that
 * the callee's frame lies above it, and keeps it until it returns
 * (pp_reserve_release): a loop calling such a callee pushes it once, not
 * once per call, and the frames of the callees then start at the same
 * place each time (a chunk boundary of the arena crossed at every call
 * costs a runtime call each way). An unwind of a callee, or of the body
 * itself at a later site, fills it (NAME__spill). `part` 0: the push; 1:
 * the pop before returning LEV_RUN_EXIT (after the call returned, the
 * frame stays). A call through a pointer that turns out to be native
 * code reserves it too, for nothing. */
static void pp_reserve(pp_buf *b, pp_fn *fn, const char *cond, int part)
{
    if (part == 0) {
        char *ex = pp_return(fn, "LEV_RUN_EXIT", NULL);
        pp_printf(
            b,
            "    if (%s && !lev__rf && !(lev__rf = lev_frame_push_aligned(vt, sizeof *lev__rf, "
            "__alignof__(struct %s__frame), %s))) {\n"
            "        lev_vt_fail(vt, LEV_ENOMEM, \"%s: no frame\");\n        %s\n    }\n",
            cond, fn->cname, fn->idname, fn->name, ex);
        free(ex);
    } else if (part == 1) {
        pp_reserve_release(b, fn);
    }
}

/* Before a return of a body: pops the frame a reserving function's
 * fresh body reserved, if it did (folds away in every other body, where
 * lev__reserve is 0; written while the bodies are walked, before it is
 * known which functions reserve). */
void pp_reserve_release(pp_buf *b, pp_fn *fn)
{
    if (!fn->is_task && !fn->is_main)
        pp_puts(b,
                "        if (lev__reserve && lev__rf)\n            lev_frame_pop(vt, lev__rf);\n");
}

/* The code of an indirect call site (S_ICALL): the pointer is evaluated
 * once; a fresh call compares it with each candidate and runs the one it
 * is through its __run, or calls it natively if it is none of them; a
 * resumed call runs the __resume of the function whose frame the runtime
 * restored. */
static void pp_icall_text(pp_walk *w, pp_site *s, pp_buf *b)
{
    pp_fn *fn = w->fn;
    pp_kids kk = pp_children(s->cur);
    char *callee = pp_render_str(w->f, kk.v[0], 1);
    free(kk.v);
    char *key = pp_icall_key(s->cur);
    CXType rt = clang_getCursorType(s->cur);
    int is_void = clang_getCanonicalType(rt).kind == CXType_Void;
    char *ex = pp_return(fn, "LEV_RUN_EXIT", NULL), *rc = pp_return(fn, "lev__rc", NULL);
    pp_puts(b, "\n{\n    void *lev__cf = NULL;\n    int lev__rc;\n");
    if (!is_void) {
        char *d = pp_decl(clang_getUnqualifiedType(rt), "lev__v");
        pp_printf(b, "    %s;\n    __builtin_memset(&lev__v, 0, sizeof lev__v);\n", d);
        free(d);
    }
    pp_printf(b,
              "    __typeof__(&*(%s)) lev__fp = &*(%s);\n"
              "    if (0) {\n    lev__resume_%u: __attribute__((__unused__));\n"
              "        lev__cf = lev_frame_callee(vt, fr, sizeof *fr);\n"
              "        lev__fp = 0;\n"
              "        if (!lev__cf) {\n"
              "            lev_vt_fail(vt, LEV_EFAILED, \"%s: no frame to resume\");\n"
              "            %s\n        }\n    }\n"
              "    if (LEV_UNLIKELY(lev__cf != NULL)) {\n"
              "        switch (((lev_frame *)lev__cf)->fn) {\n",
              callee, callee, s->k, fn->name, ex);
    /* R may have a const member: copied, never assigned */
    int asg = is_void || pp_assignable(rt);
    const char *v = is_void ? ""
                    : asg   ? " lev__v = lev__x.v;"
                            : " __builtin_memcpy(&lev__v, &lev__x.v, sizeof lev__v);";
    int *cand = pp_xrealloc(NULL, (ctx.nfns + 1) * sizeof *cand);
    unsigned nc = 0;
    for (unsigned j = 0; j < ctx.nfns; j++)
        if (ctx.fns[j].cp && pp_icall_candidate(&ctx.fns[j], key)) {
            cand[nc++] = (int)j;
            if (ctx.fns[j].file != fn->file)
                pp_note_xcallee(w->f, (int)j);
        }
    pp_buf rsv = {0};
    pp_puts(&rsv, "lev__reserve && (0");
    for (unsigned c = 0; c < nc; c++)
        pp_printf(&rsv, " || %s__rsv", ctx.fns[cand[c]].cname);
    pp_puts(&rsv, ")");
    for (unsigned c = 0; c < nc; c++) {
        pp_fn *g = &ctx.fns[cand[c]];
        int cross = g->file != fn->file;
        pp_printf(b,
                  "        case %s: {\n            struct %s__ret lev__x = %s__%sresume(vt, "
                  "lev__cf);\n            lev__rc = lev__x.rc;%s\n            break;\n        }\n",
                  g->idname, g->cname, g->cname, cross ? "x" : "", v);
    }
    pp_printf(b,
              "        default:\n            lev_vt_fail(vt, LEV_EFAILED, \"%s: no function to "
              "resume through a pointer\");\n            %s\n        }\n    }\n",
              fn->name, ex);
    /* fresh (lev__cf is NULL where lev__reserve is 1) */
    pp_reserve(b, fn, rsv.p, 0);
    pp_puts(b, "    if (LEV_UNLIKELY(lev__cf != NULL)) {\n    }");
    for (unsigned c = 0; c < nc; c++) {
        pp_fn *g = &ctx.fns[cand[c]];
        int cross = g->file != fn->file;
        if (cross)
            pp_printf(b, " else if ((void (*)(void))lev__fp == %s__xaddr) {\n", g->cname);
        else
            pp_printf(b, " else if (lev__fp == %s) {\n", g->name);
        pp_printf(b, "        struct %s__ret lev__x = %s__%srun(vt", g->cname, g->cname,
                  cross ? "x" : "");
        pp_args_text(w, s->cur, b);
        pp_printf(b, ");\n        lev__rc = lev__x.rc;%s\n    }", v);
    }
    pp_printf(b, " else {\n        %slev__fp(",
              is_void ? ""
              : asg   ? "lev__v = "
                      : "__typeof__(lev__v) lev__cv = ");
    pp_buf args = {0};
    pp_args_text(w, s->cur, &args);
    if (args.p)
        pp_puts(b, args.p + 2); /* without the first ", " */
    free(args.p);
    pp_printf(b, ");\n%s        lev__rc = LEV_RUN_DONE;\n    }\n",
              asg ? "" : "        __builtin_memcpy(&lev__v, &lev__cv, sizeof lev__v);\n");
    pp_printf(b,
              "    if (LEV_UNLIKELY(lev__rc != LEV_RUN_DONE)) {\n"
              "        if (lev__rc == LEV_RUN_UNWIND)\n            goto lev__unwind_%u;\n"
              "        if (lev__cf)\n            lev_frame_pop(vt, lev__cf);\n",
              s->k);
    pp_reserve(b, fn, rsv.p, 1);
    pp_printf(b,
              "        %s\n    }\n"
              "    if (LEV_UNLIKELY(lev__cf != NULL))\n        lev_frame_pop(vt, lev__cf);\n",
              rc);
    free(rsv.p);
    if (!is_void) {
        char *r = pp_slot_ref('r', s->k, rt);
        pp_put_copy(b, r, "lev__v", rt);
        free(r);
    }
    pp_puts(b, "}");
    free(cand);
    free(ex);
    free(rc);
    free(key);
    free(callee);
}

/* The code of the safe points and calls of a unit, in order. */
void pp_seqs(pp_walk *w, pp_unit *u, pp_buf *b)
{
    pp_fn *fn = w->fn;
    for (unsigned i = 0; i < u->n; i++) {
        pp_site *s = &u->v[i];
        if (s->kind >= S_ELVIS) {
            pp_lowered_gnu(w, s, b);
            continue;
        }
        if (s->kind >= S_AND) {
            pp_lowered(w, s, b);
            continue;
        }
        if (s->kind == S_POINT) {
            /* a checkpoint asks the runtime only when the poll is set; a
             * yield always does */
            int always = strcmp(s->spk, "LEV_SP_CHECKPOINT") != 0;
            pp_printf(b,
                      "\nif (%slev_safepoint(vt, %s))\n"
                      "    goto lev__unwind_%u;\nlev__resume_%u: __attribute__((__unused__));",
                      always ? "" : "lev_poll(vt) && ", s->spk, s->k, s->k);
            continue;
        }
        if (s->kind == S_ICALL) {
            pp_icall_text(w, s, b);
            continue;
        }
        if (s->kind == S_SETJMP) {
            pp_setjmp_text(w, s->cur, s->k, !s->used, b);
            continue;
        }
        if (s->kind == S_BLOCK) {
            pp_block_text(w, s, b);
            continue;
        }
        pp_fn *g = &ctx.fns[s->callee];
        int nargs = clang_Cursor_getNumArguments(s->cur);
        int cross = g->file != fn->file && !pp_copied(g, fn->file);
        if (cross)
            pp_note_xcallee(w->f, s->callee);
        /* A fresh call runs the callee's __run with the arguments (it gets
         * a frame if it needs one); a resumed call runs its __resume on
         * the frame the runtime restored, and pops it. */
        char *ex = pp_return(fn, "LEV_RUN_EXIT", NULL);
        pp_printf(b,
                  "\n{\n    void *lev__cf = NULL;\n"
                  "    if (0) {\n    lev__resume_%u: __attribute__((__unused__));\n"
                  "        lev__cf = lev_frame_callee(vt, fr, sizeof *fr);\n"
                  "        if (!lev__cf) {\n"
                  "            lev_vt_fail(vt, LEV_EFAILED, \"%s: no frame to resume\");\n"
                  "            %s\n        }\n    }\n",
                  s->k, fn->name, ex);
        free(ex);
        const char *x = cross ? "x" : "";
        char *rsv = pp_fmt("lev__reserve && %s__rsv", g->cname);
        pp_reserve(b, fn, rsv, 0); /* fresh: lev__cf is NULL where lev__reserve is 1 */
        pp_printf(b,
                  "    struct %s__ret lev__x = LEV_UNLIKELY(lev__cf != NULL)\n"
                  "        ? %s__%sresume(vt, lev__cf)\n        : %s__%srun(vt",
                  g->cname, g->cname, x, g->cname, x);
        for (int a = 0; a < nargs; a++) {
            char *txt = pp_render_str(w->f, clang_Cursor_getArgument(s->cur, (unsigned)a), 1);
            pp_printf(b, ", (%s)", txt);
            free(txt);
        }
        char *rt = pp_return(fn, "lev__x.rc", NULL);
        pp_printf(b,
                  ");\n    if (LEV_UNLIKELY(lev__x.rc != LEV_RUN_DONE)) {\n"
                  "        if (lev__x.rc == LEV_RUN_UNWIND)\n            goto lev__unwind_%u;\n"
                  "        if (lev__cf)\n            lev_frame_pop(vt, lev__cf);\n",
                  s->k);
        pp_reserve(b, fn, rsv, 1);
        pp_printf(b,
                  "        %s\n    }\n"
                  "    if (LEV_UNLIKELY(lev__cf != NULL))\n        lev_frame_pop(vt, lev__cf);\n",
                  rt);
        free(rsv);
        free(rt);
        if (!g->ret_void) {
            char *r = pp_slot_ref('r', s->k, g->ret);
            pp_put_copy(b, r, "lev__x.v", g->ret);
            free(r);
        }
        pp_puts(b, "}");
    }
}

void pp_unit_free(pp_unit *u)
{
    for (unsigned i = 0; i < u->n; i++)
        for (int j = 0; j < 2; j++)
            if (u->v[i].sub[j]) {
                pp_unit_free(u->v[i].sub[j]);
                free(u->v[i].sub[j]);
            }
    free(u->v);
}

/* Wraps statement range [b, e) in { seqs ... } if the unit has sites. */
void pp_unit_wrap(pp_walk *w, pp_unit *u, unsigned b, unsigned e, int depth)
{
    if (!u->n && !u->lev_return)
        return;
    pp_buf pre = {0};
    pp_puts(&pre, "{");
    pp_seqs(w, u, &pre);
    pp_puts(&pre, "\n");
    pp_edit_add(w->f, b, b, E_PRE, depth, 1, pre.p);
    char *ex = pp_return(w->fn, "LEV_RUN_EXIT", NULL);
    pp_edit_add(w->f, e, e, E_POST, depth, 1,
                u->lev_return ? pp_fmt(" %s\n}", ex) : pp_strdup("\n}"));
    free(ex);
}
