/* pp_stmt.c - statement lowering: declarations, variable-length arrays,
 * polls, loop bodies and the statement walker of a checkpointable body.
 */
#include <stdlib.h>

#include "levpp.h"

/* The budgeted strips (pp_strip_mine) around the statement being walked:
 * their number and the text of their induction variables. A resume label
 * inside one jumps past the initialisation of its limit lev__lK, which
 * the resume path then sets to the variable's value, so that the strip
 * ends after the iteration under way. */

/* A poll, numbered as a site at offset `at`. */
void pp_poll_text(pp_walk *w, pp_buf *b, unsigned at)
{
    unsigned k = pp_site_new(w->fn, at);
    pp_printf(b,
              "\nif (lev_poll(vt) && lev_safepoint(vt, LEV_SP_POLL))\n    goto lev__unwind_%u;\n"
              "lev__resume_%u: __attribute__((__unused__));\n",
              k, k);
    for (unsigned i = 0; i < ctx.nstrips && i < PP_MAX_STRIPS; i++)
        pp_printf(b, "lev__l%u = %s;\n", ctx.strips[i].k, ctx.strips[i].v);
}

/* The expression that declares variable-length array (or pointer to
 * one) vi: its variable dimensions evaluated once, in order, into their
 * frame fields, then the array allocated zeroed on the VT heap with its
 * element's type descriptor (the VT fails with LEV_ENOMEM if it cannot
 * be). The old array of a previous pass becomes garbage. */
static char *pp_vla_decl(pp_walk *w, int vi)
{
    pp_var *v = &w->fn->vars[vi];
    pp_buf b = {0}, count = {0};
    pp_puts(&count, "1ULL");
    for (unsigned d = 0; d < v->vla.ndims; d++) {
        if (v->vla.cdim[d] >= 0) {
            pp_printf(&count, " * %lldULL", v->vla.cdim[d]);
            continue;
        }
        char *st = pp_render_str(w->f, v->vla.size[d], 1);
        pp_printf(&b, "%sfr->lev__d%u_%s = (%s)", b.n ? ", " : "", d, v->field, st);
        pp_printf(&count, " * fr->lev__d%u_%s", d, v->field);
        free(st);
    }
    const char *id = NULL;
    char *size = NULL;
    long long mult = 1;
    int owner = ctx.cur_file;
    ctx.cur_file = w->fn->file; /* a record type is described where it is known */
    int bad = v->vla.kind == PP_VLA_ARRAY && pp_elem(v->vla.elem, v->decl, &id, &size, &mult);
    ctx.cur_file = owner;
    free(size);
    if (v->vla.kind == PP_VLA_ARRAY && !bad) {
        char *name = pp_cxstring(clang_getCursorSpelling(v->decl));
        char *ex = pp_return(w->fn, "LEV_RUN_EXIT", NULL);
        pp_printf(&b,
                  "%sfr->%s = ({ unsigned long long lev__n = %s * %lldULL; "
                  "void *lev__p = lev_alloc(lev__module(), %s, lev__n ? lev__n : 1); "
                  "if (!lev__p) { lev_vt_fail(vt, LEV_ENOMEM, \"%s: no memory for the "
                  "variable-length array '%s'\"); %s } lev__p; })",
                  b.n ? ", " : "", v->field, count.p, mult, id, w->fn->name, name, ex);
        free(ex);
        free(name);
    }
    free(count.p);
    return b.p ? b.p : pp_strdup("(void)0");
}

/* The variable dimensions of parameters of pointer-to-VLA type, evaluated
 * into their frame fields at the head of the body, which only a first
 * entry runs (a resume jumps past it). */
void pp_vla_params(pp_walk *w)
{
    pp_buf b = {0};
    if (w->fn->is_main && w->fn->nparams == 3) {
        /* main's third parameter, the environment: the runtime lays it
         * after argv's NULL, in the VT's heap, so it travels with argv */
        char *env = pp_var_ref(w->fn, 2);
        pp_printf(&b, "\n%s = (__typeof__(%s))(fr->m.argv + fr->m.argc + 1);", env, env);
        free(env);
    }
    for (unsigned i = 0; i < w->fn->nparams; i++) {
        pp_vla *vla = &w->fn->vars[i].vla;
        if (!vla->kind)
            continue;
        for (unsigned d = 0; d < vla->ndims; d++)
            if (vla->cdim[d] < 0)
                pp_expr(w, vla->size[d], 0, NULL);
        char *at = pp_vla_decl(w, (int)i);
        pp_printf(&b, "\n%s;", at);
        free(at);
    }
    if (b.p)
        pp_edit_add(w->f, w->body_b + 1, w->body_b + 1, E_PRE, 0, 1, b.p);
}

/* A DeclStmt: assignments to the frame. for_init: as one expression. */
void pp_declstmt(pp_walk *w, CXCursor c, int depth, int for_init, unsigned end, pp_unit *outer)
{
    pp_kids k = pp_children(c);
    int movable = k.n > 0, asserts = k.n > 0;
    for (unsigned i = 0; i < k.n; i++)
        asserts &= pp_kind(k.v[i]) == CXCursor_StaticAssert;
    if (asserts) {
        free(k.v);
        return; /* _Static_assert: kept as written */
    }
    for (unsigned i = 0; i < k.n; i++) {
        enum CXCursorKind kk = pp_kind(k.v[i]);
        movable &= kk == CXCursor_StructDecl || kk == CXCursor_UnionDecl ||
                   kk == CXCursor_EnumDecl ||
                   (kk == CXCursor_TypedefDecl && !pp_vm_typedef(k.v[i])) ||
                   (kk == CXCursor_VarDecl && clang_Cursor_getStorageClass(k.v[i]) == CX_SC_Static);
    }
    if (movable && !pp_in_macro(c)) {
        free(k.v);
        return; /* moved before the function by the common pass */
    }
    int fndecls = k.n > 0;
    for (unsigned i = 0; i < k.n; i++)
        fndecls &= pp_kind(k.v[i]) == CXCursor_FunctionDecl ||
                   (pp_kind(k.v[i]) == CXCursor_VarDecl &&
                    clang_Cursor_getStorageClass(k.v[i]) == CX_SC_Extern);
    if (fndecls) {
        free(k.v);
        return; /* `int f(char *);`, `extern int g;` in a block: no state, kept as written */
    }
    pp_buf txt = {0};
    int any = 0, in_frame = 0, tags_moved = pp_tags_with_vars(c);
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor v = k.v[i];
        if (pp_vm_typedef(v)) {
            pp_error(PP_LOC(v),
                     "typedef of a variably modified type in checkpointable function '%s' "
                     "cannot be captured; write the dimensions in each declaration",
                     w->fn->name);
            continue;
        }
        if (pp_kind(v) != CXCursor_VarDecl && tags_moved)
            continue; /* `struct S {...} s;`: S moved by the common pass */
        if (pp_kind(v) == CXCursor_EnumDecl && clang_Cursor_isAnonymous(v) && !for_init) {
            /* `enum { A, B } e = A;`: the constants stay declared where
             * they were (the variable has the enum's integer type in the
             * frame, pp_vars_cb) */
            pp_puts(&txt, any ? " " : "");
            pp_putn(&txt, w->f->text + pp_begin(v), pp_end(v) - pp_begin(v));
            pp_puts(&txt, ";");
            any = 1;
            continue;
        }
        if (pp_kind(v) != CXCursor_VarDecl) {
            pp_error(PP_LOC(v),
                     "type declaration inside checkpointable function '%s' is not "
                     "supported yet; move it to file scope",
                     w->fn->name);
            continue;
        }
        int vi = pp_var_find(w->fn, v);
        CXCursor init = clang_Cursor_getVarDeclInitializer(v);
        pp_unit own = {0}, *u = for_init ? outer : &own;
        pp_vla *vla = vi >= 0 && w->fn->vars[vi].vla.kind ? &w->fn->vars[vi].vla : NULL;
        for (unsigned d = 0; vla && d < vla->ndims; d++)
            if (vla->cdim[d] < 0)
                pp_expr(w, vla->size[d], 0, u);
        if (!clang_Cursor_isNull(init))
            pp_expr(w, init, 0, u);
        if (vi < 0)
            continue;
        in_frame = 1;
        if (!for_init && own.n) {
            pp_puts(&txt, "{");
            pp_seqs(w, &own, &txt);
            pp_puts(&txt, "\n}\n");
        }
        pp_unit_free(&own);
        if (vla) {
            char *at = pp_vla_decl(w, vi);
            pp_printf(&txt, "%s%s%s", any ? (for_init ? ", " : " ") : "", at, for_init ? "" : ";");
            free(at);
            any = 1;
            if (vla->kind == PP_VLA_ARRAY) {
                /* the heap object starts zeroed: only `= {}` can be kept */
                pp_kids ik = {.magic = PP_MAGIC_KIDS};
                if (!clang_Cursor_isNull(init))
                    ik = pp_children(init);
                if (!clang_Cursor_isNull(init) &&
                    (pp_kind(pp_strip(init)) != CXCursor_InitListExpr || ik.n))
                    pp_error(PP_LOC(init), "variable-length array with an initialiser");
                free(ik.v);
                continue;
            }
        }
        if (clang_Cursor_isNull(init))
            continue;
        char *it = pp_render_str(w->f, init, 1);
        const char *fld = w->fn->vars[vi].field;
        char *acc = pp_var_ref(w->fn, vi);
        CXType ct = clang_getCanonicalType(w->fn->vars[vi].type);
        enum CXCursorKind ik = pp_kind(pp_strip(init));
        int braces = ik == CXCursor_InitListExpr;
        if (any)
            pp_puts(&txt, for_init ? ", " : " ");
        if (!pp_assignable(w->fn->vars[vi].type) && ct.kind != CXType_ConstantArray) {
            /* a const member: initialised in place of a temporary, copied */
            char *cp = pp_copy_into(acc, it, w->fn->vars[vi].type);
            pp_puts(&txt, cp);
            free(cp);
        } else if (ct.kind == CXType_ConstantArray)
            pp_printf(&txt,
                      "__builtin_memcpy((void *)&%s, &(__typeof__(fr->%s))%s%s%s, "
                      "sizeof(%s))",
                      acc, fld, braces ? "" : "{", it, braces ? "" : "}", acc);
        else if (braces)
            pp_printf(&txt, "%s = (__typeof__(%s))%s", acc, acc, it);
        else
            pp_printf(&txt, "%s = %s", acc, it);
        if (!for_init)
            pp_puts(&txt, ";");
        any = 1;
        free(it);
        free(acc);
    }
    if (in_frame) {
        if (pp_in_macro(c))
            pp_error(PP_LOC(c),
                     "declaration from a macro in checkpointable function '%s' is "
                     "not supported",
                     w->fn->name);
        else
            pp_edit_add(w->f, pp_begin(c), end, E_REPL, depth, 1,
                        txt.p ? txt.p : pp_strdup(for_init ? "" : ";"));
    } else {
        free(txt.p);
    }
    free(k.v);
}

/* The body of a loop with a poll at the head of every iteration: a loop
 * that holds a safe point or a checkpointable call, or one whose
 * condition or body a macro writes (units 0); or, with `units`, a loop
 * without sites that holds other loops: it counts down the budget by
 * that many units per iteration (pp_units) and polls only when it is
 * spent: `if (LEV_UNLIKELY((lev__b -= U) < 0)) { POLL lev__b =
 * PP_BUDGET; }`, two instructions per iteration of an outer loop, and the
 * inner loops stay as the compiler would have them. Innermost loops
 * count down in strips instead (pp_strip_mine, pp_countdown). With
 * --no-auto-poll there is no poll at all. A body that is a macro's
 * statement (`while (c) STEP(x);`) is polled before it. */
void pp_loop_body(pp_walk *w, CXCursor loop, CXCursor body, int depth, unsigned units)
{
    (void)loop;
    if (!ctx.auto_poll) {
        w->loops++;
        pp_stmt(w, body, depth + 1);
        w->loops--;
        return;
    }
    pp_buf b = {0};
    if (pp_kind(body) != CXCursor_CompoundStmt)
        pp_puts(&b, "{");
    if (units) {
        pp_budget_var(w->fn);
        pp_puts(&b, "\n");
        pp_budget_poll(w, &b, pp_begin(body), units);
    } else {
        pp_poll_text(w, &b, pp_begin(body));
    }
    if (pp_kind(body) == CXCursor_CompoundStmt) {
        unsigned at = pp_begin(body) + 1;
        pp_edit_add(w->f, at, at, E_PRE, depth, 1, b.p);
    } else {
        pp_edit_add(w->f, pp_begin(body), pp_begin(body), E_PRE, depth, 1, b.p);
        pp_edit_add(w->f, pp_stmt_end(w->f, body), pp_stmt_end(w->f, body), E_POST, depth, 1,
                    pp_strdup("\n}"));
    }
    w->loops++;
    pp_stmt(w, body, depth + 1);
    w->loops--;
}

/* A loop condition with sites: `if (!(cond)) break;` at the head of the
 * body, after the code of its sites. */
void pp_cond_break(pp_walk *w, pp_unit *u, CXCursor cond, CXCursor body, int depth)
{
    pp_buf b = {0};
    pp_puts(&b, "{");
    pp_seqs(w, u, &b);
    char *ct = pp_render_str(w->f, cond, 1);
    pp_printf(&b, "\nif (!(%s))\n    break;\n", ct);
    free(ct);
    pp_edit_add(w->f, pp_begin(body), pp_begin(body), E_PRE, depth, 1, b.p);
    pp_edit_add(w->f, pp_stmt_end(w->f, body), pp_stmt_end(w->f, body), E_POST, depth, 1,
                pp_strdup("\n}"));
}

typedef struct pp_continue_scan {
    unsigned magic; /* PP_MAGIC_CONTINUE */
    pp_walk *w;
    unsigned k, n;
} pp_continue_scan;

static enum CXChildVisitResult pp_continue_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_continue_scan *ct = pp_visit_state(d, PP_MAGIC_CONTINUE);
    switch (pp_kind(c)) {
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
        return CXChildVisit_Continue; /* a continue in there is theirs */
    case CXCursor_ContinueStmt:
        if (pp_in_macro(c))
            pp_error(PP_LOC(c),
                     "continue from a macro in a loop whose increment or condition calls a "
                     "checkpointable function in '%s' is not supported",
                     ct->w->fn->name);
        else
            pp_edit_add(ct->w->f, pp_begin(c), pp_end(c), E_REPL, 0, 1,
                        pp_fmt("goto lev__cont%u", ct->k));
        ct->n++;
        return CXChildVisit_Continue;
    default:
        return CXChildVisit_Recurse;
    }
}

/* The sites of a for increment or a do-while condition (unit u): their
 * code runs at the end of the body, after a label that each `continue` of
 * the loop now jumps to; the increment or condition itself stays where it
 * is and reads their results. Must come after pp_cond_break and before
 * pp_loop_body (the order of their insertions at the same offsets). */
void pp_loop_tail(pp_walk *w, pp_unit *u, CXCursor body, int depth)
{
    pp_continue_scan ct = {.magic = PP_MAGIC_CONTINUE, .w = w, .k = ++w->fn->nlabels, .n = 0};
    if (pp_continue_cb(body, body, &ct) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_continue_cb, &ct);
    pp_buf b = {0};
    if (ct.n)
        pp_printf(&b, "\nlev__cont%u:;", ct.k);
    pp_puts(&b, "\n{");
    pp_seqs(w, u, &b);
    pp_puts(&b, "\n}\n}");
    unsigned e = pp_stmt_end(w->f, body);
    pp_edit_add(w->f, pp_begin(body), pp_begin(body), E_PRE, depth, 1, pp_strdup("{"));
    pp_edit_add(w->f, e, e, E_POST, depth, 1, b.p);
}

enum CXChildVisitResult pp_break_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    switch (pp_kind(c)) {
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
    case CXCursor_SwitchStmt:
        return CXChildVisit_Continue; /* a break in there is theirs */
    case CXCursor_BreakStmt:
    case CXCursor_LabelStmt:
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    default:
        return CXChildVisit_Recurse;
    }
}

/* A poll after statement c: for a loop written by a macro, which levpp
 * cannot poll inside, when no enclosing loop of the function polls. */
static void pp_poll_after(pp_walk *w, CXCursor c, int depth)
{
    if (!ctx.auto_poll || w->loops)
        return;
    unsigned b = pp_begin(c), e = pp_stmt_end(w->f, c);
    pp_buf t = {0};
    pp_poll_text(w, &t, e);
    pp_puts(&t, "}");
    pp_edit_add(w->f, b, b, E_PRE, depth + 1, 1, pp_strdup("{"));
    pp_edit_add(w->f, e, e, E_POST, depth + 1, 1, t.p);
}

/* A compound, if, switch or loop statement written by a macro. A `for` or
 * `while` whose body is written in the input (a FOREACH-like macro): the
 * head stays the macro's, the body is rewritten and polled as usual, but
 * a variable the head declares cannot move to the frame, so its body must
 * then hold no site (no poll inside; one after it). Anything else stays as
 * the macro wrote it (pp_macro_walk), with a poll after it when it holds
 * a loop. */
static void pp_macro_stmt(pp_walk *w, CXCursor c, int depth)
{
    enum CXCursorKind kind = pp_kind(c);
    pp_kids k = pp_children(c);
    CXCursor last = k.n ? k.v[k.n - 1] : clang_getNullCursor();
    pp_unit u = {0};
    if ((kind == CXCursor_ForStmt || kind == CXCursor_WhileStmt) && k.n &&
        (clang_isStatement(pp_kind(last)) || clang_isExpression(pp_kind(last))) &&
        !pp_in_macro(last)) {
        CXCursor decl = clang_getNullCursor();
        for (unsigned i = 0; i + 1 < k.n; i++) {
            if (pp_kind(k.v[i]) == CXCursor_DeclStmt && clang_Cursor_isNull(decl)) {
                pp_kids dk = pp_children(k.v[i]);
                if (dk.n)
                    decl = dk.v[0];
                free(dk.v);
            }
            pp_macro_walk(w, k.v[i], clang_getNullCursor(), &u, depth);
        }
        if (clang_Cursor_isNull(decl)) {
            pp_loop_body(w, c, last, depth, 0);
        } else {
            if (pp_has_site(last)) {
                char *name = pp_cxstring(clang_getCursorSpelling(decl));
                pp_error(PP_LOC(c),
                         "loop of checkpointable function '%s' whose head, written by a macro, "
                         "declares '%s', and whose body calls a checkpointable function or a "
                         "safe point: the variable cannot be kept across it; declare it before "
                         "the loop",
                         w->fn->name, name);
                free(name);
            }
            w->loops++;
            pp_stmt(w, last, depth + 1);
            w->loops--;
            pp_poll_after(w, c, depth);
        }
    } else {
        pp_macro_walk(w, c, pp_macro_first(c), &u, depth);
        pp_unit_wrap(w, &u, pp_begin(c), pp_stmt_end(w->f, c), depth);
        if (pp_macro_loop(c))
            pp_poll_after(w, c, depth);
    }
    pp_unit_free(&u);
    free(k.v);
}

static void pp_stmt_in(pp_walk *w, CXCursor c, int depth);

/* Rewrites statement c (at nesting depth) of a checkpointable body. */
void pp_stmt(pp_walk *w, CXCursor c, int depth)
{
    int saved = w->depth;
    w->depth = depth;
    enum CXCursorKind k = pp_kind(c);
    if (pp_in_macro(c) &&
        (k == CXCursor_CompoundStmt || k == CXCursor_IfStmt || k == CXCursor_SwitchStmt ||
         k == CXCursor_WhileStmt || k == CXCursor_DoStmt || k == CXCursor_ForStmt))
        pp_macro_stmt(w, c, depth);
    else
        pp_stmt_in(w, c, depth);
    w->depth = saved;
}

/* A return statement: its sites, then the return of the resumable body. */
static void pp_return_stmt(pp_walk *w, CXCursor c, const pp_kids *k, int depth)
{
    pp_file *f = w->f;
    pp_unit u = {0};
    pp_buf b = {0};
    char *et = NULL;
    if (k->n) {
        pp_expr(w, k->v[0], 0, &u);
        et = pp_render_str(f, k->v[0], 1);
    }
    pp_puts(&b, "{");
    pp_seqs(w, &u, &b);
    if (u.n)
        pp_puts(&b, "\n");
    char *rt =
        pp_return(w->fn, "LEV_RUN_DONE", et && !w->fn->is_main && !w->fn->ret_void ? et : NULL);
    if (et && w->fn->is_main)
        pp_printf(&b, " fr->m.ret = (%s);", et);
    else if (et && w->fn->ret_void)
        pp_printf(&b, " (void)(%s);", et);
    if (!w->fn->is_task && !w->fn->is_main)
        pp_puts(&b, "\n");
    pp_reserve_release(&b, w->fn);
    pp_printf(&b, " %s }", rt);
    free(rt);
    free(et);
    if (pp_in_macro(c))
        pp_error(PP_LOC(c),
                 "return from a macro in checkpointable function '%s' is not "
                 "supported",
                 w->fn->name);
    else
        pp_edit_add(f, pp_begin(c), pp_stmt_end(f, c), E_REPL, depth, 1, b.p);
    pp_unit_free(&u);
}

/* A while loop: a condition with sites becomes `for (;;)` and a break. */
static void pp_while_stmt(pp_walk *w, CXCursor c, const pp_kids *k, int depth)
{
    pp_file *f = w->f;
    pp_unit u = {0};
    if (k->n != 2)
        return;
    pp_expr(w, k->v[0], 0, &u);
    if (u.n) {
        pp_edit_add(f, pp_begin(c), pp_begin(k->v[1]), E_REPL, depth, 1, pp_strdup("for (;;)\n"));
        pp_cond_break(w, &u, k->v[0], k->v[1], depth);
    }
    pp_unit_free(&u);
    pp_loop(w, c, k->v[0], k->v[1], depth, pp_begin(c), pp_begin(k->v[1]));
}

/* A do loop: the sites of its condition run at the end of its body. */
static void pp_do_stmt(pp_walk *w, CXCursor c, const pp_kids *k, int depth)
{
    pp_file *f = w->f;
    if (k->n == 2) {
        pp_unit du = {.nested = 1};
        pp_expr(w, k->v[1], 0, &du);
        if (du.n)
            pp_loop_tail(w, &du, k->v[0], depth);
        pp_unit_free(&du);
        if (!pp_is_loop(c))
            pp_stmt(w, k->v[0], depth + 1);
        else
            pp_loop(w, c, k->v[1], k->v[0], depth, pp_begin(c), pp_stmt_end(f, k->v[0]));
    }
}

/* An expression statement, or a statement levpp refuses. */
static void pp_other_stmt(pp_walk *w, CXCursor c, int depth)
{
    pp_file *f = w->f;
    enum CXCursorKind kind = pp_kind(c);
    if (clang_isExpression(kind)) {
        pp_unit u = {0};
        u.top = c;
        u.has_top = 1;
        pp_expr(w, c, 0, &u);
        pp_unit_wrap(w, &u, pp_begin(c), pp_stmt_end(f, c), depth);
        pp_unit_free(&u);
    } else {
        char *ks = pp_cxstring(clang_getCursorKindSpelling(kind));
        pp_error(PP_LOC(c), "statement '%s' in checkpointable function '%s' is not supported", ks,
                 w->fn->name);
        free(ks);
    }
}

static void pp_stmt_in(pp_walk *w, CXCursor c, int depth)
{
    pp_file *f = w->f;
    enum CXCursorKind kind = pp_kind(c);
    pp_kids k = pp_children(c);
    switch (kind) {
    case CXCursor_CompoundStmt:
        for (unsigned i = 0; i < k.n; i++)
            pp_stmt(w, k.v[i], depth + 1);
        break;
    case CXCursor_DeclStmt:
        pp_declstmt(w, c, depth, 0, pp_stmt_end(f, c), NULL);
        break;
    case CXCursor_ReturnStmt:
        pp_return_stmt(w, c, &k, depth);
        break;
    case CXCursor_IfStmt:
    case CXCursor_SwitchStmt: {
        pp_unit u = {0};
        if (k.n)
            pp_expr(w, k.v[0], 0, &u);
        pp_unit_wrap(w, &u, pp_begin(c), pp_stmt_end(f, c), depth);
        pp_unit_free(&u);
        for (unsigned i = 1; i < k.n; i++)
            pp_stmt(w, k.v[i], depth + 1);
        break;
    }
    case CXCursor_WhileStmt:
        pp_while_stmt(w, c, &k, depth);
        break;
    case CXCursor_DoStmt:
        pp_do_stmt(w, c, &k, depth);
        break;
    case CXCursor_ForStmt:
        pp_for(w, c, depth);
        break;
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
    case CXCursor_LabelStmt:
        if (k.n)
            pp_stmt(w, k.v[k.n - 1], depth + 1);
        break;
    case CXCursor_GotoStmt:
    case CXCursor_BreakStmt:
    case CXCursor_ContinueStmt:
    case CXCursor_NullStmt:
        break;
    case CXCursor_UnexposedStmt:
        /* an attributed statement (`__attribute__((fallthrough));`): its
         * attributes are kept as written, its statement is walked */
        if (pp_attributed(f, c) && k.n && clang_isStatement(pp_kind(k.v[k.n - 1]))) {
            pp_stmt(w, k.v[k.n - 1], depth + 1);
            break;
        }
        pp_error(PP_LOC(c), "statement in checkpointable function '%s' is not supported",
                 w->fn->name);
        break;
    case CXCursor_IndirectGotoStmt:
        if (w->fn->label_table && k.n == 1) { /* a switch on lev__lbl_NAME (pp_libc.c) */
            pp_unit u = {0};
            pp_expr(w, k.v[0], 0, &u);
            pp_unit_wrap(w, &u, pp_begin(c), pp_stmt_end(f, c), depth);
            pp_unit_free(&u);
            break;
        }
        pp_error(PP_LOC(c), "computed goto in checkpointable function '%s' cannot be made mobile",
                 w->fn->name);
        break;
    case CXCursor_GCCAsmStmt:
    case CXCursor_MSAsmStmt:
        if (!pp_asm_refused(w, c)) { /* its operands, as an expression's */
            pp_unit u = {0};
            for (unsigned i = 0; i < k.n; i++)
                pp_expr(w, k.v[i], 0, &u);
            pp_unit_wrap(w, &u, pp_begin(c), pp_stmt_end(f, c), depth);
            pp_unit_free(&u);
        }
        break;
    default:
        pp_other_stmt(w, c, depth);
        break;
    }
    free(k.v);
}
