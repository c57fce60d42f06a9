/* pp_loop.c - loops of a checkpointable body: counted loops that are
 * strip-mined or counted down against a poll budget, unrolled bodies, and
 * the for/while/do forms.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* Whether a loop has no site in it and no call in its condition
 * (evaluated twice per strip), and its body and condition are written in
 * the input; and whether it can be strip-mined: besides, no break of its
 * own, no label in its body (nothing jumps into it). */
static int pp_sites_none(CXCursor loop, CXCursor cond, CXCursor body)
{
    int bad = pp_has_site(loop) || pp_in_macro(body) || pp_in_macro(cond);
    if (!bad)
        clang_visitChildren(cond, pp_site_any_call_cb, &bad);
    return !bad;
}

static int pp_strippable(CXCursor loop, CXCursor cond, CXCursor body)
{
    int bad = !pp_sites_none(loop, cond, body);
    if (!bad && pp_break_cb(body, loop, &bad) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_break_cb, &bad);
    return !bad;
}

/* Whether the body of a strippable loop holds a goto (the bounded strip,
 * pp_strip_bound, keeps to structured jumps). Resume labels of inner
 * loops are fine: their resume path resets the strip's limit
 * (pp_poll_text). */
static enum CXChildVisitResult pp_unbounded_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    int *bad = pp_visit_flag(d);
    if (pp_kind(c) == CXCursor_GotoStmt || pp_kind(c) == CXCursor_IndirectGotoStmt)
        bad[0] = 1;
    return bad[0] ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* Whether e is a bound that the body cannot change and that costs little
 * to evaluate again: integer constants and C locals (not the induction
 * variable iv) under arithmetic operators and casts, and, when `loads`
 * (the body stores to no memory, pp_no_store), elements `P[X]` and `*P`
 * read through such expressions (not volatile). */
int pp_pure_bound(pp_fn *fn, CXCursor e, CXCursor iv, int loads)
{
    enum CXCursorKind k = pp_kind(e);
    int ok = 1;
    if (loads && (k == CXCursor_ArraySubscriptExpr ||
                  (k == CXCursor_UnaryOperator &&
                   clang_getCursorUnaryOperatorKind(e) == CXUnaryOperator_Deref))) {
        CXType t = clang_getCursorType(e);
        if (clang_isVolatileQualifiedType(t) ||
            clang_isVolatileQualifiedType(clang_getCanonicalType(t)))
            return 0;
        pp_kids kk = pp_children(e);
        ok = kk.n == (k == CXCursor_ArraySubscriptExpr ? 2u : 1u);
        for (unsigned i = 0; ok && i < kk.n; i++)
            ok = pp_pure_bound(fn, kk.v[i], iv, loads);
        free(kk.v);
        return ok;
    }
    if (k == CXCursor_DeclRefExpr) {
        CXCursor r = clang_getCursorReferenced(e);
        if (pp_kind(r) == CXCursor_EnumConstantDecl)
            return 1;
        int vi = pp_var_find(fn, r);
        return vi >= 0 && fn->vars[vi].reg && !clang_equalCursors(r, iv);
    }
    if (k == CXCursor_IntegerLiteral)
        return 1;
    if (k == CXCursor_BinaryOperator) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
        ok = op >= CXBinaryOperator_Mul && op <= CXBinaryOperator_Shr;
    } else if (k == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(e);
        ok = op == CXUnaryOperator_Plus || op == CXUnaryOperator_Minus || op == CXUnaryOperator_Not;
    } else if (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr &&
               k != CXCursor_CStyleCastExpr) {
        return 0;
    }
    pp_kids kk = pp_children(e);
    ok = ok && kk.n >= 1;
    for (unsigned i = 0; ok && i < kk.n; i++)
        ok = pp_pure_bound(fn, kk.v[i], iv, loads);
    free(kk.v);
    return ok;
}

typedef struct pp_no_store_scan {
    unsigned magic; /* PP_MAGIC_NO_STORE */
    pp_fn *fn;
    int bad;
} pp_no_store_scan;

static enum CXChildVisitResult pp_no_store_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_no_store_scan *s = pp_visit_state(d, PP_MAGIC_NO_STORE);
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_CallExpr || k == CXCursor_StmtExpr || k == CXCursor_GCCAsmStmt ||
        k == CXCursor_MSAsmStmt || k == CXCursor_AsmStmt) {
        s->bad = 1;
    } else if (pp_writes_operand(c)) {
        pp_kids kk = pp_children(c);
        CXCursor l = kk.n ? pp_strip(kk.v[0]) : c;
        int vi = -1;
        if (pp_kind(c) != CXCursor_UnaryOperator ||
            clang_getCursorUnaryOperatorKind(c) != CXUnaryOperator_AddrOf)
            if (pp_kind(l) == CXCursor_DeclRefExpr)
                vi = pp_var_find(s->fn, clang_getCursorReferenced(l));
        s->bad = vi < 0 || !s->fn->vars[vi].reg;
        free(kk.v);
    }
    return s->bad ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* Whether a loop body stores to no memory: every assignment, increment
 * and decrement in it writes a C local of fn (pp_regs: its address is
 * never taken), and it holds no `&`, call, statement expression or
 * assembly. Memory read by the loop's bound then keeps its value while
 * the loop runs. */
int pp_no_store(pp_fn *fn, CXCursor body)
{
    pp_no_store_scan s = {.magic = PP_MAGIC_NO_STORE, .fn = fn, .bad = 0};
    if (pp_no_store_cb(body, body, &s) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_no_store_cb, &s);
    return !s.bad;
}

/* Whether bound b of type bt converts to the induction variable's
 * integer type t without changing its value, so that `V OP B` compares
 * as in t: the same type, an integer type of t's signedness and no wider,
 * an unsigned type narrower than a signed t, or a constant that t holds
 * (`long s; s < 1000000`). */
int pp_bound_fits(CXType t, CXType bt, CXCursor b)
{
    /* a `const` bound compares as any other (`uint16_t i; i < maxlen`
     * with a `const uint16_t maxlen`) */
    if (clang_equalTypes(clang_getUnqualifiedType(t), clang_getUnqualifiedType(bt)))
        return 1;
    enum CXTypeKind k = bt.kind;
    int bint = (k >= CXType_Char_U && k <= CXType_ULongLong && k != CXType_Char16 &&
                k != CXType_Char32 && k != CXType_Bool) ||
               (k >= CXType_Char_S && k <= CXType_LongLong && k != CXType_WChar);
    if (!bint)
        return 0;
    int tsigned = t.kind >= CXType_Char_S && t.kind <= CXType_Int128;
    int bsigned = k >= CXType_Char_S && k <= CXType_Int128;
    long long ts = clang_Type_getSizeOf(t), bs = clang_Type_getSizeOf(bt);
    /* the same signedness and no wider, or unsigned and narrower than a
     * signed t (`int i; i < n` with a uint8_t n) */
    if (ts >= 4 && ((tsigned == bsigned && bs <= ts) || (tsigned && !bsigned && bs < ts)))
        return 1;
    CXEvalResult ev = clang_Cursor_Evaluate(b);
    int ok = 0;
    if (ev && clang_EvalResult_getKind(ev) == CXEval_Int) {
        if (clang_EvalResult_isUnsignedInt(ev)) {
            unsigned long long v = clang_EvalResult_getAsUnsigned(ev);
            ok = ts >= 8 ? (tsigned ? v <= 0x7fffffffffffffffULL : 1)
                         : v < (1ULL << (8 * ts - (tsigned ? 1 : 0)));
        } else {
            long long v = clang_EvalResult_getAsLongLong(ev);
            ok = v >= 0 &&
                 (ts >= 8 || (unsigned long long)v < (1ULL << (8 * ts - (tsigned ? 1 : 0))));
        }
    }
    if (ev)
        clang_EvalResult_dispose(ev);
    return ok;
}

/* For `V OP B; V += S` (OP < <= > >=, S a constant of the direction of
 * OP; or OP != and S 1 or -1: V meets B, in V's type, after |B - V|
 * steps; V of an integer type that B fits (pp_bound_fits), B pure): the
 * texts of V and B, OP and the signed step. */
static int pp_strip_bound(pp_walk *w, CXCursor cond, CXCursor inc, CXCursor body, char **vt,
                          char **bt, const char **op, long long *step)
{
    CXCursor in = pp_strip(inc), cn = pp_strip(cond);
    pp_kids ik = pp_children(in), ck = pp_children(cn);
    long long s = 0;
    int ok = ik.n >= 1 && ck.n == 2, swap = 0;
    CXCursor v = ok ? pp_strip(ik.v[0]) : in, iv = clang_getNullCursor();
    if (ok && pp_kind(v) == CXCursor_DeclRefExpr) {
        iv = clang_getCursorReferenced(v);
        CXCursor l = pp_strip(ck.v[0]), r = pp_strip(ck.v[1]);
        if (pp_kind(l) == CXCursor_DeclRefExpr &&
            clang_equalCursors(clang_getCursorReferenced(l), iv))
            swap = 0;
        else if (pp_kind(r) == CXCursor_DeclRefExpr &&
                 clang_equalCursors(clang_getCursorReferenced(r), iv))
            swap = 1;
        else
            ok = 0;
    } else {
        ok = 0;
    }
    if (ok && pp_kind(in) == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind uo = clang_getCursorUnaryOperatorKind(in);
        s = uo == CXUnaryOperator_PostInc || uo == CXUnaryOperator_PreInc ? 1 : -1;
    } else if (ok && ik.n == 2) {
        CXEvalResult ev = clang_Cursor_Evaluate(ik.v[1]);
        if (ev && clang_EvalResult_getKind(ev) == CXEval_Int)
            s = clang_EvalResult_getAsLongLong(ev);
        if (ev)
            clang_EvalResult_dispose(ev);
        if (s < 1 || s > (1 << 20))
            s = 0;
        else if (clang_getCursorBinaryOperatorKind(in) == CXBinaryOperator_SubAssign)
            s = -s;
    }
    CXCursor bc = ok ? ck.v[swap ? 0 : 1] : cn;
    if (ok && s) {
        CXType t = clang_getCanonicalType(clang_getCursorType(v));
        CXType bt2 = clang_getCanonicalType(clang_getCursorType(pp_strip(bc)));
        enum CXTypeKind tk = t.kind;
        ok = ((tk >= CXType_Char_U && tk <= CXType_ULongLong && tk != CXType_Char16 &&
               tk != CXType_Char32) ||
              (tk >= CXType_Char_S && tk <= CXType_LongLong && tk != CXType_WChar)) &&
             clang_Type_getSizeOf(t) <= 8 &&
             (pp_bound_fits(t, bt2, bc) ||
              (clang_getCursorBinaryOperatorKind(cn) == CXBinaryOperator_NE &&
               pp_ne_fits(t, bt2))) &&
             pp_pure_bound(w->fn, bc, iv, pp_no_store(w->fn, body));
    } else {
        ok = 0;
    }
    if (ok) {
        enum CXBinaryOperatorKind co = clang_getCursorBinaryOperatorKind(cn);
        if (swap)
            co = co == CXBinaryOperator_LT   ? CXBinaryOperator_GT
                 : co == CXBinaryOperator_GT ? CXBinaryOperator_LT
                 : co == CXBinaryOperator_LE ? CXBinaryOperator_GE
                 : co == CXBinaryOperator_GE ? CXBinaryOperator_LE
                                             : co;
        *op = co == CXBinaryOperator_LT   ? "<"
              : co == CXBinaryOperator_LE ? "<="
              : co == CXBinaryOperator_GT ? ">"
              : co == CXBinaryOperator_GE ? ">="
              : co == CXBinaryOperator_NE ? "!="
                                          : NULL;
        /* `V != B` steps by one, either way, so that V meets B */
        ok = *op && (**op == '!' ? s == 1 || s == -1 : (s > 0) == (**op == '<'));
    }
    if (ok) {
        int bad[2] = {0, 0};
        if (pp_unbounded_cb(body, body, bad) == CXChildVisit_Recurse)
            clang_visitChildren(body, pp_unbounded_cb, bad);
        ok = !bad[0];
    }
    if (ok) {
        *vt = pp_render_str(w->f, v, 1);
        *bt = pp_render_str(w->f, bc, 1);
        *step = s;
    }
    free(ik.v);
    free(ck.v);
    return ok;
}

/* Loops without safe points or checkpointable calls count their work
 * down a budget, the C local lev__b of the function (declared by
 * pp_budget_var, 0 on entry and after a resume elsewhere, so that the
 * first loop a call runs polls), and poll only when it is spent:
 * between two polls run at most about PP_BUDGET iterations of the loops
 * of the function, whatever their nesting. Every loop keeps lev__b >= 0
 * when it ends; the poll, and the resume label with it, sits between
 * strips, outside the native inner loop. */
#define PP_BUDGET 4096

/* The most units one iteration of a loop is charged (PP_SMALL, the
 * iterations of a nested loop that are not charged, is in levpp.h). */
#define PP_MAX_UNITS 256

typedef struct pp_nest {
    unsigned magic;  /* PP_MAGIC_NEST */
    unsigned height; /* levels of loops below */
    unsigned inner;  /* innermost loops directly in the body */
} pp_nest;

static enum CXChildVisitResult pp_nest_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_nest *n = pp_visit_state(d, PP_MAGIC_NEST);
    if (!pp_is_loop(c) || pp_in_macro(c))
        return CXChildVisit_Recurse;
    pp_nest in = {.magic = PP_MAGIC_NEST, .height = 0, .inner = 0};
    clang_visitChildren(c, pp_nest_cb, &in);
    if (in.height + 1 > n->height)
        n->height = in.height + 1;
    if (!in.height)
        n->inner++;
    return CXChildVisit_Continue;
}

/* The units one iteration of a loop whose body is `body` is charged: 1,
 * plus PP_SMALL for each innermost loop directly inside, which may run
 * uncharged (pp_strip_mine), rounded up to a power of two, at most
 * PP_MAX_UNITS. Loops further down are charged by their own parents.
 * *height: levels of loops inside. */
static unsigned pp_units(CXCursor body, unsigned *height)
{
    pp_nest n = {.magic = PP_MAGIC_NEST, .height = 0, .inner = 0};
    if (pp_nest_cb(body, body, &n) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_nest_cb, &n);
    *height = n.height;
    unsigned long long want = 1ULL + (unsigned long long)PP_SMALL * n.inner, u = 1;
    while (u < want && u < PP_MAX_UNITS)
        u *= 2;
    return (unsigned)u;
}

void pp_budget_var(pp_fn *fn)
{
    if (!fn->counters.p || !strstr(fn->counters.p, "long lev__b "))
        pp_puts(&fn->counters, "    long lev__b = 0;\n");
}

/* The poll of a loop whose budget is spent, at offset `at`: between
 * strips (units 0) when lev__b <= 0; at the head of an iteration charged
 * `units` when lev__b goes below 0. Resets the budget, also on the
 * resume path. */
void pp_budget_poll(pp_walk *w, pp_buf *b, unsigned at, unsigned units)
{
    pp_buf t = {0};
    pp_poll_text(w, &t, at);
    if (units)
        pp_printf(b, "if (LEV_UNLIKELY((lev__b -= %u) < 0)) {%slev__b = %d;\n}\n", units, t.p,
                  PP_BUDGET);
    else
        pp_printf(b, "if (LEV_UNLIKELY(lev__b <= 0)) {%slev__b = %d;\n}\n", t.p, PP_BUDGET);
    free(t.p);
}

/* A counted loop `for (INIT; V OP B; V += S) BODY` (pp_strip_bound; no
 * break of its own, no label): strips of whole runs of the native loop
 * with its bound replaced, each charged to the budget at once, U units
 * per iteration (pp_units), so it costs what the native loop costs plus
 * a few instructions per strip. With N = DIST / |S| (DIST = |B - V|, in
 * unsigned long long: nothing overflows):
 *
 *     for (INIT; COND;) {
 *         T lev__lK = B;
 *         if (LEV_UNLIKELY(N >= lev__b / U)) {          // does not fit
 *             if (lev__b <= 0) { POLL lev__b = PP_BUDGET; }
 *             lev__lK = B;
 *             if (N >= lev__b / U) { lev__lK = V + (lev__b / U) * S; lev__b = 0; }
 *             else lev__b -= (N + 1) * U;
 *         } else
 *             lev__b -= (N + 1) * U;
 *         for (; V OP lev__lK; INC)
 *             BODY
 *     }
 *
 * lev__lK lies between V and B. An innermost loop nested in another loop
 * of the function is not charged at all when DIST < PP_SMALL * |S| (the
 * enclosing loop's units pay for it): that is the whole cost of a short
 * inner loop, one comparison. A resume label of an inner loop sets
 * lev__lK to V (pp_poll_text): the strip ends after the iteration under
 * way and the next one is charged afresh. */
static void pp_strip_mine(pp_walk *w, CXCursor inc, CXCursor body, int depth, char *vt, char *bt,
                          const char *op, long long s)
{
    pp_file *f = w->f;
    char *it = pp_render_str(f, inc, 1);
    pp_edit_add(f, pp_begin(inc), pp_end(inc), E_REPL, depth, 1, pp_strdup(""));
    pp_budget_var(w->fn);
    unsigned height = 0, u = pp_units(body, &height);
    int small = height == 0 && w->loops > 0;
    pp_buf b = {0};
    unsigned k = pp_strip_head(w, &b, vt, bt, s, 0, u, small, pp_begin(body));
    pp_printf(&b, "for (; %s %s lev__l%u; %s)\n", vt, op, k, it);
    pp_edit_add(f, pp_begin(body), pp_begin(body), E_PRE, depth, 1, b.p);
    pp_edit_add(f, pp_stmt_end(f, body), pp_stmt_end(f, body), E_POST, depth, 1, pp_strdup("\n}"));
    free(it);
    pp_strip_walk(w, body, depth, k, vt);
}

static enum CXChildVisitResult pp_label_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_kind(c) == CXCursor_LabelStmt) {
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether the body of a loop holds a label (of its own, or a case or
 * default of a switch around the loop): something may jump into it,
 * past the loop's head. */
static enum CXChildVisitResult pp_entry_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    switch (pp_kind(c)) {
    case CXCursor_SwitchStmt: {
        /* its own cases are its own; a label inside is not */
        int *found = pp_visit_flag(d);
        pp_kids k = pp_children(c);
        for (unsigned i = 0; i < k.n && !*found; i++)
            *found = pp_visit_finds(k.v[i], pp_label_cb);
        free(k.v);
        return *found ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    case CXCursor_LabelStmt:
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    default:
        return CXChildVisit_Recurse;
    }
}

/* The value of integer constant expression e in *v. */
static int pp_const_int(CXCursor e, long long *v)
{
    CXEvalResult ev = clang_Cursor_Evaluate(e);
    int ok = ev && clang_EvalResult_getKind(ev) == CXEval_Int;
    if (ok && clang_EvalResult_isUnsignedInt(ev)) {
        unsigned long long u = clang_EvalResult_getAsUnsigned(ev);
        ok = u <= (1ULL << 40);
        *v = (long long)u;
    } else if (ok) {
        *v = clang_EvalResult_getAsLongLong(ev);
    }
    if (ev)
        clang_EvalResult_dispose(ev);
    return ok && *v >= -(1LL << 40) && *v <= (1LL << 40);
}

/* The start of a loop whose INIT sets induction variable iv to a
 * constant (`V = C` or the declaration `T V = C`), in *v. */
static int pp_const_start(CXCursor init, CXCursor iv, long long *v)
{
    if (clang_Cursor_isNull(init))
        return 0;
    int ok = 0;
    if (pp_kind(init) == CXCursor_DeclStmt) {
        pp_kids k = pp_children(init);
        for (unsigned i = 0; i < k.n; i++)
            if (clang_equalCursors(k.v[i], iv))
                ok = pp_const_int(k.v[i], v);
        free(k.v);
        return ok;
    }
    CXCursor e = pp_strip(init);
    if (pp_kind(e) != CXCursor_BinaryOperator ||
        clang_getCursorBinaryOperatorKind(e) != CXBinaryOperator_Assign)
        return 0;
    pp_kids k = pp_children(e);
    CXCursor l = k.n == 2 ? pp_strip(k.v[0]) : e;
    ok = k.n == 2 && pp_kind(l) == CXCursor_DeclRefExpr &&
         clang_equalCursors(clang_getCursorReferenced(l), iv) && pp_const_int(k.v[1], v);
    free(k.v);
    return ok;
}

/* The iterations of a counted loop `for (INIT; V OP B; V += S)`
 * (pp_strip_bound: op, the signed step s) whose INIT sets V to a
 * constant and whose bound B is a constant, V a C local of the function
 * (its address never taken, so nothing but the increment changes it:
 * pp_counted), with every value V takes, up to the first that fails the
 * condition, in V's type (no wrap-around): the loop runs at most that
 * many times. -1: not such a loop. */
static long long pp_trips(pp_walk *w, CXCursor init, CXCursor cond, CXCursor inc, const char *op,
                          long long s)
{
    pp_kids ik = pp_children(pp_strip(inc)), ck = pp_children(pp_strip(cond));
    long long n = -1, c0 = 0, b = 0;
    CXCursor v = ik.n ? pp_strip(ik.v[0]) : inc;
    if (ik.n && ck.n == 2 && pp_kind(v) == CXCursor_DeclRefExpr) {
        CXCursor iv = clang_getCursorReferenced(v), l = pp_strip(ck.v[0]);
        int vi = pp_var_find(w->fn, iv);
        int left = pp_kind(l) == CXCursor_DeclRefExpr &&
                   clang_equalCursors(clang_getCursorReferenced(l), iv);
        CXType t = clang_getCanonicalType(clang_getCursorType(v));
        long long ts = clang_Type_getSizeOf(t);
        int tsigned = t.kind >= CXType_Char_S && t.kind <= CXType_Int128;
        if (vi >= 0 && w->fn->vars[vi].reg && ts >= 1 && ts <= 8 && pp_const_start(init, iv, &c0) &&
            pp_const_int(ck.v[left ? 1 : 0], &b)) {
            long long d = s > 0 ? b - c0 : c0 - b, as = s > 0 ? s : -s;
            int incl = !strcmp(op, "<=") || !strcmp(op, ">=");
            if (!strcmp(op, "!="))
                n = d >= 0 ? d : -1; /* a step of one; from the other side, it wraps */
            else
                n = d < 0 || (d == 0 && !incl) ? 0 : incl ? d / as + 1 : (d + as - 1) / as;
            long long e = c0 + n * s; /* the first value that fails */
            long long lo = tsigned ? (ts >= 8 ? -(1LL << 41) : -(1LL << (8 * ts - 1))) : 0;
            long long hi = ts >= 8   ? 1LL << 41
                           : tsigned ? (1LL << (8 * ts - 1)) - 1
                                     : (1LL << (8 * ts)) - 1;
            if (c0 < lo || c0 > hi || e < lo || e > hi)
                n = -1;
        }
    }
    free(ik.v);
    free(ck.v);
    return n;
}

/* A counted loop of at most PP_MAX_UNITS iterations by its constants
 * (pp_trips: N), nothing jumping into its body: charged N units at
 * once before it starts, as one iteration of a loop holding loops is
 * (`if (LEV_UNLIKELY((lev__b -= N) < 0)) { POLL lev__b = 4096; }`), then
 * run as written; a `break` ends it early. Nested in another loop of the
 * function and shorter than PP_SMALL iterations, it is not charged at
 * all (the enclosing loop's units pay for it). Two instructions where a
 * strip (pp_strip_mine) costs a dozen as it starts. */
static void pp_const_loop(pp_walk *w, CXCursor c, CXCursor body, int depth, long long n)
{
    pp_file *f = w->f;
    if (n > 0 && !(w->loops > 0 && n < PP_SMALL)) {
        pp_budget_var(w->fn);
        pp_buf b = {0};
        pp_puts(&b, "{\n");
        pp_budget_poll(w, &b, pp_begin(c), (unsigned)n);
        pp_edit_add(f, pp_begin(c), pp_begin(c), E_PRE, depth - 1, 1, b.p);
        /* the loop ends where its body does (pp_stmt_end of the for
         * statement stops short of a `;` after a compound literal) */
        unsigned e = pp_stmt_end(f, body);
        pp_edit_add(f, e, e, E_POST, depth - 1, 1, pp_strdup("\n}"));
    }
    w->loops++;
    pp_stmt(w, body, depth + 1);
    w->loops--;
}

/* Any other loop without a safe point or checkpointable call counts down
 * the budget in its condition, in strips run by the loop as written (the
 * condition and increment evaluated once per iteration, as written):
 *
 *     for (INIT; COND; INC) BODY  ->  for (INIT;;) { BUDGET_POLL
 *                                         for (; --lev__b > 0 && (COND); INC) BODY
 *                                         if (lev__b > 0) break; }
 *     while (COND) BODY           ->  for (;;) { BUDGET_POLL
 *                                         while (--lev__b > 0 && (COND)) BODY
 *                                         if (lev__b > 0) break; }
 *     do BODY while (COND);       ->  for (;;) { BUDGET_POLL
 *                                         do BODY while ((COND) && --lev__b >= 0);
 *                                         if (lev__b >= 0) break; }
 *
 * The strip of a for or while stops with lev__b == 0 only when the
 * budget is spent and the loop must go on; a `break` of BODY, or the
 * condition failing, leaves lev__b > 0 (nothing in BODY counts down: the
 * loop is innermost), and the outer `for` ends too. gcc -O1 tests
 * `--lev__b > 0` with the flags of the decrement, where `>= 0` took a
 * compare with -1 more. A do, and a loop charged U units per iteration
 * (pp_units; `--lev__b >= 0` is then `(lev__b -= U) >= 0`), stop with
 * lev__b < 0 only when the budget is spent, leave lev__b >= 0 otherwise
 * (every loop inside BODY ends with lev__b >= 0). `continue` keeps its meaning. `head_b`..`head_e`
 * is the text replaced by the head of the inner loop (for: from the
 * first `;` to the `)`; while: from `while` to the body), `tail_b` where
 * a do's `while (COND);` starts. */
static unsigned pp_unroll(pp_file *f, CXCursor body);

static void pp_countdown(pp_walk *w, CXCursor c, CXCursor cond, CXCursor inc, CXCursor body,
                         int depth, unsigned head_b, unsigned head_e)
{
    pp_file *f = w->f;
    enum CXCursorKind kind = pp_kind(c);
    char *ct = clang_Cursor_isNull(cond) ? NULL : pp_render_str(f, cond, 1);
    char *it = clang_Cursor_isNull(inc) ? NULL : pp_render_str(f, inc, 1);
    pp_budget_var(w->fn);
    unsigned height = 0, u = pp_units(body, &height) * pp_unroll(w->f, body);
    unsigned x = u > 1 ? ++w->fn->nlabels : 0;
    /* A for or while strip charged one unit stops at 0 (nothing in its
     * body counts down: it is innermost), which gcc tests with the flags
     * of the decrement; the others stop below 0. */
    int at0 = u == 1 && kind != CXCursor_DoStmt;
    char *dec = at0      ? pp_strdup("--lev__b > 0")
                : u == 1 ? pp_strdup("--lev__b >= 0")
                         : pp_fmt("(lev__b -= %u) >= 0", u);
    pp_buf b = {0};
    if (u > 1) {
        unsigned at = kind == CXCursor_WhileStmt || kind == CXCursor_DoStmt ? head_b : pp_begin(c);
        pp_edit_add(f, at, at, E_PRE, depth - 1, 1, pp_strdup("{\n"));
    }
    if (kind == CXCursor_ForStmt) {
        pp_edit_add(f, head_b, head_e, E_REPL, depth, 1, pp_strdup(";;"));
        pp_puts(&b, "{\n");
        pp_budget_poll(w, &b, pp_begin(body), 0);
        pp_printf(&b, "for (; %s%s%s%s; %s)\n", dec, ct ? " && (" : "", ct ? ct : "", ct ? ")" : "",
                  it ? it : "");
        /* added once the body is rendered below (it starts there) */
    } else if (kind == CXCursor_WhileStmt) {
        pp_puts(&b, "for (;;) {\n");
        pp_budget_poll(w, &b, pp_begin(body), 0);
        pp_printf(&b, "while (%s && (%s))\n", dec, ct);
        pp_edit_add(f, head_b, head_e, E_REPL, depth, 1, b.p);
    } else {
        pp_puts(&b, "for (;;) {\n");
        pp_budget_poll(w, &b, pp_begin(body), 0);
        pp_edit_add(f, head_b, head_b, E_PRE, depth, 1, b.p);
        pp_edit_add(f, head_e, pp_stmt_end(f, c), E_REPL, depth, 1,
                    pp_fmt(" while ((%s) && %s);", ct, dec));
    }
    free(dec);
    w->loops++;
    pp_stmt(w, body, depth + 1);
    w->loops--;
    /* the body with its edits applied, before the tail's edits are added */
    char *bt = NULL;
    if (u > 1) {
        /* without the edits of enclosing statements that meet the body's
         * end (the brace closing an enclosing loop's body) */
        unsigned be = pp_stmt_end(f, body), *out = NULL, nout = 0, capout = 0;
        for (unsigned i = 0; i < f->nedits; i++)
            if (f->edits[i].b == be && f->edits[i].e == be && f->edits[i].depth <= depth) {
                PP_PUSH(out, nout, capout);
                out[nout++] = i;
                f->edits[i].b = f->edits[i].e = UINT_MAX; /* out of the range, for now */
            }
        pp_buf r = {0};
        pp_puts(&r, "{\n");
        pp_render(&r, f, pp_begin(body), be, 1, 0);
        pp_puts(&r, "\n}");
        bt = r.p;
        for (unsigned i = 0; i < nout; i++)
            f->edits[out[i]].b = f->edits[out[i]].e = be;
        free(out);
    }
    if (kind == CXCursor_ForStmt)
        pp_edit_add(f, pp_begin(body), pp_begin(body), E_PRE, depth, 1, b.p);
    unsigned e = kind == CXCursor_DoStmt ? pp_stmt_end(f, c) : pp_stmt_end(f, body);
    pp_edit_add(f, e, e, E_POST, depth, 1,
                pp_fmt("\nif (lev__b %s 0)\n    break;\n}", at0 ? ">" : ">="));
    if (u > 1) {
        /* after the loop: a for or while ends where its body does (past
         * the `;` of a body ending in a compound literal) */
        pp_edit_add(f, e, e, E_POST, depth - 1, 1, pp_fmt("\nlev__x%u:;\n}", x));
        /* the body u times; the condition (after the increment) between
         * two copies, leaving the loop when it fails */
        pp_buf t = {0};
        pp_puts(&t, "{");
        for (unsigned i = 0; i < u; i++) {
            pp_printf(&t, "\n%s", bt);
            if (i + 1 == u)
                break;
            if (it)
                pp_printf(&t, "\n(void)(%s);", it);
            if (ct)
                pp_printf(&t, "\nif (!(%s))\n    goto lev__x%u;", ct, x);
        }
        pp_puts(&t, "\n}");
        pp_edit_add(f, pp_begin(body), pp_stmt_end(f, body), E_REPL, depth, 1, t.p);
        free(bt);
    }
    free(ct);
    free(it);
}

static enum CXChildVisitResult pp_unroll_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    switch (pp_kind(c)) {
    case CXCursor_LabelStmt:
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt:
    case CXCursor_BreakStmt:
    case CXCursor_ContinueStmt:
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
    case CXCursor_StmtExpr:
    case CXCursor_GCCAsmStmt:
    case CXCursor_MSAsmStmt:
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    default:
        return CXChildVisit_Recurse;
    }
}

/* How many copies of the body of an innermost loop that counts down the
 * budget to run per decrement (pp_countdown): 4 for a body of 81 to 300
 * characters, 2 for one of at most 1,000, 1 otherwise, or when it holds a
 * jump (break, continue, goto), a label, a loop (of a macro), a statement
 * expression or assembly. A body of at most 80 characters (a list walk)
 * runs once per decrement: copies of it cut its instructions (8 copies:
 * 1.06x native instead of 1.50x) but made a walk of dependent loads
 * slower in time (1.55x-1.75x native with 8 copies, 1.2x-1.4x with 2,
 * 1.05x with 1; eval/README.md). */
static unsigned pp_unroll(pp_file *f, CXCursor body)
{
    unsigned len = pp_stmt_end(f, body) - pp_begin(body);
    if (len > 1000)
        return 1;
    int bad = 0;
    if (pp_unroll_cb(body, body, &bad) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_unroll_cb, &bad);
    return bad || len <= 80 ? 1 : len <= 300 ? 4 : 2;
}

/* Whether a loop without sites can count down the budget (pp_countdown):
 * its condition and body are written in the input. */
static int pp_countdown_ok(CXCursor c, CXCursor cond, CXCursor body)
{
    return ctx.auto_poll && !pp_has_site(c) && !pp_in_macro(body) &&
           (clang_Cursor_isNull(cond) || !pp_in_macro(cond));
}

/* A while or do loop (cond, body; head_b, head_e as for pp_countdown):
 * polled every iteration, counting down the budget per iteration if it
 * holds loops, or in strips if it is innermost. */
void pp_loop(pp_walk *w, CXCursor c, CXCursor cond, CXCursor body, int depth, unsigned head_b,
             unsigned head_e)
{
    unsigned height = 0, units = pp_units(body, &height);
    if (!pp_countdown_ok(c, cond, body))
        pp_loop_body(w, c, body, depth, 0);
    else if (height)
        pp_loop_body(w, c, body, depth, units);
    else if (pp_kind(c) != CXCursor_WhileStmt ||
             !pp_bounded_strip(w, c, cond, clang_getNullCursor(), body, depth, head_b))
        pp_countdown(w, c, cond, clang_getNullCursor(), body, depth, head_b, head_e);
}

void pp_for(pp_walk *w, CXCursor c, int depth)
{
    pp_file *f = w->f;
    unsigned i = pp_tok_from(f, pp_begin(c)) + 1, semi[2] = {0, 0}, rpar = 0;
    int nsemi = 0, par = 0;
    for (; i < f->ntoks; i++) {
        if (pp_tok_is(f, i, "("))
            par++;
        else if (pp_tok_is(f, i, ")") && --par == 0) {
            rpar = f->toks[i].b;
            break;
        } else if (pp_tok_is(f, i, ";") && par == 1 && nsemi < 2)
            semi[nsemi++] = f->toks[i].b;
    }
    if (nsemi != 2 || !rpar) {
        pp_error(PP_LOC(c), "cannot find the parts of this for statement (macro in its header?)");
        return;
    }
    pp_kids k = pp_children(c);
    CXCursor init = clang_getNullCursor(), cond = init, inc = init, body = init;
    for (unsigned j = 0; j < k.n; j++) {
        unsigned b = pp_begin(k.v[j]);
        if (b < semi[0])
            init = k.v[j];
        else if (b < semi[1])
            cond = k.v[j];
        else if (b < rpar)
            inc = k.v[j];
        else
            body = k.v[j];
    }
    free(k.v);
    pp_unit iu = {0};
    if (!clang_Cursor_isNull(init)) {
        if (pp_kind(init) == CXCursor_DeclStmt) {
            pp_declstmt(w, init, depth, 1, semi[0], &iu);
        } else {
            iu.top = init;
            iu.has_top = 1;
            pp_expr(w, init, 0, &iu);
        }
        pp_unit_wrap(w, &iu, pp_begin(c), pp_stmt_end(f, c), depth);
    }
    pp_unit_free(&iu);
    pp_unit cu = {0};
    if (!clang_Cursor_isNull(cond))
        pp_expr(w, cond, 0, &cu);
    pp_unit incu = {.top = inc, .has_top = 1, .nested = 1};
    if (!clang_Cursor_isNull(inc))
        pp_expr(w, inc, 0, &incu);
    if (clang_Cursor_isNull(body)) {
        pp_unit_free(&incu);
        pp_unit_free(&cu);
        return;
    }
    if (cu.n) {
        /* from the first ';' to the second: wider than the condition and
         * than any edit inside it */
        pp_edit_add(f, semi[0], semi[1], E_REPL, depth, 1, pp_strdup(";"));
        pp_cond_break(w, &cu, cond, body, depth);
    }
    pp_unit_free(&cu);
    if (incu.n)
        pp_loop_tail(w, &incu, body, depth);
    pp_unit_free(&incu);
    char *vt = NULL, *bt = NULL;
    const char *op = NULL;
    long long s = 0;
    unsigned height = 0, units = pp_units(body, &height);
    if (!pp_countdown_ok(c, cond, body)) {
        pp_loop_body(w, c, body, depth, 0);
    } else if (height) {
        pp_loop_body(w, c, body, depth, units);
    } else if (pp_counted(cond, inc, body) && pp_sites_none(c, cond, body) &&
               pp_strip_bound(w, cond, inc, body, &vt, &bt, &op, &s)) {
        long long n = pp_trips(w, init, cond, inc, op, s);
        if (n >= 0 && n <= PP_MAX_UNITS && !pp_visit_finds(body, pp_entry_cb)) {
            free(vt);
            pp_const_loop(w, c, body, depth, n);
        } else if (pp_strippable(c, cond, body) && (*op != '!' || !pp_polls_inside(body))) {
            pp_strip_mine(w, inc, body, depth, vt, bt, op, s);
        } else {
            free(vt);
            if (!pp_bounded_strip(w, c, cond, inc, body, depth, pp_begin(c)))
                pp_countdown(w, c, cond, inc, body, depth, semi[0], rpar);
        }
        free(bt);
    } else if (clang_Cursor_isNull(inc) || !pp_sites_none(c, cond, body) ||
               !pp_bounded_strip(w, c, cond, inc, body, depth, pp_begin(c))) {
        pp_countdown(w, c, cond, inc, body, depth, semi[0], rpar);
    }
}

static enum CXChildVisitResult pp_macro_loop_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (!pp_in_macro(c))
        return CXChildVisit_Continue; /* written in the input: polled as usual */
    if (pp_is_loop(c)) {
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether statement c, written by a macro, is or holds a loop written by
 * the macro. */
int pp_macro_loop(CXCursor c) { return pp_visit_finds(c, pp_macro_loop_cb); }
