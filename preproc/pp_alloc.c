/* pp_alloc.c - allocation-type hints: the element type of memory that an
 * allocation wrapper allocates, taken from the cast or the assignment at
 * the wrapper's call site.
 *
 * An allocation is in *tail position* in function F when its result is
 * what F returns: `return ALLOC;`, or the one assignment (or initialiser,
 * outside any loop) of the local variable that every `return VAR;` of F
 * returns, when no return of F returns a call and the variable's address
 * is never taken; the allocation may stand in any form of expression that
 * passes its value on (s_passes_on: casts to void *, parentheses, arms
 * of ?:, a comma's right operand, memset's first argument...). ALLOC is malloc, calloc or
 * realloc, a call of a wrapper, or a call through a pointer returning
 * void *. A *wrapper* is a function returning a pointer with an
 * allocation in tail position (fixpoint over the call graph).
 *
 * A malloc, calloc or realloc in tail position whose element type levpp
 * cannot infer becomes lev_malloc_hinted (lev_calloc_hinted,
 * lev_realloc_hinted), which take the runtime's hint; so does malloc
 * taken as a value (a hook `{ malloc, free, realloc }`). Every call of a
 * wrapper and every call through a pointer returning void * that is not
 * in tail position sets the hint around the call: to T when its result is
 * cast or assigned to a T *, else to none, so that an allocation inside
 * it never takes the hint of an enclosing call. A call in tail position
 * leaves the hint of its caller's caller in place. Only calls that cannot
 * reach a safe point get a hint (a checkpointable callee, or a call
 * through a pointer with a checkpointable candidate, gets none and
 * allocates untyped), so the hint never lives across a safe point.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

static int *s_wrapper;   /* [fn]: 1 if a wrapper */
static CXCursor *s_rvar; /* [fn]: the returned variable, or null */
static unsigned s_hints;

static int s_fn_of(CXCursor fndecl)
{
    if (pp_kind(fndecl) != CXCursor_FunctionDecl)
        return -1;
    char *usr = pp_fn_usr(fndecl);
    int i = pp_fn_find(usr);
    free(usr);
    return i;
}

/* Whether function i is defined in the inputs and returns a pointer. */
static int s_ret_ptr(int i)
{
    return i >= 0 && ctx.fns[i].file >= 0 &&
           clang_getCanonicalType(clang_getCursorResultType(ctx.fns[i].def)).kind == CXType_Pointer;
}

static int s_is_loop(CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    return k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt;
}

static int s_void_ptr(CXType t)
{
    t = clang_getCanonicalType(t);
    return t.kind == CXType_Pointer &&
           clang_getCanonicalType(clang_getPointeeType(t)).kind == CXType_Void;
}

/* The C library's functions that return their first argument. */
static const char *const s_return_first[] = {"memset", "memcpy",  "memmove",
                                             "strcpy", "strncpy", NULL};

/* Whether call p is one of s_return_first with kid its first argument. */
static int s_returns_arg(CXCursor p, CXCursor kid)
{
    CXCursor ref = clang_getCursorReferenced(p);
    if (pp_kind(ref) != CXCursor_FunctionDecl)
        return 0;
    pp_kids kk = pp_children(p); /* the callee, then the arguments */
    int first = kk.n >= 2 && clang_equalCursors(kk.v[1], kid);
    free(kk.v);
    if (!first)
        return 0;
    int g = s_fn_of(ref);
    if (g >= 0 && ctx.fns[g].file >= 0)
        return 0; /* the program's own */
    char *name = pp_cxstring(clang_getCursorSpelling(ref));
    int r = 0;
    for (int i = 0; s_return_first[i] && !r; i++)
        r = !strcmp(name, s_return_first[i]);
    free(name);
    return r;
}

/* Whether ancestor p passes on, unchanged, the value of its operand kid
 * (the child on the path down to an allocation), so that the allocation's
 * result is p's value: parentheses and implicit conversions, GNU `?:`
 * (either operand is its value), an arm of `?:` (not its condition), the
 * right operand of a comma, the last statement of a statement expression
 * (up: p's own parent), the first argument of memset, memcpy, memmove,
 * strcpy and strncpy, and with void_casts a cast to void *. */
static int s_passes_on(CXCursor p, CXCursor kid, CXCursor up, int void_casts)
{
    enum CXCursorKind k = pp_kind(p);
    if (k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr || k == CXCursor_StmtExpr)
        return 1;
    if (k == CXCursor_CallExpr)
        return s_returns_arg(p, kid);
    if (k == CXCursor_CStyleCastExpr)
        return void_casts && s_void_ptr(clang_getCursorType(p));
    int r = 0;
    if (k == CXCursor_ConditionalOperator ||
        (k == CXCursor_BinaryOperator &&
         clang_getCursorBinaryOperatorKind(p) == CXBinaryOperator_Comma) ||
        (k == CXCursor_CompoundStmt && pp_kind(up) == CXCursor_StmtExpr)) {
        pp_kids kk = pp_children(p);
        if (k == CXCursor_ConditionalOperator)
            r = kk.n == 3 && !clang_equalCursors(kk.v[0], kid);
        else /* the last operand or statement */
            r = kk.n && clang_equalCursors(kk.v[kk.n - 1], kid);
        free(kk.v);
    }
    return r;
}

/* The first ancestor of expression c (parents innermost last) that does
 * not pass c's value on (s_passes_on): its index, or -1. */
static int s_value_user(CXCursor c, CXCursor *parents, int np, int void_casts)
{
    int i = np - 1;
    for (CXCursor kid = c; i >= 0; kid = parents[i--])
        if (!s_passes_on(parents[i], kid, i > 0 ? parents[i - 1] : clang_getNullCursor(),
                         void_casts))
            break;
    return i;
}

/* The type an allocation c receives from the cast, initialised variable
 * or assignment that takes its value (through the forms that pass it on:
 * parentheses, `?:` arms, a comma's right operand...); 0 if none does. */
int pp_alloc_dest(CXCursor c, CXCursor *parents, int np, CXType *dest)
{
    int i = s_value_user(c, parents, np, 0);
    if (i < 0)
        return 0;
    CXCursor p = parents[i];
    enum CXCursorKind k = pp_kind(p);
    if (k == CXCursor_CStyleCastExpr || k == CXCursor_VarDecl) {
        *dest = clang_getCursorType(p);
        return 1;
    }
    if (k == CXCursor_BinaryOperator &&
        clang_getCursorBinaryOperatorKind(p) == CXBinaryOperator_Assign) {
        pp_kids kk = pp_children(p);
        *dest = clang_getCursorType(kk.v[0]);
        free(kk.v);
        return 1;
    }
    return 0;
}

static int s_refers_to(CXCursor e, CXCursor var)
{
    e = pp_strip(e);
    return pp_kind(e) == CXCursor_DeclRefExpr &&
           clang_equalCursors(clang_getCursorReferenced(e), var);
}

/* What one walk over a function's body finds. */
typedef struct s_scan {
    CXCursor var; /* the variable of `return VAR;`, or null */
    int bad;      /* no returned variable */
    int assigns;  /* assignments and initialisers of var */
    int in_loop;  /* one of them is inside a loop */
} s_scan;

static void s_scan_returns(CXCursor c, s_scan *s)
{
    if (pp_kind(c) == CXCursor_ReturnStmt) {
        pp_kids k = pp_children(c);
        if (k.n == 1) {
            CXCursor e = pp_strip(k.v[0]);
            while (pp_kind(e) == CXCursor_CStyleCastExpr) {
                pp_kids kk = pp_children(e);
                e = kk.n ? pp_strip(kk.v[kk.n - 1]) : e;
                free(kk.v);
                if (!kk.n)
                    break;
            }
            if (pp_kind(e) == CXCursor_CallExpr) {
                s->bad = 1;
            } else if (pp_kind(e) == CXCursor_DeclRefExpr) {
                CXCursor v = clang_getCursorReferenced(e);
                if (pp_kind(v) != CXCursor_VarDecl ||
                    clang_Cursor_getStorageClass(v) == CX_SC_Static ||
                    pp_kind(clang_getCursorSemanticParent(v)) != CXCursor_FunctionDecl)
                    s->bad = 1;
                else if (clang_Cursor_isNull(s->var))
                    s->var = v;
                else if (!clang_equalCursors(s->var, v))
                    s->bad = 1;
            }
        }
        free(k.v);
    }
    pp_kids k = pp_children(c);
    for (unsigned i = 0; i < k.n; i++)
        s_scan_returns(k.v[i], s);
    free(k.v);
}

static void s_scan_uses(CXCursor c, s_scan *s, int loop)
{
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_VarDecl && clang_equalCursors(c, s->var) &&
        !clang_Cursor_isNull(clang_Cursor_getVarDeclInitializer(c))) {
        s->assigns++;
        s->in_loop |= loop;
    }
    if (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator ||
        k == CXCursor_UnaryOperator) {
        pp_kids kk = pp_children(c);
        if (kk.n >= 1 && s_refers_to(kk.v[0], s->var)) {
            if (k == CXCursor_BinaryOperator &&
                clang_getCursorBinaryOperatorKind(c) == CXBinaryOperator_Assign) {
                s->assigns++;
                s->in_loop |= loop;
            } else if (k == CXCursor_CompoundAssignOperator) {
                s->bad = 1; /* += */
            } else if (k == CXCursor_UnaryOperator) {
                enum CXUnaryOperatorKind u = clang_getCursorUnaryOperatorKind(c);
                s->bad |= u == CXUnaryOperator_AddrOf || u == CXUnaryOperator_PostInc ||
                          u == CXUnaryOperator_PostDec || u == CXUnaryOperator_PreInc ||
                          u == CXUnaryOperator_PreDec;
            }
        }
        free(kk.v);
    }
    pp_kids kk = pp_children(c);
    for (unsigned i = 0; i < kk.n; i++)
        s_scan_uses(kk.v[i], s, loop || s_is_loop(c));
    free(kk.v);
}

/* Whether call c (under parents) is in tail position in its function:
 * its value is what a `return` returns, or what the returned variable is
 * assigned, through the forms that pass it on (s_passes_on). */
int pp_alloc_tail(CXCursor c, CXCursor *parents, int np)
{
    if (!s_rvar || np < 1)
        return 0;
    int g = s_fn_of(parents[0]);
    if (!s_ret_ptr(g))
        return 0;
    int at = s_value_user(c, parents, np, 1);
    if (at < 0)
        return 0;
    CXCursor p = parents[at];
    enum CXCursorKind k = pp_kind(p);
    if (k == CXCursor_ReturnStmt)
        return 1;
    CXCursor v = s_rvar[g];
    if (clang_Cursor_isNull(v))
        return 0;
    if (k == CXCursor_VarDecl)
        return clang_equalCursors(p, v);
    if (k == CXCursor_BinaryOperator &&
        clang_getCursorBinaryOperatorKind(p) == CXBinaryOperator_Assign) {
        pp_kids kk = pp_children(p);
        int r = kk.n == 2 && s_refers_to(kk.v[0], v);
        free(kk.v);
        return r;
    }
    return 0;
}

/* Whether c is a call that may allocate: *g the wrapper it calls, or -1
 * for a call through a pointer returning void *. 0: not one. */
static int s_alloc_call(CXCursor c, int *g)
{
    CXCursor ref = clang_getCursorReferenced(c);
    *g = -1;
    if (pp_kind(ref) == CXCursor_FunctionDecl) {
        int i = s_fn_of(ref);
        if (i < 0 || ctx.fns[i].file < 0)
            return 0;
        *g = i;
        return 1;
    }
    return s_void_ptr(clang_getCursorType(c));
}

static const char *const s_heap[] = {"malloc", "calloc", "realloc", NULL};

/* Whether function fn has an allocation in tail position (with the
 * wrappers known so far). */
static int s_has_tail_alloc(CXCursor c, CXCursor **parents, int *np, int *cap)
{
    if (pp_kind(c) == CXCursor_CallExpr && pp_alloc_tail(c, *parents, *np)) {
        CXCursor ref = clang_getCursorReferenced(c);
        int g;
        int h = pp_kind(ref) == CXCursor_FunctionDecl ? s_fn_of(ref) : -2;
        if (h == -1 || (h >= 0 && ctx.fns[h].file < 0)) {
            char *name = pp_cxstring(clang_getCursorSpelling(ref));
            int heap = 0;
            for (int i = 0; s_heap[i]; i++)
                heap |= !strcmp(name, s_heap[i]);
            free(name);
            if (heap)
                return 1;
        } else if (s_alloc_call(c, &g) && (g < 0 || s_wrapper[g])) {
            return 1;
        }
    }
    PP_PUSH(*parents, *np, *cap);
    (*parents)[(*np)++] = c;
    pp_kids k = pp_children(c);
    int r = 0;
    for (unsigned i = 0; i < k.n && !r; i++)
        r = s_has_tail_alloc(k.v[i], parents, np, cap);
    free(k.v);
    (*np)--;
    return r;
}

/* Pass (before the common pass): returned variables and wrappers. */
void pp_alloc_prepare(void)
{
    s_wrapper = pp_xrealloc(NULL, sizeof(int) * (ctx.nfns + 1));
    s_rvar = pp_xrealloc(NULL, sizeof(CXCursor) * (ctx.nfns + 1));
    for (unsigned i = 0; i < ctx.nfns; i++) {
        s_wrapper[i] = 0;
        s_rvar[i] = clang_getNullCursor();
        pp_fn *fn = &ctx.fns[i];
        if (!s_ret_ptr((int)i))
            continue;
        s_scan s = {clang_getNullCursor(), 0, 0, 0};
        s_scan_returns(fn->def, &s);
        if (s.bad || clang_Cursor_isNull(s.var))
            continue;
        s_scan_uses(fn->def, &s, 0);
        if (!s.bad && s.assigns == 1 && !s.in_loop)
            s_rvar[i] = s.var;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (unsigned i = 0; i < ctx.nfns; i++) {
            pp_fn *fn = &ctx.fns[i];
            if (s_wrapper[i] || !s_ret_ptr((int)i))
                continue;
            CXCursor *parents = NULL;
            int np = 0, cap = 0;
            pp_kids k = pp_children(fn->def);
            PP_PUSH(parents, np, cap);
            parents[np++] = fn->def;
            for (unsigned j = 0; j < k.n && !s_wrapper[i]; j++)
                s_wrapper[i] = s_has_tail_alloc(k.v[j], &parents, &np, &cap);
            free(k.v);
            free(parents);
            changed |= s_wrapper[i];
        }
    }
}

/* The runtime function that takes the place of `name` (malloc, calloc,
 * realloc) where the hint types it, or NULL. */
const char *pp_alloc_hinted_name(const char *name)
{
    if (!strcmp(name, "malloc"))
        return "lev_malloc_hinted";
    if (!strcmp(name, "calloc"))
        return "lev_calloc_hinted";
    if (!strcmp(name, "realloc"))
        return "lev_realloc_hinted";
    return NULL;
}

/* The element type the cast or assignment around call c gives, or NULL
 * (quiet: types levpp may fail to describe give none). */
static const char *s_dest(CXCursor c, CXCursor *parents, int np, int quiet)
{
    CXType dest;
    if (!pp_alloc_dest(c, parents, np, &dest) ||
        clang_getCanonicalType(dest).kind != CXType_Pointer)
        return NULL;
    CXType pt = clang_getCanonicalType(clang_getPointeeType(clang_getCanonicalType(dest)));
    if (pt.kind == CXType_Void || pt.kind == CXType_FunctionProto ||
        pt.kind == CXType_FunctionNoProto)
        return NULL;
    if (quiet &&
        (clang_Type_getSizeOf(pt) <= 0 ||
         (pt.kind == CXType_Record && clang_Cursor_isAnonymous(clang_getTypeDeclaration(pt)))))
        return NULL;
    CXType sp = clang_getPointeeType(pp_desugar(dest));
    if (sp.kind == CXType_Invalid)
        sp = pt;
    const char *id;
    char *size;
    long long mult;
    if (pp_elem(sp, c, &id, &size, &mult))
        return NULL;
    free(size);
    return mult == 1 ? id : NULL;
}

typedef struct s_sizeofs {
    unsigned magic; /* PP_MAGIC_SIZEOFS */
    pp_file *f;
    const char *id; /* the element type the sizeofs name, so far */
    int n, mixed;
} s_sizeofs;

static enum CXChildVisitResult s_sizeof_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    s_sizeofs *ss = pp_visit_state(d, PP_MAGIC_SIZEOFS);
    if (pp_kind(c) == CXCursor_CallExpr)
        return CXChildVisit_Continue; /* a size computed by another call */
    if (pp_kind(c) != CXCursor_UnaryExpr)
        return CXChildVisit_Recurse;
    CXType t;
    const char *special = NULL, *id = NULL;
    char *size = NULL;
    long long mult = 0;
    if (pp_sizeof_type(ss->f, c, &t, &special))
        return CXChildVisit_Continue; /* _Alignof and the like */
    if (special)
        id = special;
    else if (clang_getCanonicalType(t).kind == CXType_Record &&
             clang_Cursor_isAnonymous(clang_getTypeDeclaration(clang_getCanonicalType(t))))
        id = NULL;
    else if (pp_elem(t, c, &id, &size, &mult) || mult != 1)
        id = NULL;
    free(size);
    if (!id || (ss->id && strcmp(ss->id, id)))
        ss->mixed = 1;
    ss->id = id;
    ss->n++;
    return CXChildVisit_Continue;
}

/* The element type that the sizeofs in the arguments of call c name, when
 * they all name one (`wrap(sizeof(T), ctx)`, `wrap(n * sizeof(T))`), or
 * NULL: what the memory is for when the result goes to a void *. */
static const char *s_sizeof_hint(pp_file *f, CXCursor c)
{
    s_sizeofs ss = {.magic = PP_MAGIC_SIZEOFS, .f = f};
    int n = clang_Cursor_getNumArguments(c);
    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
        if (s_sizeof_cb(a, c, &ss) == CXChildVisit_Recurse)
            clang_visitChildren(a, s_sizeof_cb, &ss);
    }
    return ss.n && !ss.mixed ? ss.id : NULL;
}

/* Whether the expression of call c starts (at cb) with a local variable
 * or parameter, which levpp renames in checkpointable functions. */
static int s_first_is_local(CXCursor c, unsigned cb)
{
    if (pp_kind(c) == CXCursor_DeclRefExpr && pp_begin(c) == cb) {
        CXCursor v = clang_getCursorReferenced(c);
        return pp_kind(v) == CXCursor_ParmDecl ||
               (pp_kind(v) == CXCursor_VarDecl &&
                pp_kind(clang_getCursorSemanticParent(v)) == CXCursor_FunctionDecl);
    }
    pp_kids k = pp_children(c);
    int r = 0;
    for (unsigned i = 0; i < k.n && !r; i++)
        if (pp_begin(k.v[i]) == cb)
            r = s_first_is_local(k.v[i], cb);
    free(k.v);
    return r;
}

/* A call of a function or pointer in the inputs (pp_common): sets the
 * hint around it when it may allocate (see above). */
void pp_alloc_call(pp_file *f, CXCursor c, CXCursor *parents, int np)
{
    int g;
    if (!s_wrapper || !s_alloc_call(c, &g) || (g >= 0 && !s_wrapper[g]))
        return;
    if (pp_in_macro(c) || (g >= 0 ? ctx.fns[g].cp : pp_icall_cp(c)))
        return;
    if (pp_alloc_tail(c, parents, np))
        return; /* the hint of the caller's caller */
    /* The first token (the function's name, or the start of the pointer's
     * expression) and the closing parenthesis are replaced, so that the
     * edits survive where levpp copies an operand without the insertions
     * at its ends. A local of a checkpointable function may be renamed
     * there: such a call gets no hint unless a cast opens before it. */
    unsigned cb = pp_begin(c), ce = pp_end(c), t0 = pp_tok_from(f, cb), t1 = pp_tok_from(f, ce);
    if (t0 >= f->ntoks || f->toks[t0].b != cb || t1 == 0 || !pp_tok_is(f, t1 - 1, ")") ||
        f->toks[t1 - 1].e != ce || t1 - 1 <= t0)
        return;
    int in = np >= 1 ? s_fn_of(parents[0]) : -1;
    if (g < 0 && in >= 0 && ctx.fns[in].cp && s_first_is_local(c, cb)) {
        /* `(T *)p->alloc(n)`: the cast's parenthesis opens it instead */
        int at = np - 1;
        while (at > 0 && (pp_kind(parents[at]) == CXCursor_UnexposedExpr ||
                          pp_kind(parents[at]) == CXCursor_ParenExpr))
            at--;
        if (at < 1 || pp_kind(parents[at]) != CXCursor_CStyleCastExpr ||
            pp_end(parents[at]) != ce || pp_in_macro(parents[at]))
            return;
        t0 = pp_tok_from(f, pp_begin(parents[at]));
        if (t0 >= f->ntoks || !pp_tok_is(f, t0, "("))
            return;
    }
    const char *id = s_dest(c, parents, np, g < 0);
    CXType dest;
    int typed = pp_alloc_dest(c, parents, np, &dest) &&
                clang_getCanonicalType(dest).kind == CXType_Pointer &&
                clang_getCanonicalType(clang_getPointeeType(clang_getCanonicalType(dest))).kind !=
                    CXType_Void;
    if (!id && !typed) /* into a void *, or no destination: what the sizeofs name */
        id = s_sizeof_hint(f, c);
    unsigned k = s_hints++;
    unsigned b0 = f->toks[t0].b, e0 = f->toks[t0].e;
    pp_edit_add(f, b0, e0, E_REPL, 0, 0,
                pp_fmt("({ lev_alloc_hint lev__hh%u = lev_hint_set(lev__module(), %s); "
                       "__auto_type lev__hr%u = %.*s",
                       k, id ? id : "LEV_HINT_NONE", k, (int)(e0 - b0), f->text + b0));
    pp_edit_add(f, f->toks[t1 - 1].b, ce, E_REPL, 0, 0,
                pp_fmt("); lev_hint_restore(lev__hh%u); lev__hr%u; })", k, k));
}

/* malloc, calloc, realloc and free taken as values (allocator hooks)
 * become functions of the module, so that a capture encodes pointers to
 * them like any function of the inputs: lev__malloc... */
static const char *const s_hooks[][4] = {
    {"malloc", "lev__malloc", "void *lev__malloc(size_t n)", "return lev_malloc_hinted(n);"},
    {"calloc", "lev__calloc", "void *lev__calloc(size_t n, size_t s)",
     "return lev_calloc_hinted(n, s);"},
    {"realloc", "lev__realloc", "void *lev__realloc(void *p, size_t n)",
     "return lev_realloc_hinted(p, n);"},
    {"free", "lev__free", "void lev__free(void *p)", "lev_free(p);"}};
static int s_hook_used[4];

const char *pp_alloc_value(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, s_hooks[i][0])) {
            s_hook_used[i] = 1;
            return s_hooks[i][1];
        }
    return NULL;
}

/* After the common pass: the hooks used, as functions of the first input. */
void pp_alloc_register(void)
{
    for (int i = 0; i < 4; i++) {
        if (!s_hook_used[i])
            continue;
        PP_PUSH(ctx.fns, ctx.nfns, ctx.capfns);
        pp_fn *fn = &ctx.fns[ctx.nfns++];
        memset(fn, 0, sizeof *fn);
        fn->usr = pp_fmt("levpp:%s", s_hooks[i][1]);
        fn->name = pp_strdup(s_hooks[i][1]);
        fn->cname = pp_strdup(s_hooks[i][1]);
        fn->idname = pp_fmt("LEV__FN_%s", s_hooks[i][1]);
        fn->file = 0;
        fn->addr_taken = 1; /* what hooks hold: its row keeps its address */
        fn->def = clang_getNullCursor();
        fn->body_c = clang_getNullCursor();
    }
}

/* Their definitions in input fi's output (declarations in the others). */
void pp_alloc_prelude(pp_buf *o, unsigned fi)
{
    int multi = ctx.nfiles > 1;
    for (int i = 0; i < 4; i++) {
        if (!s_hook_used[i])
            continue;
        pp_printf(o, "%s%s", !multi ? "static " : "PP_HIDDEN ", s_hooks[i][2]);
        if (fi)
            pp_puts(o, ";");
        else
            pp_printf(o, "\n{\n    %s\n}", s_hooks[i][3]);
        pp_puts(o, "\n");
    }
}

/* malloc, calloc, realloc or free taken as a value inside a macro: renamed
 * where the name is spelled, if that is in input f (the body of a macro
 * defined there, `#define internal_malloc malloc`), once however often
 * the macro is expanded. 0: done. */
int pp_alloc_value_in_macro(pp_file *f, CXCursor c, const char *name)
{
    return pp_rename_spelled(f, c, name, pp_alloc_value(name));
}
