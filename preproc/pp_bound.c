/* pp_bound.c - innermost loops bounded by one comparison of their
 * condition: the head of a charged strip (shared with the counted loops
 * of pp_loop.c), and the loops that a counted `for` does not cover but
 * whose trip count is still bounded when they start: a `for` or `while`
 * whose condition is `C1 && ... && V OP B && ... && Cn`, where V is a C
 * local (an integer, or a pointer stepping one element) that steps by a
 * constant exactly once per iteration (the `for`'s increment, or the one
 * step statement at the top of a `while`'s body) and that nothing else in
 * the loop writes, B a bound the body cannot change (pp_pure_bound), and
 * the other conjuncts have no side effects. Such a loop may end early, by
 * a `break` or by another conjunct: it runs in charged strips of the
 * native loop all the same, each strip bounded by V OP lev__lK:
 *
 *     for (INIT; COND;) {                 while (COND) {
 *         HEAD                                HEAD
 *         for (; COND'; INC) BODY'            while (COND') BODY'
 *     }                                   }
 *     lev__xK:;                           lev__xK:;
 *
 * COND' is COND with `V OP B` replaced by `V OP lev__lK`, and BODY' is
 * BODY with each of its own `break`s turned into `goto lev__xK` (the
 * label, and braces around the whole, only when there is one). The outer
 * loop evaluates COND again once a strip ends, which is why the other
 * conjuncts must be free of side effects. A list walk, a string scan
 * without a length, and loops that step in an `if` still count the
 * budget down per iteration (pp_countdown).
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* The head of a charged strip of a loop on V (text vt, integer or
 * pointer `ptr`), bound B (text bt), signed step s, charged u units per
 * iteration (pp_units), `small`: not charged when fewer than PP_SMALL
 * iterations are left (an innermost loop nested in another); its poll at
 * `at`. Opens a block and declares lev__lK of V's type, the limit of the
 * strip, between V and B; returns K, the number of the poll's site. See
 * pp_strip_mine for the whole loop. A pointer steps one element (|s| is
 * 1), and its limit is computed from V, so that it keeps V's qualifiers. */
unsigned pp_strip_head(pp_walk *w, pp_buf *b, const char *vt, const char *bt, long long s, int ptr,
                       unsigned u, int small, unsigned at)
{
    unsigned long long ss = (unsigned long long)(s < 0 ? -s : s);
    const char *lo = s > 0 ? vt : bt, *hi = s > 0 ? bt : vt;
    char *dist = ptr ? pp_fmt("((unsigned long long)((%s) - (%s)))", hi, lo)
                     : pp_fmt("((unsigned long long)(%s) - (unsigned long long)(%s))", hi, lo);
    char *n = ss == 1 ? pp_strdup(dist) : pp_fmt("(%s / %lluULL)", dist, ss);
    char *fits = u == 1 ? pp_fmt("%s < (unsigned long long)lev__b", n)
                        : pp_fmt("%s < (unsigned long long)lev__b / %uULL", n, u);
    char *charge = u == 1 ? pp_fmt("lev__b -= (long)%s + 1;\n", n)
                          : pp_fmt("lev__b -= (long)((%s + 1) * %uULL);\n", n, u);
    /* the limit: B, or as far as the budget goes */
    char *whole =
        ptr ? pp_fmt("(%s) %c (long)%s", vt, s > 0 ? '+' : '-', dist) : pp_fmt("(%s)", bt);
    char *part = ptr ? pp_fmt("(%s) %c (long)(lev__b / %u)", vt, s > 0 ? '+' : '-', u)
                     : pp_fmt("(__typeof__(%s))((unsigned long long)(%s) %c (unsigned long long)"
                              "(lev__b / %u) * %lluULL)",
                              vt, vt, s > 0 ? '+' : '-', u, ss);
    pp_buf pb = {0};
    pp_budget_poll(w, &pb, at, 0);
    unsigned k = w->fn->npc;
    pp_printf(b, "{\n__typeof__(%s) lev__l%u = %s;\n", vt, k, whole);
    if (small)
        pp_printf(b, "if (%s >= %lluULL) {\n", dist, ss * PP_SMALL);
    pp_printf(b, "if (LEV_UNLIKELY(!(%s))) {\n%s", fits, pb.p);
    pp_printf(b, "lev__l%u = %s;\n", k, whole);
    pp_printf(b, "if (!(%s)) {\nlev__l%u = %s;\nlev__b = 0;\n} else\n%s} else\n%s", fits, k, part,
              charge, charge);
    if (small)
        pp_puts(b, "}\n");
    free(pb.p);
    free(dist);
    free(n);
    free(fits);
    free(charge);
    free(whole);
    free(part);
    return k;
}

/* Walks the body of a strip whose limit is lev__lK (k) on V (text vt,
 * which it frees): a resume label inside (pp_poll_text) sets the limit to
 * V, so that the strip ends after the iteration under way. */
void pp_strip_walk(pp_walk *w, CXCursor body, int depth, unsigned k, char *vt)
{
    if (ctx.nstrips < PP_MAX_STRIPS) {
        ctx.strips[ctx.nstrips].k = k;
        ctx.strips[ctx.nstrips].v = vt;
    } else {
        free(vt);
    }
    ctx.nstrips++;
    w->loops++;
    pp_stmt(w, body, depth + 1);
    w->loops--;
    ctx.nstrips--;
    if (ctx.nstrips < PP_MAX_STRIPS)
        free(ctx.strips[ctx.nstrips].v);
}

/* Whether V's type t can bound a strip: an integer of at most 8 bytes,
 * or (*ptr) a pointer to a complete object type. */
static int pp_strip_type(CXType t, int *ptr)
{
    t = clang_getCanonicalType(t);
    enum CXTypeKind k = t.kind;
    *ptr = k == CXType_Pointer;
    if (*ptr) {
        CXType p = clang_getCanonicalType(clang_getPointeeType(t));
        return p.kind != CXType_Void && p.kind != CXType_FunctionProto &&
               p.kind != CXType_FunctionNoProto && clang_Type_getSizeOf(p) > 0;
    }
    return ((k >= CXType_Char_U && k <= CXType_ULongLong && k != CXType_Char16 &&
             k != CXType_Char32) ||
            (k >= CXType_Char_S && k <= CXType_LongLong && k != CXType_WChar)) &&
           clang_Type_getSizeOf(t) <= 8;
}

/* Whether `V != B`, V of type t stepping by one, bounds a strip although
 * B may not fit t (pp_bound_fits): V is unsigned, so it wraps as the
 * strip's limit, of its type, does, and each strip makes its steps; when
 * B lies outside t the loop never ends, natively too, and still polls. */
int pp_ne_fits(CXType t, CXType bt)
{
    enum CXTypeKind k = clang_getCanonicalType(t).kind, bk = clang_getCanonicalType(bt).kind;
    int bint = (bk >= CXType_Char_U && bk <= CXType_ULongLong && bk != CXType_Char16 &&
                bk != CXType_Char32 && bk != CXType_Bool) ||
               (bk >= CXType_Char_S && bk <= CXType_LongLong && bk != CXType_WChar);
    return bint && k >= CXType_Char_U && k <= CXType_ULongLong && k != CXType_Char16 &&
           k != CXType_Char32 && k != CXType_Bool;
}

/* The variable that e steps by a constant (`V++`, `--V`, `V += C`,
 * `V -= C`), its signed step in *s (a constant from 1 to 2^20); a null
 * cursor if e is no such step. */
CXCursor pp_step_of(CXCursor e, long long *s)
{
    CXCursor in = pp_strip(e), v = clang_getNullCursor();
    pp_kids k = pp_children(in);
    *s = 0;
    if (k.n >= 1 && pp_kind(pp_strip(k.v[0])) == CXCursor_DeclRefExpr) {
        if (pp_kind(in) == CXCursor_UnaryOperator) {
            enum CXUnaryOperatorKind uo = clang_getCursorUnaryOperatorKind(in);
            if (uo == CXUnaryOperator_PostInc || uo == CXUnaryOperator_PreInc)
                *s = 1;
            else if (uo == CXUnaryOperator_PostDec || uo == CXUnaryOperator_PreDec)
                *s = -1;
        } else if (pp_kind(in) == CXCursor_CompoundAssignOperator && k.n == 2) {
            enum CXBinaryOperatorKind bo = clang_getCursorBinaryOperatorKind(in);
            CXEvalResult ev = clang_Cursor_Evaluate(k.v[1]);
            long long c = ev && clang_EvalResult_getKind(ev) == CXEval_Int
                              ? clang_EvalResult_getAsLongLong(ev)
                              : 0;
            if (ev)
                clang_EvalResult_dispose(ev);
            if (c >= 1 && c <= (1 << 20) && bo == CXBinaryOperator_AddAssign)
                *s = c;
            else if (c >= 1 && c <= (1 << 20) && bo == CXBinaryOperator_SubAssign)
                *s = -c;
        }
        if (*s)
            v = clang_getCursorReferenced(pp_strip(k.v[0]));
    }
    free(k.v);
    return v;
}

/* What the body of a loop holds, its own jumps and statements of note
 * (nested loops and switches keep their own `break`s and `continue`s). */
typedef struct pp_body_scan {
    unsigned magic; /* PP_MAGIC_BOUND */
    CXCursor *brk;  /* the loop's own breaks */
    unsigned nbrk, capbrk;
    int cont; /* a continue of the loop's own */
    int bad;  /* a label, case, goto, or a loop whose head a macro writes */
    int loop, sw;
} pp_body_scan;

static enum CXChildVisitResult pp_body_scan_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_body_scan *s = pp_visit_state(d, PP_MAGIC_BOUND);
    switch (pp_kind(c)) {
    case CXCursor_LabelStmt:
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt:
        s->bad = 1;
        break;
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
        s->bad |= !s->sw; /* of a switch around the loop: it jumps in */
        break;
    case CXCursor_BreakStmt:
        if (!s->loop && !s->sw) {
            PP_PUSH(s->brk, s->nbrk, s->capbrk);
            s->brk[s->nbrk++] = c;
        }
        break;
    case CXCursor_ContinueStmt:
        s->cont |= !s->loop;
        break;
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
    case CXCursor_SwitchStmt: {
        /* a loop whose head a macro writes polls inside (a resume label
         * the strip's limit cannot follow with `!=`) */
        if (pp_kind(c) != CXCursor_SwitchStmt && pp_in_macro(c))
            s->bad = 1;
        int loop = s->loop, sw = s->sw;
        if (pp_kind(c) == CXCursor_SwitchStmt)
            s->sw++;
        else
            s->loop++;
        clang_visitChildren(c, pp_body_scan_cb, s);
        s->loop = loop;
        s->sw = sw;
        return s->bad ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    default:
        break;
    }
    return s->bad ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static enum CXChildVisitResult pp_polls_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_is_loop(c) && pp_in_macro(c)) {
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether a loop body without sites may still hold a poll: that of a
 * loop whose head a macro writes. Its resume path ends the strip around
 * it by setting the strip's limit to V, which a `!=` strip would not
 * stop at (V steps past it). */
int pp_polls_inside(CXCursor body) { return pp_visit_finds(body, pp_polls_cb); }

/* Whether expression e is free of side effects and cheap to evaluate
 * twice: no assignment, increment, call, statement expression, assembly
 * or volatile access. */
static enum CXChildVisitResult pp_pure_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    enum CXCursorKind k = pp_kind(c);
    int *bad = pp_visit_flag(d);
    if (k == CXCursor_CallExpr || k == CXCursor_StmtExpr || k == CXCursor_GCCAsmStmt ||
        k == CXCursor_AsmStmt)
        *bad = 1;
    else if (pp_writes_operand(c) &&
             !(k == CXCursor_UnaryOperator &&
               clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_AddrOf))
        *bad = 1;
    else if (clang_isExpression(k) && clang_isVolatileQualifiedType(clang_getCursorType(c)))
        *bad = 1;
    return *bad ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* The conjuncts of a condition: its operands of top-level `&&`. */
static void pp_conjuncts(CXCursor e, pp_kids *out)
{
    CXCursor s = pp_strip(e);
    if (pp_kind(s) == CXCursor_BinaryOperator &&
        clang_getCursorBinaryOperatorKind(s) == CXBinaryOperator_LAnd) {
        pp_kids k = pp_children(s);
        for (unsigned i = 0; i < k.n; i++)
            pp_conjuncts(k.v[i], out);
        free(k.v);
        return;
    }
    PP_PUSH(out->v, out->n, out->cap);
    out->v[out->n++] = s;
}

/* Whether c, not `except`, writes or takes the address of one of the
 * variables referenced in `of` (a visitor over a loop's body). */
typedef struct pp_writes_scan {
    unsigned magic; /* PP_MAGIC_BOUND_WRITES */
    CXCursor except;
    CXCursor *v;
    unsigned n, cap;
    int hit;
} pp_writes_scan;

static enum CXChildVisitResult pp_refs_of_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_writes_scan *s = pp_visit_state(d, PP_MAGIC_BOUND_WRITES);
    if (pp_kind(c) == CXCursor_DeclRefExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        if (pp_kind(r) == CXCursor_VarDecl || pp_kind(r) == CXCursor_ParmDecl) {
            PP_PUSH(s->v, s->n, s->cap);
            s->v[s->n++] = r;
        }
    }
    return CXChildVisit_Recurse;
}

static enum CXChildVisitResult pp_writes_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_writes_scan *s = pp_visit_state(d, PP_MAGIC_BOUND_WRITES);
    if (!clang_Cursor_isNull(s->except) && clang_equalCursors(c, s->except))
        return CXChildVisit_Continue;
    if (pp_writes_operand(c)) {
        pp_kids k = pp_children(c);
        CXCursor l = k.n ? pp_strip(k.v[0]) : c;
        if (pp_kind(l) == CXCursor_DeclRefExpr) {
            CXCursor r = clang_getCursorReferenced(l);
            for (unsigned i = 0; i < s->n && !s->hit; i++)
                s->hit = clang_equalCursors(s->v[i], r);
        }
        free(k.v);
    }
    return s->hit ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* The step of V in a while's body: the one statement at its top that
 * steps V (the body itself when it is not a block); a null cursor if
 * there is none, or more than one. */
static CXCursor pp_body_step(CXCursor body, CXCursor v, long long *s)
{
    CXCursor found = clang_getNullCursor();
    if (pp_kind(body) != CXCursor_CompoundStmt) {
        CXCursor sv = pp_step_of(body, s);
        return !clang_Cursor_isNull(sv) && clang_equalCursors(sv, v) ? body : found;
    }
    pp_kids k = pp_children(body);
    int n = 0;
    for (unsigned i = 0; i < k.n; i++) {
        long long st = 0;
        CXCursor sv =
            clang_isExpression(pp_kind(k.v[i])) ? pp_step_of(k.v[i], &st) : clang_getNullCursor();
        if (!clang_Cursor_isNull(sv) && clang_equalCursors(sv, v)) {
            found = k.v[i];
            *s = st;
            n++;
        }
    }
    free(k.v);
    return n == 1 ? found : clang_getNullCursor();
}

/* A conjunct `V OP B` (or `B OP V`) that bounds the loop: V a C local of
 * fn of a strip type stepped by `step` (inc, or the one step statement
 * of the body), that nothing else in the loop writes; B pure, of a type
 * that compares as V's, none of whose variables the body writes. */
typedef struct pp_bounded {
    CXCursor conj, step;
    char *vt, *bt;
    const char *op;
    long long s;
    int ptr;
} pp_bounded;

static int pp_conj_bound(pp_walk *w, CXCursor conj, CXCursor inc, CXCursor body, pp_bounded *o)
{
    if (pp_kind(conj) != CXCursor_BinaryOperator)
        return 0;
    enum CXBinaryOperatorKind co = clang_getCursorBinaryOperatorKind(conj);
    static const enum CXBinaryOperatorKind ops[] = {CXBinaryOperator_LT, CXBinaryOperator_LE,
                                                    CXBinaryOperator_GT, CXBinaryOperator_GE,
                                                    CXBinaryOperator_NE};
    static const enum CXBinaryOperatorKind swapped[] = {CXBinaryOperator_GT, CXBinaryOperator_GE,
                                                        CXBinaryOperator_LT, CXBinaryOperator_LE,
                                                        CXBinaryOperator_NE};
    static const char *const text[] = {"<", "<=", ">", ">=", "!="};
    int oi = -1;
    for (int i = 0; i < 5; i++)
        if (ops[i] == co)
            oi = i;
    pp_kids k = pp_children(conj);
    int ok = oi >= 0 && k.n == 2;
    for (int side = 0; ok && side < 2; side++) {
        CXCursor v = pp_strip(k.v[side]), b = k.v[1 - side];
        if (pp_kind(v) != CXCursor_DeclRefExpr)
            continue;
        CXCursor iv = clang_getCursorReferenced(v);
        int vi = pp_var_find(w->fn, iv), ptr = 0;
        if (vi < 0 || !w->fn->vars[vi].reg || !pp_strip_type(clang_getCursorType(v), &ptr))
            continue;
        long long s = 0;
        CXCursor step = inc;
        if (!clang_Cursor_isNull(inc)) {
            CXCursor sv = pp_step_of(inc, &s);
            if (clang_Cursor_isNull(sv) || !clang_equalCursors(sv, iv))
                continue;
        } else {
            step = pp_body_step(body, iv, &s);
            if (clang_Cursor_isNull(step))
                continue;
        }
        /* as `V OP B`, V on the left */
        const char *op = text[oi];
        for (int i = 0; side && i < 5; i++)
            if (swapped[oi] == ops[i])
                op = text[i];
        int dir_ok = *op == '!' ? s == 1 || s == -1 : (s > 0) == (*op == '<');
        if (!dir_ok || (ptr && s != 1 && s != -1))
            continue;
        CXType vt = clang_getCanonicalType(clang_getCursorType(v));
        CXType bt = clang_getCanonicalType(clang_getCursorType(pp_strip(b)));
        int fits = ptr ? bt.kind == CXType_Pointer &&
                             clang_equalTypes(clang_getUnqualifiedType(
                                                  clang_getCanonicalType(clang_getPointeeType(vt))),
                                              clang_getUnqualifiedType(
                                                  clang_getCanonicalType(clang_getPointeeType(bt))))
                       : pp_bound_fits(vt, bt, b) || (*op == '!' && pp_ne_fits(vt, bt));
        if (!fits || !pp_pure_bound(w->fn, b, iv, pp_no_store(w->fn, body)))
            continue;
        /* nothing in the loop but the step writes V or a variable of B */
        pp_writes_scan ws = {.magic = PP_MAGIC_BOUND_WRITES, .except = step};
        PP_PUSH(ws.v, ws.n, ws.cap);
        ws.v[ws.n++] = iv;
        clang_visitChildren(b, pp_refs_of_cb, &ws);
        if (pp_kind(pp_strip(b)) == CXCursor_DeclRefExpr)
            pp_refs_of_cb(pp_strip(b), b, &ws);
        if (pp_writes_cb(body, body, &ws) == CXChildVisit_Recurse)
            clang_visitChildren(body, pp_writes_cb, &ws);
        int hit = ws.hit;
        free(ws.v);
        if (hit)
            continue;
        o->conj = conj;
        o->step = step;
        o->op = op;
        o->s = s;
        o->ptr = ptr;
        o->vt = pp_render_str(w->f, v, 1);
        o->bt = pp_render_str(w->f, b, 1);
        free(k.v);
        return 1;
    }
    free(k.v);
    return 0;
}

/* A `for` (inc not null) or `while` innermost loop without sites, its
 * condition and body written in the input, as charged strips (see the
 * opening comment); `at` is where the loop statement starts. 0, emitting
 * nothing, when it is not bounded so. */
int pp_bounded_strip(pp_walk *w, CXCursor c, CXCursor cond, CXCursor inc, CXCursor body, int depth,
                     unsigned at)
{
    pp_file *f = w->f;
    if (clang_Cursor_isNull(cond) || clang_Cursor_isNull(body) || pp_visit_finds(cond, pp_pure_cb))
        return 0;
    pp_body_scan sc = {.magic = PP_MAGIC_BOUND};
    if (pp_body_scan_cb(body, body, &sc) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_body_scan_cb, &sc);
    int is_for = pp_kind(c) == CXCursor_ForStmt;
    pp_bounded bd = {.vt = NULL};
    pp_kids cj = {.magic = PP_MAGIC_KIDS};
    int ok = !sc.bad && !(sc.cont && !is_for);
    if (ok) {
        pp_conjuncts(cond, &cj);
        ok = 0;
        for (unsigned i = 0; !ok && i < cj.n; i++)
            ok = pp_conj_bound(w, cj.v[i], is_for ? inc : clang_getNullCursor(), body, &bd);
    }
    free(cj.v);
    if (!ok) {
        free(sc.brk);
        return 0;
    }
    unsigned cb, ce, jb, je;
    if (!pp_span(f, cond, &cb, &ce)) {
        cb = pp_begin(cond);
        ce = pp_end(cond);
    }
    if (!pp_span(f, bd.conj, &jb, &je)) {
        jb = pp_begin(bd.conj);
        je = pp_end(bd.conj);
    }
    pp_budget_var(w->fn);
    pp_buf head = {0};
    unsigned k =
        pp_strip_head(w, &head, bd.vt, bd.bt, bd.s, bd.ptr, 1, w->loops > 0, pp_begin(body));
    /* COND' */
    pp_buf nc = {0};
    pp_render(&nc, f, cb, jb, 1, R_EXPR);
    pp_printf(&nc, "(%s %s lev__l%u)", bd.vt, bd.op, k);
    pp_render(&nc, f, je, ce, 1, R_EXPR);
    if (is_for) {
        char *it = pp_render_str(f, inc, 1);
        pp_edit_add(f, pp_begin(inc), pp_end(inc), E_REPL, depth, 1, pp_strdup(""));
        pp_printf(&head, "for (; %s; %s)\n", nc.p, it);
        free(it);
    } else {
        pp_printf(&head, "while (%s)\n", nc.p);
    }
    pp_edit_add(f, pp_begin(body), pp_begin(body), E_PRE, depth, 1, head.p);
    pp_edit_add(f, pp_stmt_end(f, body), pp_stmt_end(f, body), E_POST, depth, 1, pp_strdup("\n}"));
    if (sc.nbrk) {
        unsigned x = ++w->fn->nlabels;
        for (unsigned i = 0; i < sc.nbrk; i++)
            pp_edit_add(f, pp_begin(sc.brk[i]), pp_end(sc.brk[i]), E_REPL, depth + 1, 1,
                        pp_fmt("goto lev__x%u", x));
        unsigned e = pp_stmt_end(f, body);
        pp_edit_add(f, at, at, E_PRE, depth - 1, 1, pp_strdup("{\n"));
        pp_edit_add(f, e, e, E_POST, depth - 1, 1, pp_fmt("\nlev__x%u:;\n}", x));
    }
    free(nc.p);
    free(sc.brk);
    free(bd.bt);
    pp_strip_walk(w, body, depth, k, bd.vt);
    return 1;
}
