/* pp_values.c - the values an integer expression may take, when they are
 * few and known before the program runs: a constant; a local or parameter
 * that nothing writes after it is given its value (its initialiser's
 * values; a parameter of a function with internal linkage whose address
 * is not taken, the values every call of it passes); and +, -, *, &, |,
 * ^, shifts and ?: of such expressions. The integer-pointer analysis
 * (pp_intptr.c) asks it whether a mask or a modulus computed at run time
 * (`(size_t)p & (align - 1)` with every call passing `align` 4 or 8) keeps
 * only the bits of an address that a move keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* [fn][i]: the values the calls of fn pass its parameter i. */
static pp_vals **s_args;
static unsigned *s_nargs;

/* Adds v to *s; a set grown past PP_VALS_MAX is no longer known. */
static void s_add(pp_vals *s, unsigned long long v)
{
    for (unsigned i = 0; i < s->n; i++)
        if (s->v[i] == v)
            return;
    if (s->n == PP_VALS_MAX)
        s->known = 0;
    else
        s->v[s->n++] = v;
}

/* The value of integer constant expression e in *v; 0: e is none. */
int pp_const_value(CXCursor e, unsigned long long *v)
{
    CXEvalResult ev = clang_Cursor_Evaluate(e);
    int ok = ev && clang_EvalResult_getKind(ev) == CXEval_Int;
    if (ok)
        *v = (unsigned long long)clang_EvalResult_getAsLongLong(ev);
    if (ev)
        clang_EvalResult_dispose(ev);
    return ok;
}

static enum CXChildVisitResult s_calls_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    (void)d;
    int g = pp_kind(c) == CXCursor_CallExpr ? pp_fn_called(c) : -1;
    if (g < 0)
        return CXChildVisit_Recurse;
    unsigned na = (unsigned)clang_Cursor_getNumArguments(c);
    for (unsigned i = 0; i < s_nargs[g]; i++) {
        unsigned long long v;
        if (i < na && pp_const_value(clang_Cursor_getArgument(c, i), &v))
            s_add(&s_args[g][i], v);
        else
            s_args[g][i].known = 0;
    }
    return CXChildVisit_Recurse;
}

void pp_values_prepare(void)
{
    s_nargs = pp_xrealloc(NULL, (ctx.nfns + 1) * sizeof *s_nargs);
    s_args = pp_xrealloc(NULL, (ctx.nfns + 1) * sizeof *s_args);
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        int def = fn->file >= 0 && !clang_Cursor_isNull(fn->def);
        int na = def ? clang_Cursor_getNumArguments(fn->def) : 0;
        s_nargs[i] = na > 0 ? (unsigned)na : 0;
        s_args[i] = pp_xrealloc(NULL, (s_nargs[i] + 1) * sizeof **s_args);
        /* every call of it is in the inputs: none through a pointer, none
         * from another file */
        int closed = def && !fn->addr_taken && !fn->is_task && !fn->is_main &&
                     clang_getCursorLinkage(fn->def) == CXLinkage_Internal;
        for (unsigned j = 0; j < s_nargs[i]; j++)
            s_args[i][j] = (pp_vals){.known = closed};
    }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].file >= 0 && !clang_Cursor_isNull(ctx.fns[i].def))
            clang_visitChildren(ctx.fns[i].def, s_calls_cb, NULL);
}

void pp_values_free(void)
{
    for (unsigned i = 0; s_args && i < ctx.nfns; i++)
        free(s_args[i]);
    free(s_args);
    free(s_nargs);
    s_args = NULL;
    s_nargs = NULL;
}

typedef struct s_write_scan {
    CXCursor var;
    int written;
} s_write_scan;

static enum CXChildVisitResult s_write_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    s_write_scan *ws = d;
    if (!pp_writes_operand(c))
        return CXChildVisit_Recurse;
    pp_kids kk = pp_children(c);
    CXCursor t = kk.n ? pp_strip(kk.v[0]) : clang_getNullCursor();
    free(kk.v);
    if (pp_kind(t) == CXCursor_DeclRefExpr &&
        clang_equalCursors(clang_getCursorReferenced(t), ws->var)) {
        ws->written = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether the body of function def writes var (or takes its address). */
static int s_written(CXCursor def, CXCursor var)
{
    s_write_scan ws = {var, 0};
    clang_visitChildren(def, s_write_cb, &ws);
    return ws.written;
}

static int s_values(int fi, CXCursor e, pp_vals *out, int depth)
{
    *out = (pp_vals){.known = 0};
    unsigned long long c;
    if (pp_const_value(e, &c)) {
        *out = (pp_vals){.known = 1, .n = 1, .v = {c}};
        return 1;
    }
    if (depth > 8 || fi < 0)
        return 0;
    e = pp_strip(e);
    enum CXCursorKind k = pp_kind(e);
    pp_kids kk = pp_children(e);
    if (k == CXCursor_DeclRefExpr) {
        CXCursor d = clang_getCursorReferenced(e), def = ctx.fns[fi].def;
        enum CXCursorKind dk = pp_kind(d);
        if ((dk == CXCursor_ParmDecl || dk == CXCursor_VarDecl) &&
            clang_equalCursors(clang_getCursorSemanticParent(d), def) && !s_written(def, d)) {
            if (dk == CXCursor_ParmDecl) {
                for (unsigned i = 0; s_args && i < s_nargs[fi]; i++)
                    if (clang_equalCursors(clang_Cursor_getArgument(def, i), d))
                        *out = s_args[fi][i];
            } else if (clang_Cursor_getStorageClass(d) != CX_SC_Static) {
                CXCursor init = clang_Cursor_getVarDeclInitializer(d);
                if (!clang_Cursor_isNull(init))
                    s_values(fi, init, out, depth + 1);
            }
        }
    } else if (k == CXCursor_BinaryOperator && kk.n == 2) {
        pp_vals x, y;
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
        if (s_values(fi, kk.v[0], &x, depth + 1) && s_values(fi, kk.v[1], &y, depth + 1)) {
            out->known = 1;
            for (unsigned i = 0; i < x.n && out->known; i++)
                for (unsigned j = 0; j < y.n && out->known; j++) {
                    unsigned long long a = x.v[i], b = y.v[j];
                    switch (op) {
                    case CXBinaryOperator_Add:
                        s_add(out, a + b);
                        break;
                    case CXBinaryOperator_Sub:
                        s_add(out, a - b);
                        break;
                    case CXBinaryOperator_Mul:
                        s_add(out, a * b);
                        break;
                    case CXBinaryOperator_And:
                        s_add(out, a & b);
                        break;
                    case CXBinaryOperator_Or:
                        s_add(out, a | b);
                        break;
                    case CXBinaryOperator_Xor:
                        s_add(out, a ^ b);
                        break;
                    case CXBinaryOperator_Shl:
                        out->known = b < 64;
                        s_add(out, out->known ? a << b : 0);
                        break;
                    case CXBinaryOperator_Shr:
                        out->known = b < 64;
                        s_add(out, out->known ? a >> b : 0);
                        break;
                    default:
                        out->known = 0;
                        break;
                    }
                }
        }
    } else if (k == CXCursor_CStyleCastExpr && kk.n) {
        s_values(fi, kk.v[kk.n - 1], out, depth + 1);
    } else if (k == CXCursor_ConditionalOperator && kk.n == 3) {
        pp_vals x, y;
        if (s_values(fi, kk.v[1], &x, depth + 1) && s_values(fi, kk.v[2], &y, depth + 1)) {
            *out = x;
            for (unsigned j = 0; j < y.n && out->known; j++)
                s_add(out, y.v[j]);
        }
    }
    free(kk.v);
    if (!out->known)
        out->n = 0;
    return out->known;
}

int pp_values(int fi, CXCursor e, pp_vals *out) { return s_values(fi, e, out, 0); }
