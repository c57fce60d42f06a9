/* levpp.c - the Leverage pre-processor. Reads task sources with libclang,
 * finds every function that may reach a safe point (call graph over all
 * inputs), and writes each input again: the user's text as written, plus a
 * frame struct and a resumable body for each checkpointable function and
 * the module's descriptors (see preproc/README.md for the output shape).
 */
#define _GNU_SOURCE
#include <clang-c/CXCompilationDatabase.h>
#include <clang-c/Index.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LEVPP_RESOURCE_DIR
#define LEVPP_RESOURCE_DIR ""
#endif

void pp_error_noloc(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pp_frame_type(int fi);

/* ===================================================================
 * Small helpers: memory, strings, growable buffers
 * =================================================================== */

static void *pp_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        pp_error_noloc(NULL, "out of memory");
        exit(1);
    }
    return p;
}

static char *pp_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(pp_xrealloc(NULL, n), s, n);
}

#define PP_PUSH(arr, n, cap)                                                                       \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 8;                                                           \
            (arr) = pp_xrealloc((arr), (size_t)(cap) * sizeof *(arr));                             \
        }                                                                                          \
    } while (0)

typedef struct pp_buf {
    char *p;
    size_t n, cap;
} pp_buf;

static void pp_putn(pp_buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        while (b->n + n + 1 > b->cap)
            b->cap = b->cap ? b->cap * 2 : 256;
        b->p = pp_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void pp_puts(pp_buf *b, const char *s) { pp_putn(b, s, strlen(s)); }

static void pp_vprintf(pp_buf *b, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *tmp = pp_xrealloc(NULL, (size_t)n + 1);
    vsnprintf(tmp, (size_t)n + 1, fmt, ap);
    pp_putn(b, tmp, (size_t)n);
    free(tmp);
}

static void __attribute__((format(printf, 2, 3))) pp_printf(pp_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pp_vprintf(b, fmt, ap);
    va_end(ap);
}

static char *__attribute__((format(printf, 1, 2))) pp_fmt(const char *fmt, ...)
{
    pp_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    pp_vprintf(&b, fmt, ap);
    va_end(ap);
    if (!b.p)
        return pp_strdup("");
    return b.p;
}

/* Copies a CXString and disposes it. */
static char *pp_cx(CXString s)
{
    const char *c = clang_getCString(s);
    char *r = pp_strdup(c ? c : "");
    clang_disposeString(s);
    return r;
}

static unsigned pp_lines_in(const pp_buf *b)
{
    unsigned n = 1;
    for (size_t i = 0; i < b->n; i++)
        n += b->p[i] == '\n';
    return n;
}

/* ===================================================================
 * State
 * =================================================================== */

enum { E_POST = 0, E_PRE = 1, E_REPL = 2 };

typedef struct pp_edit {
    unsigned b, e; /* replaced byte range of the input; b == e: insertion */
    int cls;       /* E_* */
    int depth;     /* statement nesting, orders insertions at one offset */
    int run;       /* only in the resumable copy of a body */
    unsigned seq;
    char *text;
} pp_edit;

typedef struct pp_tok {
    unsigned b, e;
} pp_tok;

typedef struct pp_file {
    const char *path;
    char *text;
    unsigned len;
    CXTranslationUnit tu;
    CXFile cxf;
    unsigned *lines; /* offset of each line start */
    unsigned nlines;
    pp_tok *toks;
    unsigned ntoks;
    pp_edit *edits;
    unsigned nedits, capedits;
    unsigned insert_at; /* where the generated declarations go */
    pp_buf lits;        /* hoisted string literals */
    int uses_std[3];    /* stdin, stdout, stderr */
    int uses_libc[2];   /* rand family, strtok: rewritten onto travelling statics */
    int *xcallees;      /* checkpointable functions of other inputs called here */
    unsigned nx, capx;
    char *outname, *stem;
} pp_file;

/* A variable-length array kept on the VT heap (PP_VLA_ARRAY), or a
 * pointer to an array whose outermost dimension is variable
 * (PP_VLA_POINTER): its dimensions from the outermost down to the last
 * variable one (cdim[i] < 0: variable, in frame field lev__dI_FIELD; else
 * that constant), the size expression written for each, and the element
 * type below them. */
enum { PP_VLA_ARRAY = 1, PP_VLA_POINTER = 2 };
#define PP_VLA_MAX 8

typedef struct pp_vla {
    int kind; /* 0: not variably modified; PP_VLA_* */
    unsigned ndims;
    long long cdim[PP_VLA_MAX];
    CXCursor size[PP_VLA_MAX];
    CXType elem;
} pp_vla;

typedef struct pp_var {
    char *field; /* name in the frame: x, x__1, t.arg... */
    CXCursor decl;
    CXType type;
    int reg; /* kept in a C local of the resumable body (lev__v_FIELD) */
    unsigned refs; /* references in the body */
    unsigned scope_b, scope_e; /* where it is in scope: declaration to end of block */
    pp_vla vla;
} pp_var;

typedef struct pp_slot {
    unsigned k;
    CXType type;
} pp_slot;

typedef struct pp_fn {
    char *name, *usr;
    char *cname; /* unique among the inputs: NAME or NAME__FILE */
    int file;    /* index of the defining input, -1: not defined in the inputs */
    CXCursor def;
    int is_task, is_main, has_ckpt, has_loop, reach, cp;
    int addr_taken;  /* its address is taken somewhere: a candidate of indirect calls */
    char **itypes;   /* types (pp_fn_key) of the functions it calls through pointers */
    unsigned nitypes, capitypes;
    int *callees;
    unsigned ncallees, capcallees;
    char *idname; /* LEV__FN_name */
    CXType ret;
    int ret_void;
    pp_var *vars;
    unsigned nvars, capvars;
    pp_slot *slots;
    unsigned nslots, capslots;
    pp_slot *tmps; /* temporaries of lowered operators: lev__tK */
    unsigned ntmps, captmps;
    unsigned nlabels; /* lev__contK labels */
    unsigned npc;
    unsigned *site_at; /* [k]: offset of safe point or call site k (pp_site_new) */
    unsigned capsites;
    const char *pcf; /* the frame's pc: fr->h.pc, fr->t.h.pc, fr->m.h.pc */
    int lazy;        /* runs without a frame until it unwinds (pp_lazy) */
    CXCursor body_c; /* the body statement (pp_walk_fn) */
    pp_buf body;    /* the resumable body */
    unsigned nparams; /* vars[0, nparams) are the parameters */
    pp_buf counters; /* declarations of the strip counters (pp_strip_mine) */
} pp_fn;

typedef struct pp_type {
    char *key;    /* canonical spelling, or "frame NAME" */
    char *spell;  /* how generated code names it */
    char *idname; /* LEV__T_... */
    CXType type;
    int fn;    /* frame of fns[fn], or -1 */
    int owner; /* the input whose output describes it */
    CXCursor where;
    pp_buf fields; /* the lev_field_desc initialisers */
    unsigned nfields;
} pp_type;

typedef struct pp_static {
    char *name, *addr, *type, *count;
    const char *flags;
    int std;   /* 1..3: stdin/stdout/stderr, address set at run time */
    int owner; /* the input that defines it */
} pp_static;

/* Static locals, moved to file scope: declaration and new name. */
typedef struct pp_moved {
    CXCursor decl;
    char *name;
} pp_moved;

#define PP_MAX_STRIPS 64

typedef struct pp_ctx {
    pp_file *files;
    unsigned nfiles;
    pp_fn *fns;
    unsigned nfns, capfns;
    pp_type *types;
    unsigned ntypes, captypes;
    pp_static *statics;
    unsigned nstatics, capstatics;
    int main_task, auto_poll;
    int errors;
    unsigned nlit, seq;
    int cur_file; /* the input being processed */
    /* How to name an unnamed type in generated code: __typeof__ of an
     * object of that type, when one is at hand (set by pp_static_var
     * around one pp_elem call; NULL otherwise). */
    const char *typeof_hint;
    /* The integer-pointer analysis: [fn][param] (param == nparams: the
     * return value), the pointer-to-integer conversion that reaches it. */
    CXCursor **param_conv;
    /* Static locals moved to file scope (pp_move_decl). */
    pp_moved *moved;
    unsigned nmoved, capmoved;
    /* The strip-mined loops around the statement being rewritten
     * (pp_strip_mine): their number and their induction variables. */
    struct {
        unsigned k;
        char *v;
    } strips[PP_MAX_STRIPS];
    unsigned nstrips;
    /* The last libc call refused inside a macro: one error per expansion. */
    const pp_file *libc_macro_file;
    unsigned libc_macro_at;
} pp_ctx;

enum { PP_ERROR, PP_WARNING };
void pp_vdiag(int severity, int count, const char *file, unsigned line, unsigned col,
              const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
void pp_diag(int severity, CXSourceLocation loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An error (counted) or a warning (the run still succeeds) at loc. */
#define pp_error(loc, ...) pp_diag(PP_ERROR, (loc), __VA_ARGS__)
#define pp_warn(loc, ...) pp_diag(PP_WARNING, (loc), __VA_ARGS__)

/* An error with no source location: `FILE: error: levpp: TEXT`, or
 * `levpp: error: TEXT` when file is NULL. Counted like the others. */
void pp_error_noloc(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The names of the standard streams, by pp_static.std - 1. */
extern const char *const pp_std_names[3];

/* The one context of a run: every piece of mutable state of levpp. */
pp_ctx ctx;

/* ===================================================================
 * Locations, diagnostics, children, tokens
 * =================================================================== */

/* The one diagnostic printer: `FILE:LINE:COL: error: levpp: TEXT`, or
 * `FILE: error: levpp: TEXT` with no line, or `levpp: error: TEXT` with no
 * file; warnings alike with `warning:`. Errors are counted in ctx.errors
 * when `count` is set (a run with errors writes nothing). */
void pp_vdiag(int severity, int count, const char *file, unsigned line, unsigned col,
              const char *fmt, va_list ap)
{
    const char *what = severity == PP_WARNING ? "warning" : "error";
    if (file && line)
        fprintf(stderr, "%s:%u:%u: %s: levpp: ", file, line, col, what);
    else if (file)
        fprintf(stderr, "%s: %s: levpp: ", file, what);
    else
        fprintf(stderr, "levpp: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    if (severity == PP_ERROR && count)
        ctx.errors++;
}

void pp_error_noloc(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pp_vdiag(PP_ERROR, 1, file, 0, 0, fmt, ap);
    va_end(ap);
}

/* A diagnostic at a source location (its expansion location). */
void pp_diag(int severity, CXSourceLocation loc, const char *fmt, ...)
{
    CXFile file;
    unsigned line, col;
    clang_getExpansionLocation(loc, &file, &line, &col, NULL);
    char *name = file ? pp_cx(clang_getFileName(file)) : pp_strdup("levpp");
    va_list ap;
    va_start(ap, fmt);
    pp_vdiag(severity, 1, name, line, col, fmt, ap);
    va_end(ap);
    free(name);
}

#define PP_LOC(c) clang_getCursorLocation(c)

static unsigned pp_off(CXSourceLocation l)
{
    unsigned o;
    clang_getExpansionLocation(l, NULL, NULL, NULL, &o);
    return o;
}

static unsigned pp_begin(CXCursor c)
{
    return pp_off(clang_getRangeStart(clang_getCursorExtent(c)));
}
static unsigned pp_end(CXCursor c) { return pp_off(clang_getRangeEnd(clang_getCursorExtent(c))); }


/* Whether any end of c's extent comes from a macro expansion. */
static int pp_in_macro(CXCursor c)
{
    CXSourceRange r = clang_getCursorExtent(c);
    CXSourceLocation ls[2] = {clang_getRangeStart(r), clang_getRangeEnd(r)};
    for (int i = 0; i < 2; i++) {
        CXFile f1, f2;
        unsigned o1, o2;
        clang_getExpansionLocation(ls[i], &f1, NULL, NULL, &o1);
        clang_getSpellingLocation(ls[i], &f2, NULL, NULL, &o2);
        if (o1 != o2 || !clang_File_isEqual(f1, f2))
            return 1;
    }
    return 0;
}

typedef struct pp_kids {
    CXCursor *v;
    unsigned n, cap;
} pp_kids;

static enum CXChildVisitResult pp_kid_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_kids *k = d;
    PP_PUSH(k->v, k->n, k->cap);
    k->v[k->n++] = c;
    return CXChildVisit_Continue;
}

static pp_kids pp_children(CXCursor c)
{
    pp_kids k = {0};
    clang_visitChildren(c, pp_kid_cb, &k);
    return k;
}

static enum CXCursorKind pp_kind(CXCursor c) { return clang_getCursorKind(c); }

static CXCursor pp_strip(CXCursor c)
{
    while (pp_kind(c) == CXCursor_ParenExpr || pp_kind(c) == CXCursor_UnexposedExpr) {
        pp_kids k = pp_children(c);
        if (k.n != 1) {
            free(k.v);
            break;
        }
        c = k.v[0];
        free(k.v);
    }
    return c;
}

static unsigned pp_line_of(const pp_file *f, unsigned off)
{
    unsigned lo = 0, hi = f->nlines;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (f->lines[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo + 1;
}

/* Index of the first token starting at or after off. */
static unsigned pp_tok_from(const pp_file *f, unsigned off)
{
    unsigned lo = 0, hi = f->ntoks;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (f->toks[mid].b < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int pp_tok_is(const pp_file *f, unsigned i, const char *s)
{
    if (i >= f->ntoks)
        return 0;
    size_t n = strlen(s);
    return f->toks[i].e - f->toks[i].b == n && !memcmp(f->text + f->toks[i].b, s, n);
}

/* End offset of a statement, including its ';'. */
static unsigned pp_stmt_end(const pp_file *f, CXCursor c)
{
    unsigned e = pp_end(c);
    unsigned i = pp_tok_from(f, e);
    if (i > 0 && f->toks[i - 1].e == e && (pp_tok_is(f, i - 1, ";") || pp_tok_is(f, i - 1, "}")))
        return e;
    if (pp_tok_is(f, i, ";"))
        return f->toks[i].e;
    return e;
}

/* Whether statement c begins with attributes (an attributed statement). */
static int pp_attributed(const pp_file *f, CXCursor c)
{
    unsigned i = pp_tok_from(f, pp_begin(c));
    return pp_tok_is(f, i, "__attribute__") || pp_tok_is(f, i, "__attribute") ||
           (pp_tok_is(f, i, "[") && pp_tok_is(f, i + 1, "["));
}

static void pp_edit_add(pp_file *f, unsigned b, unsigned e, int cls, int depth, int run, char *text)
{
    PP_PUSH(f->edits, f->nedits, f->capedits);
    f->edits[f->nedits++] = (pp_edit){b, e, cls, depth, run, ctx.seq++, text};
}

static int pp_edit_cmp(const void *pa, const void *pb)
{
    const pp_edit *x = *(pp_edit *const *)pa, *y = *(pp_edit *const *)pb;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    if (x->cls != y->cls)
        return x->cls - y->cls;
    if (x->cls == E_REPL && x->e != y->e)
        return x->e > y->e ? -1 : 1;
    if (x->cls == E_PRE && x->depth != y->depth)
        return x->depth - y->depth;
    if (x->cls == E_POST) {
        if (x->depth != y->depth)
            return y->depth - x->depth;
        return x->seq > y->seq ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : 1;
}

/* How pp_render renders a range: R_SYNC re-synchronises #line after
 * inserted lines; R_EXPR renders an expression, without the insertions at
 * its two ends: those belong to the statements it begins or ends (an
 * unbraced loop body's poll, the code of a statement's calls), never to
 * the expression, which holds statements only inside `({ })`. */
enum { R_SYNC = 1, R_EXPR = 2 };

/* Appends input range [b, e) with the edits inside it applied (run: also
 * those of resumable bodies), as `how` says (R_*). */
static void pp_render(pp_buf *out, pp_file *f, unsigned b, unsigned e, int run, int how)
{
    pp_edit **v = NULL;
    unsigned n = 0, cap = 0;
    int sync = how & R_SYNC;
    for (unsigned i = 0; i < f->nedits; i++) {
        pp_edit *ed = &f->edits[i];
        if ((how & R_EXPR) && ed->b == ed->e && (ed->b == b || ed->b == e))
            continue;
        if (ed->b >= b && ed->e <= e && (run || !ed->run)) {
            PP_PUSH(v, n, cap);
            v[n++] = ed;
        }
    }
    if (n)
        qsort(v, n, sizeof *v, pp_edit_cmp);
    unsigned cur = b;
    int need = 0;
    for (unsigned i = 0; i <= n; i++) {
        unsigned upto = i < n ? v[i]->b : e;
        if (i < n && v[i]->b < cur)
            continue; /* inside a replaced range */
        if (upto > cur) {
            if (need && sync)
                pp_printf(out, "\n#line %u \"%s\"\n", pp_line_of(f, cur), f->path);
            need = 0;
            pp_putn(out, f->text + cur, upto - cur);
            cur = upto;
        }
        if (i < n) {
            if (need && sync && !strchr(v[i]->text, '\n'))
                pp_printf(out, "\n#line %u \"%s\"\n", pp_line_of(f, cur), f->path);
            need = 0;
            pp_puts(out, v[i]->text);
            if (strchr(v[i]->text, '\n'))
                need = 1;
            cur = v[i]->e;
        }
    }
    if (need && sync && cur < f->len)
        pp_printf(out, "\n#line %u \"%s\"\n", pp_line_of(f, cur), f->path);
    free(v);
}

/* End offset of the macro invocation whose name is the token at off: after
 * the `)` that closes its arguments, or after the name (object-like). */
static unsigned pp_inv_end(const pp_file *f, unsigned off)
{
    unsigned i = pp_tok_from(f, off);
    if (i >= f->ntoks)
        return off;
    if (!pp_tok_is(f, i + 1, "("))
        return f->toks[i].e;
    int par = 0;
    for (unsigned j = i + 1; j < f->ntoks; j++) {
        if (pp_tok_is(f, j, "("))
            par++;
        else if (pp_tok_is(f, j, ")") && --par == 0)
            return f->toks[j].e;
    }
    return f->toks[i].e;
}

/* The text of f that spells c: its extent when c is not from a macro;
 * when it is, its spelling if that lies inside the arguments of the macro
 * invocation it comes from (a macro argument written in f). 0: c has no
 * such text (it is written in a macro's body). */
static int pp_span(const pp_file *f, CXCursor c, unsigned *b, unsigned *e)
{
    if (!pp_in_macro(c)) {
        *b = pp_begin(c);
        *e = pp_end(c);
        return 1;
    }
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile f1, f2;
    unsigned sb, se;
    clang_getSpellingLocation(clang_getRangeStart(r), &f1, NULL, NULL, &sb);
    clang_getSpellingLocation(clang_getRangeEnd(r), &f2, NULL, NULL, &se);
    unsigned xb = pp_begin(c);
    if (!f1 || !f2 || !clang_File_isEqual(f1, f->cxf) || !clang_File_isEqual(f2, f->cxf) ||
        sb <= xb || se <= sb || se > pp_inv_end(f, xb))
        return 0;
    *b = sb;
    *e = se;
    return 1;
}

/* Where c is written in f: pp_span's text, or else where the macro
 * invocation it comes from is. */
static void pp_written_at(const pp_file *f, CXCursor c, unsigned *b, unsigned *e)
{
    if (pp_span(f, c, b, e))
        return;
    CXSourceRange r = clang_getCursorExtent(c);
    clang_getExpansionLocation(clang_getRangeStart(r), NULL, NULL, NULL, b);
    clang_getExpansionLocation(clang_getRangeEnd(r), NULL, NULL, NULL, e);
}

/* The text of c with the edits inside it applied (run: also those of
 * resumable bodies); a macro argument's own text when c is one. */
static char *pp_render_str(pp_file *f, CXCursor c, int run)
{
    pp_buf b = {0};
    unsigned cb, ce;
    if (!pp_span(f, c, &cb, &ce)) {
        cb = pp_begin(c);
        ce = pp_end(c);
    }
    pp_render(&b, f, cb, ce, run, R_EXPR);
    return b.p ? b.p : pp_strdup("");
}

/* ===================================================================
 * Types: declarators, classification, descriptors
 * =================================================================== */

static CXType pp_desugar(CXType t)
{
    for (;;) {
        enum CXTypeKind ck = clang_getCanonicalType(t).kind;
        if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Typedef &&
                 (ck == CXType_ConstantArray || ck == CXType_IncompleteArray ||
                  ck == CXType_VariableArray || ck == CXType_Pointer))
            t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
        else if (t.kind == CXType_Unexposed)
            return clang_getCanonicalType(t);
        else
            return t;
    }
}

static int pp_bad_spelling(const char *s)
{
    return strstr(s, "(unnamed") || strstr(s, "(anonymous");
}

/* A declaration of `name` with type t (top-level qualifiers dropped). */
static char *pp_decl(CXType t, const char *name)
{
    t = clang_getUnqualifiedType(t);
    CXType d = pp_desugar(t);
    switch (d.kind) {
    case CXType_ConstantArray: {
        char *inner = name[0] == '*' ? pp_fmt("(%s)[%lld]", name, clang_getArraySize(d))
                                     : pp_fmt("%s[%lld]", name, clang_getArraySize(d));
        char *r = pp_decl(clang_getArrayElementType(d), inner);
        free(inner);
        return r;
    }
    case CXType_IncompleteArray:
    case CXType_VariableArray: { /* [] is compatible with any first dimension */
        char *inner = name[0] == '*' ? pp_fmt("(%s)[]", name) : pp_fmt("%s[]", name);
        char *r = pp_decl(clang_getArrayElementType(d), inner);
        free(inner);
        return r;
    }
    case CXType_Pointer: {
        CXType p = pp_desugar(clang_getPointeeType(d));
        if (p.kind == CXType_FunctionProto || p.kind == CXType_FunctionNoProto ||
            p.kind == CXType_ConstantArray || p.kind == CXType_IncompleteArray ||
            p.kind == CXType_VariableArray) {
            char *inner = pp_fmt("(*%s)", name);
            char *r = pp_decl(clang_getPointeeType(d), inner);
            free(inner);
            return r;
        }
        break;
    }
    case CXType_FunctionProto: {
        pp_buf b = {0};
        pp_printf(&b, "%s(", name);
        int n = clang_getNumArgTypes(d);
        for (int i = 0; i < n; i++) {
            char *a = pp_cx(clang_getTypeSpelling(clang_getArgType(d, (unsigned)i)));
            pp_printf(&b, "%s%s", i ? ", " : "", a);
            free(a);
        }
        if (clang_isFunctionTypeVariadic(d))
            pp_puts(&b, n ? ", ..." : "...");
        else if (!n)
            pp_puts(&b, "void");
        pp_puts(&b, ")");
        char *r = pp_decl(clang_getResultType(d), b.p);
        free(b.p);
        return r;
    }
    default:
        break;
    }
    char *sp = pp_cx(clang_getTypeSpelling(t));
    char *r = pp_fmt("%s%s%s", sp, name[0] == '*' || sp[strlen(sp) - 1] == '*' ? "" : " ", name);
    if (name[0] == '*' && sp[strlen(sp) - 1] != '*') {
        free(r);
        r = pp_fmt("%s %s", sp, name);
    }
    free(sp);
    return r;
}

static int pp_is_fn_type(CXType t)
{
    t = clang_getCanonicalType(t);
    return t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto;
}

/* Whether a record type holds a data or function pointer anywhere. */
static int pp_has_pointer(CXType t);

static enum CXVisitorResult pp_ptr_field_cb(CXCursor c, CXClientData d)
{
    int *found = d;
    if (pp_has_pointer(clang_getCursorType(c))) {
        *found = 1;
        return CXVisit_Break;
    }
    return CXVisit_Continue;
}

static int pp_has_pointer(CXType t)
{
    t = clang_getCanonicalType(t);
    switch (t.kind) {
    case CXType_Pointer:
    case CXType_BlockPointer:
        return 1;
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
        return pp_has_pointer(clang_getArrayElementType(t));
    case CXType_VariableArray:
        return 1; /* a local one lives on the VT heap behind a frame pointer */
    case CXType_Record: {
        int found = 0;
        clang_Type_visitFields(t, pp_ptr_field_cb, &found);
        return found;
    }
    default:
        return 0;
    }
}

/* Whether t is variably modified: a variable-length array, or an array
 * of or a pointer to one. */
static int pp_is_vm(CXType t)
{
    t = clang_getCanonicalType(t);
    switch (t.kind) {
    case CXType_VariableArray:
        return 1;
    case CXType_Pointer:
        return pp_is_vm(clang_getPointeeType(t));
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
        return pp_is_vm(clang_getArrayElementType(t));
    default:
        return 0;
    }
}

/* Whether declaration c is a typedef of a variably modified type: its
 * size expressions run where it stands, so it cannot move. */
static int pp_vm_typedef(CXCursor c)
{
    return pp_kind(c) == CXCursor_TypedefDecl && pp_is_vm(clang_getTypedefDeclUnderlyingType(c));
}

static int pp_is_union(CXType t)
{
    t = clang_getCanonicalType(t);
    return t.kind == CXType_Record && pp_kind(clang_getTypeDeclaration(t)) == CXCursor_UnionDecl;
}

static char *pp_ident(const char *s)
{
    char *r = pp_strdup(s);
    for (char *p = r; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            *p = '_';
    return r;
}

/* The id (enum name) of record type t, registering it. */
static const char *pp_record_id(CXType t, CXCursor where)
{
    CXType canon = clang_getCanonicalType(t);
    char *key = pp_cx(clang_getTypeSpelling(canon));
    char *spell = pp_cx(clang_getTypeSpelling(clang_getUnqualifiedType(pp_desugar(t))));
    if (pp_bad_spelling(spell)) {
        free(spell);
        spell = pp_cx(clang_getTypeSpelling(clang_getUnqualifiedType(t)));
    }
    if (pp_bad_spelling(spell) && ctx.typeof_hint) {
        free(spell);
        spell = pp_strdup(ctx.typeof_hint);
    }
    for (unsigned i = 0; i < ctx.ntypes; i++) {
        if (ctx.types[i].fn < 0 && !strcmp(ctx.types[i].key, key)) {
            if (pp_bad_spelling(ctx.types[i].spell) && !pp_bad_spelling(spell)) {
                free(ctx.types[i].spell);
                ctx.types[i].spell = spell;
            } else {
                free(spell);
            }
            free(key);
            return ctx.types[i].idname;
        }
    }
    PP_PUSH(ctx.types, ctx.ntypes, ctx.captypes);
    pp_type *ty = &ctx.types[ctx.ntypes++];
    memset(ty, 0, sizeof *ty);
    char *id = pp_ident(key);
    ty->idname = pp_fmt("LEV__T_%s_%u", id, ctx.ntypes);
    free(id);
    ty->key = key;
    ty->spell = spell;
    ty->type = canon;
    ty->fn = -1;
    ty->owner = ctx.cur_file;
    ty->where = where;
    return ty->idname;
}

/* Element type of a static or heap array of t: id text and element size
 * text; *mult: how many elements one t is (arrays, long double). 0: ok. */
static int pp_elem(CXType t, CXCursor where, const char **id, char **size, long long *mult)
{
    CXType c = clang_getCanonicalType(t);
    *mult = 1;
    while (c.kind == CXType_ConstantArray) {
        *mult *= clang_getArraySize(c);
        t = clang_getArrayElementType(pp_desugar(t));
        c = clang_getCanonicalType(t);
    }
    long long sz = clang_Type_getSizeOf(c);
    switch (c.kind) {
    case CXType_Pointer:
        *id = pp_is_fn_type(clang_getPointeeType(c)) ? "LEV_T_FNPTR" : "LEV_T_PTR";
        *size = pp_strdup("sizeof(void *)");
        return 0;
    case CXType_Record:
        if (pp_is_union(c)) {
            if (pp_has_pointer(c)) {
                pp_error(PP_LOC(where), "a union that holds a pointer cannot be described; "
                                        "it must not live in the VT's heap or statics");
                return -1;
            }
            *id = "LEV_T_BYTES";
            *mult *= sz;
            *size = pp_strdup("1");
            return 0;
        }
        *id = pp_record_id(t, where);
        {
            char *sp = pp_cx(clang_getTypeSpelling(clang_getUnqualifiedType(pp_desugar(t))));
            *size = pp_fmt("sizeof(%s)", sp);
            free(sp);
        }
        return 0;
    default:
        break;
    }
    if (c.kind == CXType_Void || sz == 1) {
        *id = "LEV_T_BYTES";
        *size = pp_strdup("1");
        return 0;
    }
    if (sz == 2 || sz == 4 || sz == 8 || sz == 16) {
        *id = sz == 2 ? "LEV_T_U16" : sz == 4 ? "LEV_T_U32" : "LEV_T_U64";
        if (sz == 16)
            *mult *= 2;
        *size = pp_fmt("%lld", sz == 16 ? 8 : sz);
        return 0;
    }
    char *sp = pp_cx(clang_getTypeSpelling(t));
    pp_error(PP_LOC(where), "type '%s' cannot be described for the VT's heap or statics", sp);
    free(sp);
    return -1;
}

/* Appends field descriptors of a member `path` of type t in `owner`. */
static void pp_fields(pp_type *ty, const char *owner, const char *path, CXType t, CXCursor where);

static void pp_record_fields(pp_type *ty, const char *owner, const char *path, CXType rec,
                             int anon);

static enum CXVisitorResult pp_collect_field_cb(CXCursor c, CXClientData d)
{
    pp_kids *k = d;
    PP_PUSH(k->v, k->n, k->cap);
    k->v[k->n++] = c;
    return CXVisit_Continue;
}

/* Whether field c is a member of an anonymous struct or union (its
 * fields are named as the enclosing record's). */
static int pp_anon_member(CXCursor c)
{
    return clang_Cursor_isAnonymousRecordDecl(clang_getTypeDeclaration(clang_getCursorType(c)));
}

/* Member path of field c (named, not a bit-field) below path. */
static char *pp_member_path(const char *path, CXCursor c)
{
    char *name = pp_cx(clang_getCursorSpelling(c));
    char *r = *path ? pp_fmt("%s.%s", path, name) : pp_strdup(name);
    free(name);
    return r;
}

/* The bytes of bit-fields v[b, e) of a record (at member path `path` of
 * owner, or the owner itself) as one run of raw bytes: from the end of
 * the named field before them (or the record's start) to the start of the
 * one after them (or the record's end), computed with offsetof and sizeof
 * since no bit-field can be named. Captured bit-exactly, between machines
 * of the same byte order. */
static void pp_bitfield_run(pp_type *ty, const char *owner, const char *path, CXType rec,
                            int anon, CXCursor *v, unsigned n, unsigned b, unsigned e)
{
    CXCursor prev = b > 0 ? v[b - 1] : clang_getNullCursor();
    CXCursor next = e < n ? v[e] : clang_getNullCursor();
    char *first = pp_cx(clang_getCursorSpelling(v[b]));
    if ((!clang_Cursor_isNull(prev) && pp_anon_member(prev)) ||
        (!clang_Cursor_isNull(next) && pp_anon_member(next)) ||
        (anon && (clang_Cursor_isNull(prev) || clang_Cursor_isNull(next)))) {
        pp_error(PP_LOC(v[b]),
                 "bit-field '%s' next to an anonymous struct or union cannot be described; "
                 "give the struct or union a member name",
                 first);
        free(first);
        return;
    }
    /* the layout as libclang sees it: no row for zero-width bit-fields */
    long long lo = 0, hi = clang_Type_getSizeOf(rec);
    if (!clang_Cursor_isNull(prev))
        lo = clang_Cursor_getOffsetOfField(prev) / 8 + clang_Type_getSizeOf(clang_getCursorType(prev));
    if (!clang_Cursor_isNull(next))
        hi = clang_Cursor_getOffsetOfField(next) / 8;
    if (hi <= lo) {
        free(first);
        return;
    }
    char *start, *end;
    if (!clang_Cursor_isNull(prev)) {
        char *pp = pp_member_path(path, prev);
        start = pp_fmt("offsetof(%s, %s) + sizeof(((%s *)0)->%s)", owner, pp, owner, pp);
        free(pp);
    } else {
        start = *path ? pp_fmt("offsetof(%s, %s)", owner, path) : pp_strdup("0");
    }
    if (!clang_Cursor_isNull(next)) {
        char *np = pp_member_path(path, next);
        end = pp_fmt("offsetof(%s, %s)", owner, np);
        free(np);
    } else {
        end = *path ? pp_fmt("offsetof(%s, %s) + sizeof(((%s *)0)->%s)", owner, path, owner, path)
                    : pp_fmt("sizeof(%s)", owner);
    }
    char *last = pp_cx(clang_getCursorSpelling(v[e - 1]));
    pp_printf(&ty->fields, "    {\"%s%s%s%s%s\", %s, LEV_K_B1, (%s) - (%s), 0},\n", path,
              *path ? "." : "", *first ? first : "(bit-field)", e - b > 1 ? ".." : "",
              e - b > 1 ? (*last ? last : "(bit-field)") : "", start, end, start);
    ty->nfields++;
    free(first);
    free(last);
    free(start);
    free(end);
}

/* Appends the field descriptors of record type rec, at member path
 * `path` of owner (or the owner itself); anon: rec is an anonymous
 * member, its fields named as the enclosing record's. */
static void pp_record_fields(pp_type *ty, const char *owner, const char *path, CXType rec,
                             int anon)
{
    pp_kids k = {0};
    clang_Type_visitFields(rec, pp_collect_field_cb, &k);
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor c = k.v[i];
        if (clang_Cursor_isBitField(c)) {
            unsigned e = i + 1;
            while (e < k.n && clang_Cursor_isBitField(k.v[e]))
                e++;
            pp_bitfield_run(ty, owner, path, rec, anon, k.v, k.n, i, e);
            i = e - 1;
            continue;
        }
        CXType ct = clang_getCursorType(c);
        if (pp_anon_member(c) && clang_getCanonicalType(ct).kind == CXType_Record &&
            !pp_is_union(ct)) {
            pp_record_fields(ty, owner, path, clang_getCanonicalType(ct), 1);
            continue;
        }
        char *name = pp_cx(clang_getCursorSpelling(c));
        char *p = !*name || pp_anon_member(c) ? pp_strdup(path) : pp_member_path(path, c);
        pp_fields(ty, owner, p, ct, c);
        free(p);
        free(name);
    }
    free(k.v);
}

static void pp_field_row(pp_type *ty, const char *owner, const char *path, const char *kind,
                         long long count, const char *type)
{
    pp_printf(&ty->fields, "    {\"%s\", offsetof(%s, %s), %s, %lld, %s},\n", path, owner, path,
              kind, count, type);
    ty->nfields++;
}

static void pp_fields(pp_type *ty, const char *owner, const char *path, CXType t, CXCursor where)
{
    CXType c = clang_getCanonicalType(t);
    long long count = 1;
    CXType elem = t;
    while (c.kind == CXType_ConstantArray) {
        count *= clang_getArraySize(c);
        elem = clang_getArrayElementType(pp_desugar(elem));
        c = clang_getCanonicalType(elem);
    }
    if (c.kind == CXType_IncompleteArray || c.kind == CXType_VariableArray) {
        pp_error(PP_LOC(where), "'%s': arrays without a constant size cannot be described yet",
                 path);
        return;
    }
    if (count == 0)
        return;
    if (c.kind == CXType_Pointer) {
        pp_field_row(ty, owner, path,
                     pp_is_fn_type(clang_getPointeeType(c)) ? "LEV_K_FNPTR" : "LEV_K_PTR", count,
                     "0");
        return;
    }
    if (c.kind == CXType_Record) {
        if (pp_is_union(c)) {
            if (pp_has_pointer(c)) {
                pp_error(PP_LOC(where),
                         "'%s' is a union that may hold a pointer: it cannot be captured", path);
                return;
            }
            pp_field_row(ty, owner, path, "LEV_K_B1", count * clang_Type_getSizeOf(c), "0");
            return;
        }
        if (count == 1 && *path) {
            pp_record_fields(ty, owner, path, c, 0);
            return;
        }
        const char *id = pp_record_id(elem, where);
        pp_field_row(ty, owner, path, "LEV_K_REC", count, id);
        return;
    }
    long long sz = clang_Type_getSizeOf(c);
    const char *k = sz == 1               ? "LEV_K_B1"
                    : sz == 2             ? "LEV_K_B2"
                    : sz == 4             ? "LEV_K_B4"
                    : sz == 8 || sz == 16 ? "LEV_K_B8"
                                          : NULL;
    if (!k) {
        char *sp = pp_cx(clang_getTypeSpelling(t));
        pp_error(PP_LOC(where), "'%s' of type '%s' cannot be described for capture", path, sp);
        free(sp);
        return;
    }
    pp_field_row(ty, owner, path, k, sz == 16 ? count * 2 : count, "0");
}

/* ===================================================================
 * Functions and the call graph
 * =================================================================== */

static int pp_fn_find(const char *usr)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (!strcmp(ctx.fns[i].usr, usr))
            return (int)i;
    return -1;
}

static int pp_fn_get(CXCursor decl)
{
    char *usr = pp_cx(clang_getCursorUSR(decl));
    int i = pp_fn_find(usr);
    if (i >= 0) {
        free(usr);
        return i;
    }
    PP_PUSH(ctx.fns, ctx.nfns, ctx.capfns);
    pp_fn *fn = &ctx.fns[ctx.nfns];
    memset(fn, 0, sizeof *fn);
    fn->usr = usr;
    fn->name = pp_cx(clang_getCursorSpelling(decl));
    fn->file = -1;
    return (int)ctx.nfns++;
}

/* Whether c is a loop: a for, or a while or do-while whose condition is
 * not the constant 0 (`do { ... } while (0)` in macros). */
static int pp_is_loop(CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_ForStmt)
        return 1;
    if (k != CXCursor_WhileStmt && k != CXCursor_DoStmt)
        return 0;
    pp_kids kk = pp_children(c);
    int loop = 1;
    if (kk.n == 2) {
        CXEvalResult ev = clang_Cursor_Evaluate(kk.v[k == CXCursor_DoStmt ? 1 : 0]);
        if (ev && clang_EvalResult_getKind(ev) == CXEval_Int &&
            clang_EvalResult_getAsLongLong(ev) == 0)
            loop = 0;
        if (ev)
            clang_EvalResult_dispose(ev);
    }
    free(kk.v);
    return loop;
}

typedef struct pp_scan {
    int fn;
} pp_scan;

/* The safe-point kind (a LEV_SP_* name) of a call of the Leverage
 * function `name` that is a safe point in checkpointable code, or NULL. */
static const char *pp_safepoint_kind(const char *name)
{
    static const char *const calls[][2] = {{"lev_checkpoint", "LEV_SP_CHECKPOINT"},
                                           {"lev_yield", "LEV_SP_YIELD"}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (!strcmp(name, calls[i][0]))
            return calls[i][1];
    return NULL;
}

/* The canonical spelling of a function type, or of the function type a
 * pointer points to: what matches an indirect call with its candidates.
 * NULL: not a function type. */
static char *pp_fn_key(CXType t)
{
    t = clang_getCanonicalType(t);
    if (t.kind == CXType_Pointer)
        t = clang_getCanonicalType(clang_getPointeeType(t));
    if (t.kind != CXType_FunctionProto)
        return NULL;
    return pp_cx(clang_getTypeSpelling(t));
}

/* The function type key (pp_fn_key) of the callee of an indirect call c. */
static char *pp_icall_key(CXCursor c)
{
    pp_kids k = pp_children(c);
    char *key = k.n ? pp_fn_key(clang_getCursorType(k.v[0])) : NULL;
    free(k.v);
    return key;
}

static enum CXChildVisitResult pp_scan_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_scan *sc = d;
    pp_fn *fn = &ctx.fns[sc->fn];
    if (pp_is_loop(c))
        fn->has_loop = 1;
    if (pp_kind(c) == CXCursor_CallExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        if (pp_kind(ref) == CXCursor_FunctionDecl) {
            char *name = pp_cx(clang_getCursorSpelling(ref));
            if (pp_safepoint_kind(name))
                fn->has_ckpt = 1;
            free(name);
            int g = pp_fn_get(ref);
            fn = &ctx.fns[sc->fn]; /* the table may have moved */
            PP_PUSH(fn->callees, fn->ncallees, fn->capcallees);
            fn->callees[fn->ncallees++] = g;
        } else {
            char *key = pp_icall_key(c);
            if (key) {
                PP_PUSH(fn->itypes, fn->nitypes, fn->capitypes);
                fn->itypes[fn->nitypes++] = key;
            }
        }
    }
    return CXChildVisit_Recurse;
}

typedef struct pp_addr {
    char *callee; /* USR of the function a direct call just seen calls */
} pp_addr;

/* Marks the functions whose address is taken: every reference to a
 * function but the callee of a direct call (the first reference to it
 * under its call expression). */
static enum CXChildVisitResult pp_addr_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_addr *a = d;
    enum CXCursorKind k = pp_kind(c);
    if (k != CXCursor_CallExpr && k != CXCursor_DeclRefExpr)
        return CXChildVisit_Recurse;
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) != CXCursor_FunctionDecl)
        return CXChildVisit_Recurse;
    char *usr = pp_cx(clang_getCursorUSR(ref));
    if (k == CXCursor_CallExpr) {
        free(a->callee);
        a->callee = usr;
        return CXChildVisit_Recurse;
    }
    if (a->callee && !strcmp(a->callee, usr)) {
        free(a->callee);
        a->callee = NULL;
    } else {
        ctx.fns[pp_fn_get(ref)].addr_taken = 1;
    }
    free(usr);
    return CXChildVisit_Recurse;
}

/* Finds the functions whose address input fi takes (pp_addr_cb). */
static void pp_addr_scan(unsigned fi)
{
    pp_kids k = pp_children(clang_getTranslationUnitCursor(ctx.files[fi].tu));
    pp_addr a = {NULL};
    for (unsigned i = 0; i < k.n; i++)
        if (clang_Location_isFromMainFile(PP_LOC(k.v[i])))
            clang_visitChildren(k.v[i], pp_addr_cb, &a);
    free(a.callee);
    free(k.v);
}

/* Whether g is a candidate of an indirect call of type `key`: a
 * function of the inputs of that type whose address is taken. */
static int pp_icand(const pp_fn *g, const char *key)
{
    if (g->file < 0 || !g->addr_taken || g->is_task || g->is_main)
        return 0;
    char *gk = pp_fn_key(clang_getCursorType(g->def));
    int same = gk && !strcmp(gk, key);
    free(gk);
    return same;
}

/* Whether the indirect call c may reach a checkpointable function (a
 * checkpointable candidate: pp_icand), which makes it a site. */
static int pp_icall_cp(CXCursor c)
{
    char *key = pp_icall_key(c);
    int any = 0;
    for (unsigned j = 0; key && j < ctx.nfns && !any; j++)
        any = ctx.fns[j].cp && pp_icand(&ctx.fns[j], key);
    free(key);
    return any;
}

/* Adds to the call graph an edge from each indirect call to each of its
 * candidates, so that what a pointer may reach counts like a direct call. */
static void pp_icall_edges(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        for (unsigned t = 0; t < ctx.fns[i].nitypes; t++)
            for (unsigned j = 0; j < ctx.nfns; j++)
                if (pp_icand(&ctx.fns[j], ctx.fns[i].itypes[t])) {
                    pp_fn *fn = &ctx.fns[i];
                    PP_PUSH(fn->callees, fn->ncallees, fn->capcallees);
                    fn->callees[fn->ncallees++] = (int)j;
                }
}

static enum CXChildVisitResult pp_is_task_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_kind(c) == CXCursor_AnnotateAttr) {
        char *s = pp_cx(clang_getCursorSpelling(c));
        if (!strcmp(s, "lev_task"))
            *(int *)d = 1;
        free(s);
    }
    return CXChildVisit_Continue;
}

/* Records the functions defined in file fi and their calls. */
static void pp_collect_fns(unsigned fi)
{
    pp_file *f = &ctx.files[fi];
    pp_kids k = pp_children(clang_getTranslationUnitCursor(f->tu));
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor c = k.v[i];
        if (pp_kind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) ||
            !clang_Location_isFromMainFile(PP_LOC(c)))
            continue;
        int id = pp_fn_get(c);
        pp_fn *fn = &ctx.fns[id];
        if (fn->file >= 0) {
            pp_error(PP_LOC(c), "function '%s' is defined in two inputs", fn->name);
            continue;
        }
        fn->file = (int)fi;
        fn->def = c;
        int task = 0;
        clang_visitChildren(c, pp_is_task_cb, &task);
        fn->is_task = task;
        fn->is_main = ctx.main_task && !strcmp(fn->name, "main");
        pp_scan sc = {id};
        clang_visitChildren(c, pp_scan_cb, &sc);
    }
    free(k.v);
}

static void pp_mark_reach(int i)
{
    pp_fn *fn = &ctx.fns[i];
    if (fn->reach || fn->file < 0)
        return;
    fn->reach = 1;
    for (unsigned j = 0; j < fn->ncallees; j++)
        pp_mark_reach(fn->callees[j]);
}

static void pp_fixpoint(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].is_task || ctx.fns[i].is_main)
            pp_mark_reach((int)i);
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        fn->cp = fn->file >= 0 && (fn->is_task || fn->is_main || fn->has_ckpt ||
                                   (ctx.auto_poll && fn->reach && fn->has_loop));
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (unsigned i = 0; i < ctx.nfns; i++) {
            pp_fn *fn = &ctx.fns[i];
            if (fn->cp || fn->file < 0)
                continue;
            for (unsigned j = 0; j < fn->ncallees; j++)
                if (ctx.fns[fn->callees[j]].cp) {
                    fn->cp = changed = 1;
                    break;
                }
        }
    }
}

/* Pass: the functions of every input and the call graph over all of
 * them, which functions are checkpointable (the fixpoint), then the C
 * name and id of each defined function. `first_input` names the run in
 * the error for a --main-task run without main. */
void pp_call_graph_pass(const char *first_input)
{
    for (unsigned i = 0; i < ctx.nfiles; i++)
        pp_collect_fns(i);
    for (unsigned i = 0; i < ctx.nfiles; i++)
        pp_addr_scan(i);
    pp_icall_edges();
    pp_fixpoint();
    int have_main = 0;
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        have_main |= fn->is_main;
        if (fn->file >= 0) {
            int dup = 0;
            for (unsigned j = 0; j < ctx.nfns; j++)
                dup |= j != i && ctx.fns[j].file >= 0 && !strcmp(ctx.fns[j].name, fn->name);
            fn->cname =
                dup ? pp_fmt("%s__%s", fn->name, ctx.files[fn->file].stem) : pp_strdup(fn->name);
            char *id = pp_ident(fn->cname);
            fn->idname = pp_fmt("LEV__FN_%s", id);
            free(id);
        }
    }
    if (ctx.main_task && !have_main)
        pp_error_noloc(first_input, "--main-task: no definition of main");
}

/* ===================================================================
 * Frames: the variables of a checkpointable function
 * =================================================================== */

static int pp_var_find(pp_fn *fn, CXCursor decl)
{
    for (unsigned i = 0; i < fn->nvars; i++)
        if (clang_equalCursors(fn->vars[i].decl, decl))
            return (int)i;
    return -1;
}

static int pp_field_taken(pp_fn *fn, const char *name)
{
    const char *prefix = fn->is_task ? "t" : fn->is_main ? "m" : "h";
    if (!strcmp(name, prefix) || !strncmp(name, "lev__", 5))
        return 1;
    for (unsigned i = 0; i < fn->nvars; i++)
        if (!strcmp(fn->vars[i].field, name))
            return 1;
    return 0;
}

static void pp_var_add(pp_fn *fn, CXCursor decl, CXType type, const char *field)
{
    char *name = field ? pp_strdup(field) : pp_cx(clang_getCursorSpelling(decl));
    if (!field) {
        if (!*name) {
            free(name);
            name = pp_fmt("lev__p%u", fn->nvars);
        }
        for (unsigned n = 1; pp_field_taken(fn, name); n++) {
            char *base = pp_cx(clang_getCursorSpelling(decl));
            free(name);
            name = pp_fmt("%s__%u", base, n);
            free(base);
        }
    }
    PP_PUSH(fn->vars, fn->nvars, fn->capvars);
    fn->vars[fn->nvars++] = (pp_var){.field = name, .decl = decl, .type = type, .scope_e = UINT_MAX};
}

/* The size expressions written in the brackets of variable v's
 * declarator, outermost first (at most PP_VLA_MAX); their number. */
static unsigned pp_bracket_exprs(pp_file *f, CXCursor v, CXCursor *out)
{
    /* a parameter written as an array: its first brackets are adjusted
     * away (T a[n][m] is T (*a)[m]) */
    unsigned skip = 0;
    if (pp_kind(v) == CXCursor_ParmDecl) {
        unsigned t = pp_tok_from(f, pp_off(PP_LOC(v)));
        for (unsigned d = 0, i = t + 1; pp_tok_is(f, t + 1, "[") && i < f->ntoks; i++) {
            d += (unsigned)pp_tok_is(f, i, "[") - (unsigned)pp_tok_is(f, i, "]");
            if (!d) {
                skip = f->toks[i].e;
                break;
            }
        }
    }
    pp_kids k = pp_children(v);
    unsigned n = 0;
    for (unsigned i = 0; i < k.n && n < PP_VLA_MAX; i++) {
        if (!clang_isExpression(pp_kind(k.v[i])) || pp_begin(k.v[i]) < skip)
            continue;
        unsigned t = pp_tok_from(f, pp_begin(k.v[i]));
        if (t > 0 && pp_tok_is(f, t - 1, "["))
            out[n++] = k.v[i];
    }
    free(k.v);
    for (unsigned i = 1; i < n; i++) /* children come innermost first */
        for (unsigned j = i; j > 0 && pp_begin(out[j - 1]) > pp_begin(out[j]); j--) {
            CXCursor x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

/* The shape (pp_vla) of local v of variably modified type t in fn. 0; -1
 * after an error naming v and saying how to write it instead. */
static int pp_vla_shape(pp_fn *fn, CXCursor v, CXType t, pp_vla *out)
{
    memset(out, 0, sizeof *out);
    char *name = pp_cx(clang_getCursorSpelling(v));
    CXType a = t;
    out->kind = PP_VLA_ARRAY;
    if (clang_getCanonicalType(t).kind == CXType_Pointer) {
        out->kind = PP_VLA_POINTER;
        a = clang_getPointeeType(pp_desugar(t));
    }
    unsigned n = 0;
    int last = -1, ok = 1;
    for (;;) {
        enum CXTypeKind k = clang_getCanonicalType(a).kind;
        if (k != CXType_ConstantArray && k != CXType_VariableArray)
            break;
        if (n == PP_VLA_MAX) {
            ok = 0;
            break;
        }
        out->cdim[n] = k == CXType_ConstantArray ? clang_getArraySize(clang_getCanonicalType(a)) : -1;
        if (k == CXType_VariableArray)
            last = (int)n;
        n++;
        a = clang_getArrayElementType(pp_desugar(a));
    }
    ok = ok && last >= 0;
    if (ok) {
        /* the element type: below the last variable dimension */
        out->ndims = (unsigned)last + 1;
        a = out->kind == PP_VLA_POINTER ? clang_getPointeeType(pp_desugar(t)) : t;
        for (unsigned i = 0; i < out->ndims; i++)
            a = clang_getArrayElementType(pp_desugar(a));
        out->elem = a;
        ok = !pp_is_vm(a);
    }
    for (unsigned i = 1; ok && out->kind == PP_VLA_POINTER && i < out->ndims; i++)
        ok = out->cdim[i] >= 0;
    if (!ok) {
        pp_error(PP_LOC(v),
                 "'%s' in checkpointable function '%s' has a variably modified type that cannot "
                 "be captured: only variable-length arrays (T a[n][m]) and pointers to arrays "
                 "whose first dimension only is variable (T (*p)[m]) are supported; use a 'T *' "
                 "and index it by hand",
                 name, fn->name);
        free(name);
        return -1;
    }
    CXCursor br[PP_VLA_MAX];
    unsigned nb = pp_bracket_exprs(&ctx.files[fn->file], v, br);
    for (unsigned i = 0; i < out->ndims; i++) {
        out->size[i] = i < nb ? br[i] : clang_getNullCursor();
        if (out->cdim[i] < 0 && i >= nb) {
            pp_error(PP_LOC(v),
                     "variable-length array '%s' in checkpointable function '%s' takes a "
                     "dimension from a typedef; write its dimensions in its declaration",
                     name, fn->name);
            free(name);
            return -1;
        }
    }
    free(name);
    return 0;
}

/* Visits what of variable declaration v is evaluated: its initialiser (not
 * the operand of a __typeof__ in its type, also a child of v). */
static void pp_visit_init(CXCursor v, CXCursorVisitor cb, CXClientData d)
{
    CXCursor init = clang_Cursor_getVarDeclInitializer(v);
    if (!clang_Cursor_isNull(init) && cb(init, v, d) == CXChildVisit_Recurse)
        clang_visitChildren(init, cb, d);
}

typedef struct pp_vc {
    pp_fn *fn;
} pp_vc;

static int pp_has_site(CXCursor c);

static enum CXChildVisitResult pp_vars_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    pp_vc *vc = d;
    enum CXCursorKind k = pp_kind(c);
    /* Locals of a statement expression with no site stay C locals, and so
     * do those of a block or of the head of a for written by a macro: no
     * safe point can come between their declaration and their last use
     * (pp_macro_stmt) */
    if (k == CXCursor_StmtExpr)
        return pp_has_site(c) && !pp_in_macro(c) ? CXChildVisit_Recurse : CXChildVisit_Continue;
    if ((k == CXCursor_CompoundStmt && pp_in_macro(c)) ||
        (k == CXCursor_DeclStmt && pp_in_macro(c) && pp_kind(parent) == CXCursor_ForStmt))
        return CXChildVisit_Continue;
    /* Locals declared by macros count too: the declaration statement then
     * refuses them ("declaration from a macro"), rather than leaving a C
     * local that would lose its value across a safe point. */
    if (k == CXCursor_VarDecl) {
        enum CX_StorageClass sc = clang_Cursor_getStorageClass(c);
        char *name = pp_cx(clang_getCursorSpelling(c));
        if (sc == CX_SC_Static) {
            /* moved to file scope by the common pass */
        } else if (sc == CX_SC_Extern) {
            pp_error(PP_LOC(c),
                     "%s local '%s' in checkpointable function '%s' is not supported yet; "
                     "move it to file scope",
                     sc == CX_SC_Static ? "static" : "extern", name, vc->fn->name);
        } else if (pp_is_vm(clang_getCursorType(c))) {
            pp_vla shape;
            if (pp_vla_shape(vc->fn, c, clang_getCursorType(c), &shape) == 0) {
                pp_var_add(vc->fn, c, clang_getCursorType(c), NULL);
                vc->fn->vars[vc->fn->nvars - 1].vla = shape;
            }
        } else {
            char *sp = pp_cx(clang_getTypeSpelling(clang_getCursorType(c)));
            if (pp_bad_spelling(sp))
                pp_error(PP_LOC(c),
                         "local '%s' of an unnamed type in checkpointable function '%s' is not "
                         "supported yet; name the type at file scope",
                         name, vc->fn->name);
            else
                pp_var_add(vc->fn, c, clang_getCursorType(c), NULL);
            free(sp);
        }
        free(name);
        pp_visit_init(c, pp_vars_cb, d); /* statement expressions in it */
        return CXChildVisit_Continue;
    }
    return CXChildVisit_Recurse;
}

/* The variable a write target (stripped) stores into: through array
 * subscripts of arrays and member accesses of structs, not through
 * pointers. A null cursor when it is not one variable's storage. */
static CXCursor pp_write_var(CXCursor e)
{
    for (;;) {
        e = pp_strip(e);
        enum CXCursorKind k = pp_kind(e);
        if (k == CXCursor_DeclRefExpr) {
            CXCursor r = clang_getCursorReferenced(e);
            return pp_kind(r) == CXCursor_VarDecl ? r : clang_getNullCursor();
        }
        if (k != CXCursor_ArraySubscriptExpr && k != CXCursor_MemberRefExpr)
            return clang_getNullCursor();
        pp_kids kk = pp_children(e);
        CXCursor b = kk.n >= 1 ? pp_strip(kk.v[0]) : clang_getNullCursor();
        free(kk.v);
        enum CXTypeKind bt = clang_getCanonicalType(clang_getCursorType(b)).kind;
        if (clang_Cursor_isNull(b) || bt == CXType_Pointer)
            return clang_getNullCursor();
        e = b;
    }
}

/* Whether c writes (or takes the address of) its first operand: an
 * assignment, a compound assignment, ++, -- or unary &. */
static int pp_writes_operand(CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_CompoundAssignOperator)
        return 1;
    if (k == CXCursor_BinaryOperator)
        return clang_getCursorBinaryOperatorKind(c) == CXBinaryOperator_Assign;
    if (k == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(c);
        return op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PostDec ||
               op == CXUnaryOperator_PreInc || op == CXUnaryOperator_PreDec ||
               op == CXUnaryOperator_AddrOf;
    }
    return 0;
}

/* In a task module, warns where checkpointable code writes a file-scope
 * variable or a static local: the worker's VTs share it and it does not
 * move with a VT. */
static enum CXChildVisitResult pp_static_write_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_fn *fn = d;
    int lhs = pp_writes_operand(c);
    if (!lhs)
        return CXChildVisit_Recurse;
    pp_kids kk = pp_children(c);
    CXCursor t = kk.n >= 1 ? kk.v[0] : clang_getNullCursor();
    free(kk.v);
    CXCursor v = clang_Cursor_isNull(t) ? t : pp_write_var(t);
    if (!clang_Cursor_isNull(v)) {
        int file_scope = pp_kind(clang_getCursorSemanticParent(v)) == CXCursor_TranslationUnit;
        enum CX_StorageClass sc = clang_Cursor_getStorageClass(v);
        if (file_scope || sc == CX_SC_Static || sc == CX_SC_Extern) {
            char *name = pp_cx(clang_getCursorSpelling(v));
            CXCursor at = pp_strip(t);
            while (pp_kind(at) != CXCursor_DeclRefExpr) {
                pp_kids ak = pp_children(at);
                at = ak.n >= 1 ? pp_strip(ak.v[0]) : at;
                free(ak.v);
                if (!ak.n)
                    break;
            }
            pp_warn(PP_LOC(at),
                    "checkpointable function '%s' writes %s '%s': in a task module it is "
                    "shared by every VT of the worker and does not move with a VT",
                    fn->name, file_scope ? "file-scope variable" : "static local", name);
            free(name);
        }
    }
    return CXChildVisit_Recurse;
}

/* Lays out the frame of a checkpointable function: parameters, locals. */
static void pp_layout(pp_fn *fn)
{
    CXCursor c = fn->def;
    CXType ft = clang_getCursorType(c);
    fn->ret = clang_getResultType(ft);
    fn->ret_void = clang_getCanonicalType(fn->ret).kind == CXType_Void;
    fn->pcf = fn->is_task ? "fr->t.h.pc" : fn->is_main ? "fr->m.h.pc" : "fr->h.pc";
    int nargs = clang_Cursor_getNumArguments(c);
    if (ft.kind == CXType_FunctionNoProto || clang_isFunctionTypeVariadic(ft))
        pp_error(PP_LOC(c), "checkpointable function '%s' must have a prototype and no '...'",
                 fn->name);
    if (fn->is_task && nargs != 2)
        pp_error(PP_LOC(c), "task entry '%s' must be 'void %s(const void *arg, size_t len)'",
                 fn->name, fn->name);
    if (fn->is_main && nargs != 0 && nargs != 2)
        pp_error(PP_LOC(c), "main must be 'int main(void)' or 'int main(int argc, char **argv)'");
    static const char *task_f[] = {"t.arg", "t.len"}, *main_f[] = {"m.argc", "m.argv"};
    fn->nparams = nargs > 0 ? (unsigned)nargs : 0;
    for (int i = 0; i < nargs; i++) {
        CXCursor p = clang_Cursor_getArgument(c, (unsigned)i);
        const char *fixed = fn->is_task && i < 2   ? task_f[i]
                            : fn->is_main && i < 2 ? main_f[i]
                                                   : NULL;
        pp_var_add(fn, p, clang_getArgType(ft, (unsigned)i), fixed);
        if (pp_is_vm(clang_getArgType(ft, (unsigned)i)))
            pp_vla_shape(fn, p, clang_getArgType(ft, (unsigned)i), &fn->vars[fn->nvars - 1].vla);
    }
    pp_kids k = pp_children(c);
    for (unsigned i = 0; i < k.n; i++)
        if (pp_kind(k.v[i]) == CXCursor_CompoundStmt) {
            pp_vc vc = {fn};
            clang_visitChildren(k.v[i], pp_vars_cb, &vc);
            if (!ctx.main_task)
                clang_visitChildren(k.v[i], pp_static_write_cb, fn);
        }
    free(k.v);
}

/* Pass: the frame layout and the frame type of every checkpointable
 * function. */
void pp_layout_frames(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp) {
            pp_layout(&ctx.fns[i]);
            pp_frame_type((int)i);
        }
}

/* ===================================================================
 * C locals and polls: which variables stay in C locals of the body,
 * which loops poll
 * =================================================================== */

/* How the resumable body names var vi: its C local (lev__vN_FIELD, N the
 * var's index, so that no two names meet) or its frame field. */
static char *pp_var_ref(pp_fn *fn, int vi)
{
    pp_var *v = &fn->vars[vi];
    if (v->vla.kind) {
        /* an lvalue of the declared type, its dimensions read from the
         * frame: the array on the heap, or the pointer field (declared
         * with a compatible type of unknown first dimension) */
        pp_buf d = {0};
        pp_puts(&d, v->vla.kind == PP_VLA_ARRAY ? "(*)" : "(**)");
        for (unsigned i = 0; i < v->vla.ndims; i++)
            if (v->vla.cdim[i] < 0)
                pp_printf(&d, "[fr->lev__d%u_%s]", i, v->field);
            else
                pp_printf(&d, "[%lld]", v->vla.cdim[i]);
        char *ty = pp_decl(v->vla.elem, d.p);
        char *r = pp_fmt("(*(%s)%sfr->%s)", ty, v->vla.kind == PP_VLA_ARRAY ? "" : "&", v->field);
        free(ty);
        free(d.p);
        return r;
    }
    if (!v->reg)
        return pp_fmt("fr->%s", v->field);
    char *r = pp_fmt("lev__v%d_%s", vi, v->field);
    for (char *q = r; *q; q++)
        if (*q == '.')
            *q = '_';
    return r;
}

typedef struct pp_rs {
    pp_fn *fn;
    unsigned *refs;
    unsigned char *taken;
} pp_rs;

static enum CXChildVisitResult pp_regs_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_rs *rs = d;
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_DeclRefExpr) {
        int vi = pp_var_find(rs->fn, clang_getCursorReferenced(c));
        if (vi >= 0)
            rs->refs[vi]++;
    } else if (k == CXCursor_UnaryOperator &&
               clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_AddrOf) {
        pp_kids kk = pp_children(c);
        CXCursor o = kk.n == 1 ? pp_strip(kk.v[0]) : clang_getNullCursor();
        if (pp_kind(o) == CXCursor_DeclRefExpr) {
            int vi = pp_var_find(rs->fn, clang_getCursorReferenced(o));
            if (vi >= 0)
                rs->taken[vi] = 1;
        }
        free(kk.v);
    }
    return CXChildVisit_Recurse;
}

/* Whether a value of type t can live in a C local of the body (spilled
 * and reloaded by plain assignment): scalars, enums and pointers. */
static int pp_scalar(CXType t)
{
    CXType ct = clang_getCanonicalType(t);
    enum CXTypeKind k = ct.kind;
    return ((k >= CXType_Bool && k <= CXType_LongDouble) || k == CXType_Pointer ||
            k == CXType_Enum) &&
           !clang_isVolatileQualifiedType(t) && !clang_isVolatileQualifiedType(ct);
}

/* Chooses the vars that live in C locals while the body runs: scalars and
 * pointers that are used and whose address is never taken. They are loaded
 * from the frame when the body is entered or resumed and stored back only
 * when it unwinds; arrays, structs, volatile and address-taken variables
 * stay in the frame, where pointers to them remain valid. */
static void pp_regs(pp_fn *fn)
{
    size_t n = fn->nvars + 1;
    pp_rs rs = {fn, pp_xrealloc(NULL, n * sizeof *rs.refs), pp_xrealloc(NULL, n)};
    memset(rs.refs, 0, n * sizeof *rs.refs);
    memset(rs.taken, 0, n);
    clang_visitChildren(fn->def, pp_regs_cb, &rs);
    for (unsigned i = 0; i < fn->nvars; i++) {
        fn->vars[i].refs = rs.refs[i];
        fn->vars[i].reg = pp_scalar(fn->vars[i].type) && !fn->vars[i].vla.kind && rs.refs[i] &&
                          !rs.taken[i];
    }
    free(rs.refs);
    free(rs.taken);
}

/* The statement returning `code` (a LEV_RUN_* expression) from a body
 * of fn, with the value `val` (NULL: none): task and main entries return
 * the int the runtime expects, other functions their __ret struct. */
static char *pp_return(pp_fn *fn, const char *code, const char *val)
{
    if (fn->is_task || fn->is_main)
        return pp_fmt("return %s;", code);
    if (val)
        return pp_fmt("return (lev__ret_t){.rc = %s, .v = (%s)};", code, val);
    return pp_fmt("return (lev__ret_t){.rc = %s};", code);
}

/* Numbers a new safe point or call site of fn at offset `at` of its input
 * (what decides which variables are in scope there). */
static unsigned pp_site_new(pp_fn *fn, unsigned at)
{
    unsigned k = ++fn->npc;
    while (k >= fn->capsites) {
        fn->capsites = fn->capsites ? fn->capsites * 2 : 16;
        fn->site_at = pp_xrealloc(fn->site_at, fn->capsites * sizeof *fn->site_at);
    }
    fn->site_at[k] = at;
    return k;
}

static enum CXChildVisitResult pp_site_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_kind(c) == CXCursor_UnaryExpr)
        return CXChildVisit_Continue; /* sizeof, _Alignof: not evaluated */
    if (pp_kind(c) == CXCursor_VarDecl) {
        pp_visit_init(c, pp_site_cb, d);
        return *(int *)d ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    if (pp_kind(c) != CXCursor_CallExpr)
        return CXChildVisit_Recurse;
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) == CXCursor_FunctionDecl) {
        char *name = pp_cx(clang_getCursorSpelling(ref));
        char *usr = pp_cx(clang_getCursorUSR(ref));
        int g = pp_fn_find(usr);
        if (pp_safepoint_kind(name) || (g >= 0 && ctx.fns[g].cp))
            *(int *)d = 1;
        free(name);
        free(usr);
    } else if (pp_icall_cp(c)) {
        *(int *)d = 1;
    }
    return *(int *)d ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static enum CXChildVisitResult pp_site_any_call_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_kind(c) == CXCursor_CallExpr) {
        *(int *)d = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether c is or contains a safe point or a call of a checkpointable
 * function. */
static int pp_has_site(CXCursor c)
{
    int found = 0;
    if (pp_site_cb(c, c, &found) == CXChildVisit_Recurse)
        clang_visitChildren(c, pp_site_cb, &found);
    return found;
}

typedef struct pp_mod {
    CXCursor *v;
    unsigned n, cap;
    int hit;
} pp_mod;

static enum CXChildVisitResult pp_refs_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_mod *m = d;
    if (pp_kind(c) == CXCursor_DeclRefExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        if (pp_kind(r) == CXCursor_VarDecl || pp_kind(r) == CXCursor_ParmDecl) {
            PP_PUSH(m->v, m->n, m->cap);
            m->v[m->n++] = r;
        }
    }
    return CXChildVisit_Recurse;
}

/* Whether e (stripped) names one of m's variables. */
static int pp_names_one(pp_mod *m, CXCursor e)
{
    e = pp_strip(e);
    if (pp_kind(e) != CXCursor_DeclRefExpr)
        return 0;
    CXCursor r = clang_getCursorReferenced(e);
    for (unsigned i = 0; i < m->n; i++)
        if (clang_equalCursors(m->v[i], r))
            return 1;
    return 0;
}

static enum CXChildVisitResult pp_mod_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_mod *m = d;
    int lhs = pp_writes_operand(c);
    if (lhs) {
        pp_kids kk = pp_children(c);
        if (kk.n >= 1 && pp_names_one(m, kk.v[0]))
            m->hit = 1;
        free(kk.v);
    }
    return m->hit ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* A counted for loop: `for (...; i OP bound; i++ / i-- / i += s / i -= s)`
 * (OP one of < <= > >= !=) whose body assigns none of the variables of
 * its condition and increment, nor takes their address: its trip count is
 * fixed when it starts, so it bounds the time between two polls of an
 * enclosing loop. */
static int pp_counted(CXCursor cond, CXCursor inc, CXCursor body)
{
    if (clang_Cursor_isNull(cond) || clang_Cursor_isNull(inc) || clang_Cursor_isNull(body))
        return 0;
    CXCursor in = pp_strip(inc), cn = pp_strip(cond);
    enum CXCursorKind ik = pp_kind(in);
    if (ik == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(in);
        if (op != CXUnaryOperator_PostInc && op != CXUnaryOperator_PostDec &&
            op != CXUnaryOperator_PreInc && op != CXUnaryOperator_PreDec)
            return 0;
    } else if (ik == CXCursor_CompoundAssignOperator) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(in);
        if (op != CXBinaryOperator_AddAssign && op != CXBinaryOperator_SubAssign)
            return 0;
    } else {
        return 0;
    }
    if (pp_kind(cn) != CXCursor_BinaryOperator)
        return 0;
    enum CXBinaryOperatorKind cop = clang_getCursorBinaryOperatorKind(cn);
    if (cop != CXBinaryOperator_LT && cop != CXBinaryOperator_GT && cop != CXBinaryOperator_LE &&
        cop != CXBinaryOperator_GE && cop != CXBinaryOperator_NE)
        return 0;
    pp_kids ik2 = pp_children(in), ck = pp_children(cn);
    int ok = ik2.n >= 1 && ck.n == 2;
    pp_mod iv = {0}, m = {0};
    if (ok) {
        /* the induction variable is one side of the comparison */
        CXCursor v = pp_strip(ik2.v[0]);
        if (pp_kind(v) == CXCursor_DeclRefExpr) {
            PP_PUSH(iv.v, iv.n, iv.cap);
            iv.v[iv.n++] = clang_getCursorReferenced(v);
        }
        ok = iv.n && (pp_names_one(&iv, ck.v[0]) || pp_names_one(&iv, ck.v[1]));
    }
    if (ok) {
        clang_visitChildren(cn, pp_refs_cb, &m);
        clang_visitChildren(in, pp_refs_cb, &m);
        if (pp_mod_cb(body, body, &m) != CXChildVisit_Break)
            clang_visitChildren(body, pp_mod_cb, &m);
        ok = !m.hit;
    }
    free(iv.v);
    free(m.v);
    free(ik2.v);
    free(ck.v);
    return ok;
}

/* ===================================================================
 * Integers that hold pointers: a capture relocates pointers, which it
 * finds by type; a pointer converted to an integer and kept there across
 * a safe point would come back pointing into the old process
 * =================================================================== */

/* Whether UnexposedExpr children k are those of GNU `a ?: b`: a, the two
 * opaque copies of a that clang keeps (same extent), b. */
static int pp_is_elvis(const pp_kids *k)
{
    if (k->n != 4)
        return 0;
    CXSourceRange r = clang_getCursorExtent(k->v[0]);
    return clang_equalRanges(r, clang_getCursorExtent(k->v[1])) &&
           clang_equalRanges(r, clang_getCursorExtent(k->v[2]));
}

/* Whether t is an integer type wide enough for a pointer's bits. */
static int pp_wide_int(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    enum CXTypeKind k = c.kind;
    int integer =
        (k >= CXType_Char_U && k <= CXType_UInt128) || (k >= CXType_Char_S && k <= CXType_Int128);
    return integer && clang_Type_getSizeOf(c) >= (long long)sizeof(void *);
}

static int pp_holds_wide(CXType t);

static enum CXVisitorResult pp_wide_field_cb(CXCursor c, CXClientData d)
{
    if (pp_holds_wide(clang_getCursorType(c))) {
        *(int *)d = 1;
        return CXVisit_Break;
    }
    return CXVisit_Continue;
}

/* Whether a variable of type t may keep a pointer's bits in an integer:
 * a wide integer, or an array or struct holding one. */
static int pp_holds_wide(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind == CXType_ConstantArray)
        return pp_holds_wide(clang_getArrayElementType(c));
    if (c.kind == CXType_Record) {
        int found = 0;
        clang_Type_visitFields(c, pp_wide_field_cb, &found);
        return found;
    }
    return pp_wide_int(c);
}

/* What may hold a pointer's bits at one point of a body, per variable of
 * the function: hold (and the conversion it came from), crossed (held at
 * a resume point since it was last written, and which). */
typedef struct pp_ist {
    unsigned char *hold, *crossed;
    CXCursor *conv, *at;
} pp_ist;

typedef struct pp_ia {
    pp_fn *fn;
    int fi; /* index of fn */
    unsigned n;
    unsigned char *tracked, *taken, *done;
    pp_ist *sw; /* state entering the innermost switch */
    int report, changed;
} pp_ia;

/* Conversions of pointers passed to the parameters of each function
 * (null: none seen), from the callers' analyses. */

static pp_ist pp_ist_new(unsigned n)
{
    pp_ist s = {pp_xrealloc(NULL, n + 1), pp_xrealloc(NULL, n + 1),
                pp_xrealloc(NULL, (n + 1) * sizeof(CXCursor)),
                pp_xrealloc(NULL, (n + 1) * sizeof(CXCursor))};
    memset(s.hold, 0, n + 1);
    memset(s.crossed, 0, n + 1);
    for (unsigned i = 0; i <= n; i++)
        s.conv[i] = s.at[i] = clang_getNullCursor();
    return s;
}

static void pp_ist_copy(pp_ist *d, const pp_ist *s, unsigned n)
{
    memcpy(d->hold, s->hold, n);
    memcpy(d->crossed, s->crossed, n);
    memcpy(d->conv, s->conv, n * sizeof(CXCursor));
    memcpy(d->at, s->at, n * sizeof(CXCursor));
}

/* d = d joined with s (what holds on either path); 1: d changed. */
static int pp_ist_join(pp_ist *d, const pp_ist *s, unsigned n)
{
    int changed = 0;
    for (unsigned i = 0; i < n; i++) {
        if (s->hold[i] && !d->hold[i]) {
            d->hold[i] = 1;
            d->conv[i] = s->conv[i];
            changed = 1;
        }
        if (s->crossed[i] && !d->crossed[i]) {
            d->crossed[i] = 1;
            d->at[i] = s->at[i];
            changed = 1;
        }
    }
    return changed;
}

static void pp_ist_free(pp_ist *s)
{
    free(s->hold);
    free(s->crossed);
    free(s->conv);
    free(s->at);
}

/* The tracked variable e (stripped) names, or -1. */
static int pp_ia_var(pp_ia *a, CXCursor e)
{
    e = pp_strip(e);
    if (pp_kind(e) != CXCursor_DeclRefExpr)
        return -1;
    int vi = pp_var_find(a->fn, clang_getCursorReferenced(e));
    return vi >= 0 && a->tracked[vi] ? vi : -1;
}

/* Whether integer constant e keeps bits of a pointer above its low 12
 * (a mask such as ~7 does; 0xfff, a hash table's size, do not). */
static int pp_high_mask(CXCursor e)
{
    CXEvalResult ev = clang_Cursor_Evaluate(e);
    int high = 0;
    if (ev && clang_EvalResult_getKind(ev) == CXEval_Int)
        high = ((unsigned long long)clang_EvalResult_getAsLongLong(ev) >> 12) != 0;
    if (ev)
        clang_EvalResult_dispose(ev);
    return high;
}

/* Whether the value of integer expression e may be a pointer's bits (see
 * preproc/README.md): a cast of a pointer to a wide integer, a variable
 * that holds one, and what keeps them: + and - of one such operand, |, ^,
 * ~, unary -, & with a constant that keeps the high bits, ?:, comma and
 * assignment. *conv: the conversion. */
static int pp_carry(pp_ia *a, pp_ist *st, CXCursor e, CXCursor *conv)
{
    e = pp_strip(e);
    if (!pp_wide_int(clang_getCursorType(e)))
        return 0;
    enum CXCursorKind k = pp_kind(e);
    pp_kids kk = pp_children(e);
    int r = 0;
    CXCursor c2 = clang_getNullCursor();
    if (k == CXCursor_CStyleCastExpr && kk.n) {
        CXCursor op = kk.v[kk.n - 1];
        if (clang_getCanonicalType(clang_getCursorType(op)).kind == CXType_Pointer) {
            *conv = e;
            r = 1;
        } else {
            r = pp_carry(a, st, op, conv);
        }
    } else if (k == CXCursor_DeclRefExpr) {
        int vi = pp_ia_var(a, e);
        if (vi >= 0 && st->hold[vi]) {
            *conv = st->conv[vi];
            r = 1;
        }
    } else if ((k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) &&
               kk.n == 2) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
        if (op == CXBinaryOperator_Assign || op == CXBinaryOperator_Comma)
            r = pp_carry(a, st, kk.v[1], conv);
        else if (op == CXBinaryOperator_Add || op == CXBinaryOperator_AddAssign ||
                 op == CXBinaryOperator_Or || op == CXBinaryOperator_OrAssign ||
                 op == CXBinaryOperator_Xor || op == CXBinaryOperator_XorAssign)
            r = pp_carry(a, st, kk.v[0], conv) | pp_carry(a, st, kk.v[1], conv);
        else if (op == CXBinaryOperator_Sub || op == CXBinaryOperator_SubAssign)
            r = pp_carry(a, st, kk.v[0], conv) ^
                pp_carry(a, st, kk.v[1], &c2); /* p - q: an offset */
        else if (op == CXBinaryOperator_And || op == CXBinaryOperator_AndAssign)
            r = (pp_high_mask(kk.v[1]) && pp_carry(a, st, kk.v[0], conv)) ||
                (pp_high_mask(kk.v[0]) && pp_carry(a, st, kk.v[1], conv));
        if (r && clang_Cursor_isNull(*conv))
            *conv = c2;
    } else if (k == CXCursor_UnaryOperator && kk.n == 1) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(e);
        if (op == CXUnaryOperator_Plus || op == CXUnaryOperator_Minus ||
            op == CXUnaryOperator_Not || op == CXUnaryOperator_PostInc ||
            op == CXUnaryOperator_PostDec || op == CXUnaryOperator_PreInc ||
            op == CXUnaryOperator_PreDec)
            r = pp_carry(a, st, kk.v[0], conv);
    } else if (k == CXCursor_ConditionalOperator && kk.n == 3) {
        r = pp_carry(a, st, kk.v[1], conv) | pp_carry(a, st, kk.v[2], conv);
    } else if (k == CXCursor_UnexposedExpr && pp_is_elvis(&kk)) {
        r = pp_carry(a, st, kk.v[0], conv) | pp_carry(a, st, kk.v[3], conv);
    }
    free(kk.v);
    return r;
}

/* The line of cursor c, for messages. */
static unsigned pp_line(CXCursor c)
{
    unsigned line = 0;
    clang_getExpansionLocation(PP_LOC(c), NULL, &line, NULL, NULL);
    return line;
}

static void pp_ia_report(pp_ia *a, int vi, CXCursor conv, const char *why, unsigned line)
{
    if (!a->report || a->done[vi])
        return;
    a->done[vi] = 1;
    char *name = pp_cx(clang_getCursorSpelling(a->fn->vars[vi].decl));
    pp_error(PP_LOC(conv),
             "'%s' of checkpointable function '%s' may hold this pointer converted to an "
             "integer at the safe point, checkpointable call or loop poll of line %u, %s: "
             "an image cannot relocate a pointer hidden in an integer; keep it as a pointer",
             name, a->fn->name, line, why);
    free(name);
}

/* A resume point (safe point, call site, poll) at cursor c. */
static void pp_ia_resume(pp_ia *a, pp_ist *st, CXCursor c)
{
    for (unsigned i = 0; i < a->n; i++)
        if (st->hold[i]) {
            if (!st->crossed[i])
                st->at[i] = c;
            st->crossed[i] = 1;
            if (a->taken[i])
                pp_ia_report(a, (int)i, st->conv[i], "and its address is taken", pp_line(c));
        }
}

/* Callee index of a site call c (a safe point: -2), else -1. */
static int pp_ia_site(CXCursor c)
{
    if (pp_kind(c) != CXCursor_CallExpr)
        return -1;
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) != CXCursor_FunctionDecl)
        return -1;
    char *name = pp_cx(clang_getCursorSpelling(ref));
    char *usr = pp_cx(clang_getCursorUSR(ref));
    int g = pp_fn_find(usr);
    int r = pp_safepoint_kind(name) ? -2 : g >= 0 && ctx.fns[g].cp ? g : -1;
    free(name);
    free(usr);
    return r;
}

static void pp_ia_stmt(pp_ia *a, pp_ist *st, CXCursor c);
static void pp_ia_expr(pp_ia *a, pp_ist *st, CXCursor e);

/* Reads of expression e outside its sites (which pp_ia_expr handles): a
 * read of a variable that crossed a resume point holding a pointer is
 * the error. skip: a variable written, not read, by an assignment. */
static void pp_ia_reads(pp_ia *a, pp_ist *st, CXCursor e, CXCursor skip)
{
    enum CXCursorKind k = pp_kind(e);
    if (k == CXCursor_UnaryExpr || k == CXCursor_StmtExpr || pp_ia_site(e) != -1)
        return;
    if (k == CXCursor_DeclRefExpr) {
        int vi = pp_ia_var(a, e);
        if (vi >= 0 && st->crossed[vi] &&
            (clang_Cursor_isNull(skip) || !clang_equalCursors(skip, a->fn->vars[vi].decl)))
            pp_ia_report(a, vi, st->conv[vi], "and is used after it", pp_line(st->at[vi]));
        return;
    }
    pp_kids kk = pp_children(e);
    if (k == CXCursor_BinaryOperator && kk.n == 2 &&
        clang_getCursorBinaryOperatorKind(e) == CXBinaryOperator_Assign) {
        pp_ia_reads(a, st, kk.v[0], pp_write_var(kk.v[0]));
        pp_ia_reads(a, st, kk.v[1], clang_getNullCursor());
    } else {
        for (unsigned i = 0; i < kk.n; i++)
            pp_ia_reads(a, st, kk.v[i], skip);
    }
    free(kk.v);
}

/* Writes of expression e outside its sites: a variable assigned a value
 * that may be a pointer's bits holds one; assigned another value, it
 * holds none (a write of part of it keeps what it held). */
static void pp_ia_writes(pp_ia *a, pp_ist *st, CXCursor e)
{
    enum CXCursorKind k = pp_kind(e);
    if (k == CXCursor_UnaryExpr || k == CXCursor_StmtExpr || pp_ia_site(e) != -1)
        return;
    pp_kids kk = pp_children(e);
    for (unsigned i = 0; i < kk.n; i++)
        pp_ia_writes(a, st, kk.v[i]);
    if (pp_writes_operand(e) && kk.n >= 1 &&
        !(k == CXCursor_UnaryOperator &&
          clang_getCursorUnaryOperatorKind(e) == CXUnaryOperator_AddrOf)) {
        CXCursor v = pp_write_var(kk.v[0]);
        CXCursor conv = clang_getNullCursor();
        int carry = pp_carry(a, st, e, &conv);
        int vi = clang_Cursor_isNull(v) ? -1 : pp_var_find(a->fn, v);
        if (vi >= 0 && a->tracked[vi]) {
            int whole = pp_kind(pp_strip(kk.v[0])) == CXCursor_DeclRefExpr;
            if (whole || carry) {
                st->hold[vi] = (unsigned char)(carry || (!whole && st->hold[vi]));
                st->conv[vi] = carry ? conv : st->conv[vi];
            }
            if (whole)
                st->crossed[vi] = 0;
        } else if (vi < 0 && !clang_Cursor_isNull(v) && carry && ctx.main_task && a->report) {
            int file_scope = pp_kind(clang_getCursorSemanticParent(v)) == CXCursor_TranslationUnit;
            enum CX_StorageClass sc = clang_Cursor_getStorageClass(v);
            if ((file_scope || sc == CX_SC_Static) &&
                !clang_isConstQualifiedType(clang_getCursorType(v))) {
                char *name = pp_cx(clang_getCursorSpelling(v));
                pp_error(PP_LOC(conv),
                         "%s '%s' is assigned this pointer converted to an integer in "
                         "checkpointable function '%s' and travels with the image: an image "
                         "cannot relocate a pointer hidden in an integer; keep it as a pointer",
                         file_scope ? "file-scope variable" : "static local", name, a->fn->name);
                free(name);
            }
        }
    }
    free(kk.v);
}

/* The resume points of expression e in evaluation order (levpp runs the
 * sites of an expression before the rest of it): for each site, the reads
 * and writes of its arguments, then the site; a statement expression's
 * statements where it stands. */
static void pp_ia_sites(pp_ia *a, pp_ist *st, CXCursor e)
{
    enum CXCursorKind k = pp_kind(e);
    if (k == CXCursor_UnaryExpr)
        return;
    if (k == CXCursor_StmtExpr) {
        pp_kids kk = pp_children(e);
        for (unsigned i = 0; i < kk.n; i++)
            pp_ia_stmt(a, st, kk.v[i]);
        free(kk.v);
        return;
    }
    pp_kids kk = pp_children(e);
    for (unsigned i = 0; i < kk.n; i++)
        pp_ia_sites(a, st, kk.v[i]);
    int g = pp_ia_site(e);
    if (g != -1) {
        int nargs = clang_Cursor_getNumArguments(e);
        for (int i = 0; i < nargs; i++) {
            CXCursor arg = clang_Cursor_getArgument(e, (unsigned)i);
            pp_ia_reads(a, st, arg, clang_getNullCursor());
            pp_ia_writes(a, st, arg);
            CXCursor conv = clang_getNullCursor();
            if (g >= 0 && (unsigned)i < ctx.fns[g].nparams && pp_carry(a, st, arg, &conv) &&
                clang_Cursor_isNull(ctx.param_conv[g][i])) {
                ctx.param_conv[g][i] = conv;
                a->changed = 1;
            }
        }
        pp_ia_resume(a, st, e);
    }
    free(kk.v);
}

static void pp_ia_expr(pp_ia *a, pp_ist *st, CXCursor e)
{
    pp_ia_sites(a, st, e);
    pp_ia_reads(a, st, e, clang_getNullCursor());
    pp_ia_writes(a, st, e);
}

/* A loop: head, then (cond, poll, body, inc) until the state at the head
 * settles; for a do-while the body comes before the condition. */
static void pp_ia_loop(pp_ia *a, pp_ist *st, CXCursor loop, CXCursor cond, CXCursor body,
                       CXCursor inc, int is_do)
{
    pp_ist head = pp_ist_new(a->n), cur = pp_ist_new(a->n);
    pp_ist_copy(&head, st, a->n);
    for (int iter = 0; iter < 8; iter++) {
        pp_ist_copy(&cur, &head, a->n);
        if (ctx.auto_poll)
            pp_ia_resume(a, &cur, loop); /* a budget poll comes before the condition */
        if (!is_do && !clang_Cursor_isNull(cond))
            pp_ia_expr(a, &cur, cond);
        if (ctx.auto_poll)
            pp_ia_resume(a, &cur, loop);
        if (!clang_Cursor_isNull(body))
            pp_ia_stmt(a, &cur, body);
        if (!clang_Cursor_isNull(inc))
            pp_ia_expr(a, &cur, inc);
        if (is_do && !clang_Cursor_isNull(cond))
            pp_ia_expr(a, &cur, cond);
        if (!pp_ist_join(&head, &cur, a->n))
            break;
    }
    pp_ist_join(st, &head, a->n);
    pp_ist_free(&head);
    pp_ist_free(&cur);
}

static void pp_ia_stmt(pp_ia *a, pp_ist *st, CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    pp_kids kk = pp_children(c);
    switch (k) {
    case CXCursor_CompoundStmt:
        for (unsigned i = 0; i < kk.n; i++)
            pp_ia_stmt(a, st, kk.v[i]);
        break;
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
    case CXCursor_LabelStmt:
        if (k != CXCursor_LabelStmt && a->sw)
            pp_ist_join(st, a->sw, a->n);
        if (kk.n)
            pp_ia_stmt(a, st, kk.v[kk.n - 1]);
        break;
    case CXCursor_DeclStmt:
        for (unsigned i = 0; i < kk.n; i++) {
            if (pp_kind(kk.v[i]) != CXCursor_VarDecl)
                continue;
            CXCursor init = clang_Cursor_getVarDeclInitializer(kk.v[i]);
            if (!clang_Cursor_isNull(init))
                pp_ia_expr(a, st, init);
            int vi = pp_var_find(a->fn, kk.v[i]);
            if (vi < 0 || !a->tracked[vi])
                continue;
            CXCursor conv = clang_getNullCursor();
            st->hold[vi] =
                (unsigned char)(!clang_Cursor_isNull(init) && pp_carry(a, st, init, &conv));
            st->conv[vi] = conv;
            st->crossed[vi] = 0;
        }
        break;
    case CXCursor_IfStmt: {
        if (kk.n < 2)
            break;
        pp_ia_expr(a, st, kk.v[0]);
        pp_ist other = pp_ist_new(a->n);
        pp_ist_copy(&other, st, a->n);
        pp_ia_stmt(a, st, kk.v[1]);
        if (kk.n > 2)
            pp_ia_stmt(a, &other, kk.v[2]);
        pp_ist_join(st, &other, a->n);
        pp_ist_free(&other);
        break;
    }
    case CXCursor_SwitchStmt: {
        if (kk.n < 2)
            break;
        pp_ia_expr(a, st, kk.v[0]);
        pp_ist entry = pp_ist_new(a->n), *outer = a->sw;
        pp_ist_copy(&entry, st, a->n);
        a->sw = &entry;
        pp_ia_stmt(a, st, kk.v[kk.n - 1]);
        a->sw = outer;
        pp_ist_join(st, &entry, a->n);
        pp_ist_free(&entry);
        break;
    }
    case CXCursor_WhileStmt:
        if (kk.n == 2)
            pp_ia_loop(a, st, c, kk.v[0], kk.v[1], clang_getNullCursor(), 0);
        break;
    case CXCursor_DoStmt:
        if (kk.n == 2)
            pp_ia_loop(a, st, c, kk.v[1], kk.v[0], clang_getNullCursor(), 1);
        break;
    case CXCursor_ForStmt: {
        /* the init (a declaration, or the first of three expressions)
         * runs once; the condition and the increment with the body */
        CXCursor body = kk.n ? kk.v[kk.n - 1] : clang_getNullCursor();
        CXCursor cond = clang_getNullCursor(), inc = cond;
        unsigned first = 0;
        if (kk.n >= 2 && (pp_kind(kk.v[0]) == CXCursor_DeclStmt || kk.n == 4)) {
            pp_ia_stmt(a, st, kk.v[0]);
            first = 1;
        }
        if (first + 1 < kk.n)
            cond = kk.v[first];
        if (first + 2 < kk.n)
            inc = kk.v[first + 1];
        pp_ia_loop(a, st, c, cond, body, inc, 0);
        break;
    }
    case CXCursor_ReturnStmt:
        if (kk.n)
            pp_ia_expr(a, st, kk.v[0]);
        memset(st->hold, 0, a->n);
        memset(st->crossed, 0, a->n);
        break;
    default:
        if (clang_isExpression(k))
            pp_ia_expr(a, st, c);
        else if (clang_isStatement(k))
            for (unsigned i = 0; i < kk.n; i++)
                pp_ia_stmt(a, st, kk.v[i]);
        break;
    }
    free(kk.v);
}

/* Analyses checkpointable function fi (report: print the errors). */
static void pp_ia_fn(int fi, int report, int *changed)
{
    pp_fn *fn = &ctx.fns[fi];
    unsigned n = fn->nvars;
    pp_ia a = {fn,   fi,     n, pp_xrealloc(NULL, n + 1), NULL, pp_xrealloc(NULL, n + 1),
               NULL, report, 0};
    pp_rs rs = {fn, pp_xrealloc(NULL, (n + 1) * sizeof *rs.refs), pp_xrealloc(NULL, n + 1)};
    memset(rs.refs, 0, (n + 1) * sizeof *rs.refs);
    memset(rs.taken, 0, n + 1);
    clang_visitChildren(fn->def, pp_regs_cb, &rs);
    a.taken = rs.taken;
    memset(a.done, 0, n + 1);
    for (unsigned i = 0; i < n; i++)
        a.tracked[i] = (unsigned char)pp_holds_wide(fn->vars[i].type);
    pp_ist st = pp_ist_new(n);
    for (unsigned i = 0; i < fn->nparams && i < n; i++)
        if (!clang_Cursor_isNull(ctx.param_conv[fi][i]) && a.tracked[i]) {
            st.hold[i] = 1;
            st.conv[i] = ctx.param_conv[fi][i];
        }
    pp_kids k = pp_children(fn->def);
    for (unsigned i = 0; i < k.n; i++)
        if (pp_kind(k.v[i]) == CXCursor_CompoundStmt)
            pp_ia_stmt(&a, &st, k.v[i]);
    free(k.v);
    *changed |= a.changed;
    pp_ist_free(&st);
    free(a.tracked);
    free(a.done);
    free(rs.refs);
    free(rs.taken);
}

/* Refuses the integers that may hold a pointer across a safe point in
 * checkpointable functions (see preproc/README.md); conversions passed to
 * parameters are followed into the callees. */
static void pp_int_ptrs(void)
{
    ctx.param_conv = pp_xrealloc(NULL, (ctx.nfns + 1) * sizeof *ctx.param_conv);
    for (unsigned i = 0; i < ctx.nfns; i++) {
        unsigned np = ctx.fns[i].nparams;
        ctx.param_conv[i] = pp_xrealloc(NULL, (np + 1) * sizeof(CXCursor));
        for (unsigned j = 0; j <= np; j++)
            ctx.param_conv[i][j] = clang_getNullCursor();
    }
    for (int pass = 0, changed = 1; changed && pass < 16; pass++) {
        changed = 0;
        for (unsigned i = 0; i < ctx.nfns; i++)
            if (ctx.fns[i].cp)
                pp_ia_fn((int)i, 0, &changed);
    }
    int ignored = 0;
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp)
            pp_ia_fn((int)i, 1, &ignored);
    for (unsigned i = 0; i < ctx.nfns; i++)
        free(ctx.param_conv[i]);
    free(ctx.param_conv);
    ctx.param_conv = NULL;
}

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
enum { S_POINT = 0, S_CALL = 1, S_ICALL, S_AND, S_OR, S_COND, S_COMMA, S_ELVIS, S_STMTEXPR };

typedef struct pp_unit pp_unit;

typedef struct pp_site {
    int kind; /* S_* */
    CXCursor cur;
    int callee;
    unsigned k;      /* resume point; S_AND/S_OR/S_COND: temporary, if used */
    CXCursor op[3];  /* operands of a lowered operator */
    pp_unit *sub[2]; /* the sites of its conditionally evaluated operands */
    int used;        /* the lowered operator's value is used */
    const char *spk; /* S_POINT: its LEV_SP_* kind */
} pp_site;

struct pp_unit {
    pp_site *v;
    unsigned n, cap;
    CXCursor top;
    int has_top;
    int lev_return;
    int nested; /* the sites of an operand run conditionally: no lev_return */
};

typedef struct pp_walk {
    pp_fn *fn;
    pp_file *f;
    unsigned body_b, body_e;
    int loops; /* loops of the function around the statement being walked */
    int depth; /* statement nesting of the statement being walked */
} pp_walk;

static const char *pp_ctx_name(int flags)
{
    if (flags & F_STMTEXPR)
        return "a statement expression";
    return "a conditionally evaluated operand (&&, ||, ?:)";
}

static void pp_expr(pp_walk *w, CXCursor c, int flags, pp_unit *u);

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
    char *name = pp_cx(clang_getCursorSpelling(ref));
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
 * read twice (an error). */
static int pp_arg_once(pp_walk *w, CXCursor c, unsigned b, unsigned e)
{
    if (!pp_in_macro(c))
        return 1;
    for (unsigned i = 0; i < w->f->nedits; i++) {
        pp_edit *ed = &w->f->edits[i];
        if (ed->cls == E_REPL && ed->run && ed->b == b && ed->e == e) {
            pp_error_at(w, b,
                     "a macro argument that calls a checkpointable function in '%s' is "
                     "evaluated more than once by the macro; call it before the macro and pass "
                     "the result",
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
static char *pp_slot_ref(int x, unsigned k, CXType t)
{
    return pp_fmt(pp_scalar(t) ? "lev__%c%u" : "fr->lev__%c%u", x, k);
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
 * candidate: pp_icand) becomes a resumable site (S_ICALL), dispatched on
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
    } else if (pp_arg_once(w, c, cb, ce)) {
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
    char *name = pp_cx(clang_getCursorSpelling(ref));
    static const char *jmp[] = {"setjmp",      "_setjmp",          "sigsetjmp",
                                "__sigsetjmp", "longjmp",          "_longjmp",
                                "siglongjmp",  "__builtin_setjmp", NULL};
    for (int i = 0; jmp[i]; i++)
        if (!strcmp(name, jmp[i]))
            pp_error(PP_LOC(c),
                     "%s in checkpointable function '%s': a jump buffer holds machine state "
                     "that cannot be made mobile",
                     name, w->fn->name);
    if (!strcmp(name, "pthread_create") || !strcmp(name, "thrd_create"))
        pp_error(PP_LOC(c),
                 "%s in checkpointable function '%s': a native thread cannot be captured", name,
                 w->fn->name);
    if (!strcmp(name, "signal") || !strcmp(name, "sigaction"))
        pp_error(PP_LOC(c),
                 "%s in checkpointable function '%s': signal handlers cannot be made mobile", name,
                 w->fn->name);
    char *usr = pp_cx(clang_getCursorUSR(ref));
    int g = pp_fn_find(usr);
    free(usr);
    const char *spk = pp_safepoint_kind(name);
    int is_ck = spk != NULL;
    int is_ret = !strcmp(name, "lev_return");
    pp_expr_kids(w, c, flags, u);
    if (flags & F_UNEVAL) {
        free(name);
        return;
    }
    if (is_ret) {
        if (!u || flags || !pp_is_top(u, c) || u->lev_return || u->nested)
            pp_error(PP_LOC(c),
                     "lev_return in checkpointable function '%s' must be a statement of its own",
                     w->fn->name);
        else
            u->lev_return = 1;
    }
    unsigned cb, ce;
    if (is_ck || (g >= 0 && ctx.fns[g].cp)) {
        if (!pp_span(w->f, c, &cb, &ce)) {
            pp_error(PP_LOC(c),
                     "call to %s '%s' inside a macro expansion is not supported; call it "
                     "outside the macro",
                     is_ck ? "safe point" : "checkpointable function", name);
        } else if (flags & F_LATE) {
            pp_error_at(w, cb,
                     "call to %s '%s' in a macro argument that the macro evaluates after "
                     "other code of its expansion, conditionally or repeatedly, is not "
                     "supported; call it before the macro and pass the result",
                     is_ck ? "safe point" : "checkpointable function", name);
        } else if (!u || flags) {
            pp_error(PP_LOC(c),
                     "call to checkpointable function '%s' inside %s is not supported yet", name,
                     u ? pp_ctx_name(flags) : "this context");
        } else if (!is_ck && (ctx.fns[g].is_task || ctx.fns[g].is_main)) {
            pp_error(PP_LOC(c), "direct call of the entry '%s' is not supported", name);
        } else if (!pp_arg_once(w, c, cb, ce)) {
            /* reported */
        } else {
            unsigned k = pp_site_new(w->fn, pp_begin(c));
            PP_PUSH(u->v, u->n, u->cap);
            u->v[u->n++] =
                (pp_site){.kind = is_ck ? S_POINT : S_CALL, .cur = c, .callee = g, .k = k, .spk = spk};
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
 * unit, read where the lowered operator was. */
static unsigned pp_tmp_new(pp_fn *fn, CXType t)
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
    char *sp = pp_cx(clang_getTypeSpelling(t));
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
        return pp_arg_once(w, c, b, e);
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

static void pp_stmt(pp_walk *w, CXCursor c, int depth);

static enum CXChildVisitResult pp_effect_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_UnaryExpr)
        return CXChildVisit_Continue; /* sizeof: not evaluated */
    if (k == CXCursor_CallExpr || k == CXCursor_StmtExpr || pp_writes_operand(c) ||
        clang_isVolatileQualifiedType(clang_getCursorType(c))) {
        *(int *)d = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether evaluating expression c has no side effect: no call, no
 * assignment, no ++ or --, no volatile access (sizeof operands aside). */
static int pp_no_effect(CXCursor c)
{
    int found = 0;
    if (pp_effect_cb(c, c, &found) == CXChildVisit_Recurse)
        clang_visitChildren(c, pp_effect_cb, &found);
    return !found;
}

/* The first full expression that macro-expanded statement c evaluates, and
 * evaluates once, before anything else of it: the condition of an if or a
 * switch, the initialiser of the first declarator, an expression
 * statement; the first statement of a block or of a `do ... while (0)`.
 * Null when there is none (a loop, say). */
static CXCursor pp_macro_first(CXCursor c)
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
static void pp_macro_walk(pp_walk *w, CXCursor c, CXCursor first, pp_unit *u, int depth)
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

static void pp_expr(pp_walk *w, CXCursor c, int flags, pp_unit *u)
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
    case CXCursor_BinaryOperator: {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(c);
        pp_kids k = pp_children(c);
        int seq = op == CXBinaryOperator_LAnd || op == CXBinaryOperator_LOr ||
                  op == CXBinaryOperator_Comma;
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
                pp_lower_logic(w, c, op == CXBinaryOperator_LAnd ? S_AND : S_OR, k.v[0], k.v[1],
                               flags, u);
        } else if (k.n == 2) {
            pp_expr(w, k.v[0], flags, u);
            pp_expr(w, k.v[1], flags | (seq && !comma ? F_COND : 0), u);
        } else {
            for (unsigned i = 0; i < k.n; i++)
                pp_expr(w, k.v[i], flags, u);
        }
        free(k.v);
        return;
    }
    case CXCursor_ConditionalOperator: {
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
        return;
    }
    case CXCursor_UnaryExpr:
        pp_expr_kids(w, c, flags | F_UNEVAL, u);
        return;
    case CXCursor_UnexposedExpr: {
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
        return;
    }
    case CXCursor_StmtExpr:
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
        pp_error(PP_LOC(c),
                 "computed goto (label address) in checkpointable function '%s' "
                 "cannot be made mobile",
                 w->fn->name);
        return;
    case CXCursor_GCCAsmStmt:
    case CXCursor_MSAsmStmt:
        pp_error(PP_LOC(c),
                 "inline assembly in checkpointable function '%s' cannot be made "
                 "mobile",
                 w->fn->name);
        return;
    default:
        pp_expr_kids(w, c, flags, u);
        return;
    }
}

static void pp_seqs(pp_walk *w, pp_unit *u, pp_buf *b);

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
                pp_printf(b, "\n%s = (%s);", t, x[i + 1]);
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
            pp_printf(b, t ? "\n%s = (%s);\n}" : "\n%s(void)(%s);\n}", t ? t : "", x);
            free(x);
        }
        pp_puts(b, "\n}");
    }
    free(t);
}

/* Records that input f calls checkpointable function g of another input,
 * whose body is only known in its own output (declarations: pp_emit). */
static void pp_xcallee(pp_file *f, int g)
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
              "    if (0) {\n    lev__resume_%u: __attribute__((unused));\n"
              "        lev__cf = lev_frame_callee(vt, fr, sizeof *fr);\n"
              "        lev__fp = 0;\n"
              "        if (!lev__cf) {\n"
              "            lev_vt_fail(vt, LEV_EFAILED, \"%s: no frame to resume\");\n"
              "            %s\n        }\n    }\n"
              "    if (LEV_UNLIKELY(lev__cf != NULL)) {\n"
              "        switch (((lev_frame *)lev__cf)->fn) {\n",
              callee, callee, s->k, fn->name, ex);
    const char *v = is_void ? "" : " lev__v = lev__x.v;";
    int *cand = pp_xrealloc(NULL, (ctx.nfns + 1) * sizeof *cand);
    unsigned nc = 0;
    for (unsigned j = 0; j < ctx.nfns; j++)
        if (ctx.fns[j].cp && pp_icand(&ctx.fns[j], key)) {
            cand[nc++] = (int)j;
            if (ctx.fns[j].file != fn->file)
                pp_xcallee(w->f, (int)j);
        }
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
              "resume through a pointer\");\n            %s\n        }\n    }",
              fn->name, ex);
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
    pp_printf(b, " else {\n        %slev__fp(", is_void ? "" : "lev__v = ");
    pp_buf args = {0};
    pp_args_text(w, s->cur, &args);
    if (args.p)
        pp_puts(b, args.p + 2); /* without the first ", " */
    free(args.p);
    pp_printf(b,
              ");\n        lev__rc = LEV_RUN_DONE;\n    }\n"
              "    if (LEV_UNLIKELY(lev__rc != LEV_RUN_DONE)) {\n"
              "        if (lev__rc == LEV_RUN_UNWIND)\n            goto lev__unwind_%u;\n"
              "        if (lev__cf)\n            lev_frame_pop(vt, lev__cf);\n"
              "        %s\n    }\n"
              "    if (LEV_UNLIKELY(lev__cf != NULL))\n        lev_frame_pop(vt, lev__cf);\n",
              s->k, rc);
    if (!is_void) {
        char *r = pp_slot_ref('r', s->k, rt);
        pp_printf(b, "    %s = lev__v;\n", r);
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
static void pp_seqs(pp_walk *w, pp_unit *u, pp_buf *b)
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
                      "    goto lev__unwind_%u;\nlev__resume_%u: __attribute__((unused));",
                      always ? "" : "lev_poll(vt) && ", s->spk, s->k, s->k);
            continue;
        }
        if (s->kind == S_ICALL) {
            pp_icall_text(w, s, b);
            continue;
        }
        pp_fn *g = &ctx.fns[s->callee];
        int nargs = clang_Cursor_getNumArguments(s->cur);
        int cross = g->file != fn->file;
        if (cross)
            pp_xcallee(w->f, s->callee);
        /* A fresh call runs the callee's __run with the arguments (it gets
         * a frame if it needs one); a resumed call runs its __resume on
         * the frame the runtime restored, and pops it. */
        char *ex = pp_return(fn, "LEV_RUN_EXIT", NULL);
        pp_printf(b,
                  "\n{\n    void *lev__cf = NULL;\n    struct %s__ret lev__x;\n"
                  "    if (0) {\n    lev__resume_%u: __attribute__((unused));\n"
                  "        lev__cf = lev_frame_callee(vt, fr, sizeof *fr);\n"
                  "        if (!lev__cf) {\n"
                  "            lev_vt_fail(vt, LEV_EFAILED, \"%s: no frame to resume\");\n"
                  "            %s\n        }\n    }\n",
                  g->cname, s->k, fn->name, ex);
        free(ex);
        const char *x = cross ? "x" : "";
        pp_printf(b,
                  "    if (LEV_UNLIKELY(lev__cf != NULL))\n        lev__x = %s__%sresume(vt, "
                  "lev__cf);\n    else\n        lev__x = %s__%srun(vt",
                  g->cname, x, g->cname, x);
        for (int a = 0; a < nargs; a++) {
            char *txt = pp_render_str(w->f, clang_Cursor_getArgument(s->cur, (unsigned)a), 1);
            pp_printf(b, ", (%s)", txt);
            free(txt);
        }
        char *rt = pp_return(fn, "lev__x.rc", NULL);
        pp_printf(b,
                  ");\n    if (LEV_UNLIKELY(lev__x.rc != LEV_RUN_DONE)) {\n"
                  "        if (lev__x.rc == LEV_RUN_UNWIND)\n            goto lev__unwind_%u;\n"
                  "        if (lev__cf)\n            lev_frame_pop(vt, lev__cf);\n"
                  "        %s\n    }\n"
                  "    if (LEV_UNLIKELY(lev__cf != NULL))\n        lev_frame_pop(vt, lev__cf);\n",
                  s->k, rt);
        free(rt);
        if (!g->ret_void) {
            char *r = pp_slot_ref('r', s->k, g->ret);
            pp_printf(b, "    %s = lev__x.v;\n", r);
            free(r);
        }
        pp_puts(b, "}");
    }
}

static void pp_unit_free(pp_unit *u)
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
static void pp_unit_wrap(pp_walk *w, pp_unit *u, unsigned b, unsigned e, int depth)
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

/* The budgeted strips (pp_strip_mine) around the statement being walked:
 * their number and the text of their induction variables. A resume label
 * inside one jumps past the initialisation of its limit lev__lK, which
 * the resume path then sets to the variable's value, so that the strip
 * ends after the iteration under way. */

/* A poll, numbered as a site at offset `at`. */
static void pp_poll_text(pp_walk *w, pp_buf *b, unsigned at)
{
    unsigned k = pp_site_new(w->fn, at);
    pp_printf(b,
              "\nif (lev_poll(vt) && lev_safepoint(vt, LEV_SP_POLL))\n    goto lev__unwind_%u;\n"
              "lev__resume_%u: __attribute__((unused));\n",
              k, k);
    for (unsigned i = 0; i < ctx.nstrips && i < PP_MAX_STRIPS; i++)
        pp_printf(b, "lev__l%u = %s;\n", ctx.strips[i].k, ctx.strips[i].v);
}

static void pp_stmt(pp_walk *w, CXCursor c, int depth);

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
        char *name = pp_cx(clang_getCursorSpelling(v->decl));
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
static void pp_vla_params(pp_walk *w)
{
    pp_buf b = {0};
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
static void pp_declstmt(pp_walk *w, CXCursor c, int depth, int for_init, unsigned end,
                        pp_unit *outer)
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
    pp_buf txt = {0};
    int any = 0, in_frame = 0;
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor v = k.v[i];
        if (pp_vm_typedef(v)) {
            pp_error(PP_LOC(v),
                     "typedef of a variably modified type in checkpointable function '%s' "
                     "cannot be captured; write the dimensions in each declaration",
                     w->fn->name);
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
                pp_kids ik = clang_Cursor_isNull(init) ? (pp_kids){0} : pp_children(init);
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
        if (ct.kind == CXType_ConstantArray)
            pp_printf(&txt,
                      "__builtin_memcpy((void *)&fr->%s, &(__typeof__(fr->%s))%s%s%s, "
                      "sizeof fr->%s)",
                      fld, fld, braces ? "" : "{", it, braces ? "" : "}", fld);
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

static void pp_budget_var(pp_fn *fn);
static void pp_budget_poll(pp_walk *w, pp_buf *b, unsigned at, unsigned units);

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
static void pp_loop_body(pp_walk *w, CXCursor loop, CXCursor body, int depth, unsigned units)
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
static void pp_cond_break(pp_walk *w, pp_unit *u, CXCursor cond, CXCursor body, int depth)
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

typedef struct pp_cont {
    pp_walk *w;
    unsigned k, n;
} pp_cont;

static enum CXChildVisitResult pp_cont_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_cont *ct = d;
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
static void pp_loop_tail(pp_walk *w, pp_unit *u, CXCursor body, int depth)
{
    pp_cont ct = {w, ++w->fn->nlabels, 0};
    if (pp_cont_cb(body, body, &ct) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_cont_cb, &ct);
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

static enum CXChildVisitResult pp_break_cb(CXCursor c, CXCursor parent, CXClientData d)
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
        *(int *)d = 1;
        return CXChildVisit_Break;
    default:
        return CXChildVisit_Recurse;
    }
}

/* Whether a counted loop can be strip-mined: no site in it, no break of
 * its own, no label in its body (nothing jumps into it), no call in its
 * condition (evaluated twice per strip). */
static int pp_strippable(CXCursor loop, CXCursor cond, CXCursor body)
{
    int bad = pp_has_site(loop) || pp_in_macro(body) || pp_in_macro(cond);
    if (!bad && pp_break_cb(body, loop, &bad) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_break_cb, &bad);
    if (!bad)
        clang_visitChildren(cond, pp_site_any_call_cb, &bad);
    return !bad;
}

/* Whether the body of a strippable loop holds a goto (the bounded strip,
 * pp_strip_bound, keeps to structured jumps). Resume labels of inner
 * loops are fine: their resume path resets the strip's limit
 * (pp_poll_text). */
static enum CXChildVisitResult pp_unbounded_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    int *bad = d;
    if (pp_kind(c) == CXCursor_GotoStmt || pp_kind(c) == CXCursor_IndirectGotoStmt)
        bad[0] = 1;
    return bad[0] ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* Whether e is a bound that the body cannot change and that costs little
 * to evaluate again: integer constants and C locals (not the induction
 * variable iv) under arithmetic operators and casts, and, when `loads`
 * (the body stores to no memory, pp_no_store), elements `P[X]` and `*P`
 * read through such expressions (not volatile). */
static int pp_pure_bound(pp_fn *fn, CXCursor e, CXCursor iv, int loads)
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
        ok = op == CXUnaryOperator_Plus || op == CXUnaryOperator_Minus ||
             op == CXUnaryOperator_Not;
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

typedef struct pp_ns {
    pp_fn *fn;
    int bad;
} pp_ns;

static enum CXChildVisitResult pp_no_store_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_ns *s = d;
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
static int pp_no_store(pp_fn *fn, CXCursor body)
{
    pp_ns s = {fn, 0};
    if (pp_no_store_cb(body, body, &s) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_no_store_cb, &s);
    return !s.bad;
}

/* Whether bound b of type bt converts to the induction variable's
 * integer type t without changing its value, so that `V OP B` compares
 * as in t: the same type, an integer type of t's signedness and no wider,
 * or a constant that t holds (`long s; s < 1000000`). */
static int pp_bound_fits(CXType t, CXType bt, CXCursor b)
{
    if (clang_equalTypes(t, bt))
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
    if (tsigned == bsigned && bs <= ts && ts >= 4)
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
 * OP, V of an integer type that B fits (pp_bound_fits), B pure): the texts of V and B,
 * OP and the signed step. */
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
        if (pp_kind(l) == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(l), iv))
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
             clang_Type_getSizeOf(t) <= 8 && pp_bound_fits(t, bt2, bc) &&
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
                                          : NULL;
        ok = *op && (s > 0) == (**op == '<');
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

/* Iterations of an innermost counted loop that are not charged when it
 * is entered with fewer left (pp_strip_mine), and the most units one
 * iteration of a loop is charged. */
#define PP_SMALL 16
#define PP_MAX_UNITS 256

typedef struct pp_nest {
    unsigned height; /* levels of loops below */
    unsigned inner;  /* innermost loops directly in the body */
} pp_nest;

static enum CXChildVisitResult pp_nest_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_nest *n = d;
    if (!pp_is_loop(c) || pp_in_macro(c))
        return CXChildVisit_Recurse;
    pp_nest in = {0, 0};
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
    pp_nest n = {0, 0};
    if (pp_nest_cb(body, body, &n) == CXChildVisit_Recurse)
        clang_visitChildren(body, pp_nest_cb, &n);
    *height = n.height;
    unsigned long long want = 1ULL + (unsigned long long)PP_SMALL * n.inner, u = 1;
    while (u < want && u < PP_MAX_UNITS)
        u *= 2;
    return (unsigned)u;
}

static void pp_budget_var(pp_fn *fn)
{
    if (!fn->counters.p || !strstr(fn->counters.p, "long lev__b "))
        pp_puts(&fn->counters, "    long lev__b = 0;\n");
}

/* The poll of a loop whose budget is spent, at offset `at`: between
 * strips (units 0) when lev__b <= 0; at the head of an iteration charged
 * `units` when lev__b goes below 0. Resets the budget, also on the
 * resume path. */
static void pp_budget_poll(pp_walk *w, pp_buf *b, unsigned at, unsigned units)
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
    unsigned long long ss = (unsigned long long)(s < 0 ? -s : s);
    const char *lo = s > 0 ? vt : bt, *hi = s > 0 ? bt : vt;
    char *dist = pp_fmt("((unsigned long long)(%s) - (unsigned long long)(%s))", hi, lo);
    char *n = ss == 1 ? pp_strdup(dist) : pp_fmt("(%s / %lluULL)", dist, ss);
    char *fits = u == 1 ? pp_fmt("%s < (unsigned long long)lev__b", n)
                        : pp_fmt("%s < (unsigned long long)lev__b / %uULL", n, u);
    char *charge = u == 1 ? pp_fmt("lev__b -= (long)%s + 1;\n", n)
                          : pp_fmt("lev__b -= (long)((%s + 1) * %uULL);\n", n, u);
    pp_buf pb = {0};
    pp_budget_poll(w, &pb, pp_begin(body), 0);
    unsigned k = w->fn->npc;
    pp_buf b = {0};
    pp_printf(&b, "{\n__typeof__(%s) lev__l%u = (%s);\n", vt, k, bt);
    if (small)
        pp_printf(&b, "if (%s >= %lluULL) {\n", dist, ss * PP_SMALL);
    pp_printf(&b, "if (LEV_UNLIKELY(!(%s))) {\n%s", fits, pb.p);
    pp_printf(&b, "lev__l%u = (%s);\n", k, bt);
    pp_printf(&b,
              "if (!(%s)) {\n"
              "lev__l%u = (__typeof__(%s))((unsigned long long)(%s) %c (unsigned long long)"
              "(lev__b / %u) * %lluULL);\nlev__b = 0;\n} else\n%s} else\n%s",
              fits, k, vt, vt, s > 0 ? '+' : '-', u, ss, charge, charge);
    if (small)
        pp_puts(&b, "}\n");
    pp_printf(&b, "for (; %s %s lev__l%u; %s)\n", vt, op, k, it);
    pp_edit_add(f, pp_begin(body), pp_begin(body), E_PRE, depth, 1, b.p);
    pp_edit_add(f, pp_stmt_end(f, body), pp_stmt_end(f, body), E_POST, depth, 1,
                pp_strdup("\n}"));
    free(pb.p);
    free(dist);
    free(n);
    free(fits);
    free(charge);
    free(it);
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

/* Any other loop without a safe point or checkpointable call counts down
 * the budget in its condition, in strips run by the loop as written (the
 * condition and increment evaluated once per iteration, as written):
 *
 *     for (INIT; COND; INC) BODY  ->  for (INIT;;) { BUDGET_POLL
 *                                         for (; --lev__b >= 0 && (COND); INC) BODY
 *                                         if (lev__b >= 0) break; }
 *     while (COND) BODY           ->  for (;;) { BUDGET_POLL
 *                                         while (--lev__b >= 0 && (COND)) BODY
 *                                         if (lev__b >= 0) break; }
 *     do BODY while (COND);       ->  for (;;) { BUDGET_POLL
 *                                         do BODY while ((COND) && --lev__b >= 0);
 *                                         if (lev__b >= 0) break; }
 *
 * (`--lev__b` is `(lev__b -= U)` for a loop charged U units per
 * iteration, pp_units.) The strip stops with lev__b < 0 only when the
 * budget is spent and the loop must go on; a `break` of BODY, or the
 * condition failing, leaves lev__b >= 0 (every loop inside BODY ends with
 * lev__b >= 0), and the outer `for` ends too. `continue` keeps its meaning. `head_b`..`head_e`
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
    char *dec = u == 1 ? pp_strdup("--lev__b >= 0") : pp_fmt("(lev__b -= %u) >= 0", u);
    pp_buf b = {0};
    if (u > 1) {
        unsigned at = kind == CXCursor_WhileStmt || kind == CXCursor_DoStmt ? head_b : pp_begin(c);
        pp_edit_add(f, at, at, E_PRE, depth - 1, 1, pp_strdup("{\n"));
    }
    if (kind == CXCursor_ForStmt) {
        pp_edit_add(f, head_b, head_e, E_REPL, depth, 1, pp_strdup(";;"));
        pp_puts(&b, "{\n");
        pp_budget_poll(w, &b, pp_begin(body), 0);
        pp_printf(&b, "for (; %s%s%s%s; %s)\n", dec, ct ? " && (" : "", ct ? ct : "",
                  ct ? ")" : "", it ? it : "");
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
    pp_edit_add(f, e, e, E_POST, depth, 1, pp_strdup("\nif (lev__b >= 0)\n    break;\n}"));
    if (u > 1) {
        pp_edit_add(f, pp_stmt_end(f, c), pp_stmt_end(f, c), E_POST, depth - 1, 1,
                    pp_fmt("\nlev__x%u:;\n}", x));
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
        *(int *)d = 1;
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
static void pp_loop(pp_walk *w, CXCursor c, CXCursor cond, CXCursor body, int depth,
                    unsigned head_b, unsigned head_e)
{
    unsigned height = 0, units = pp_units(body, &height);
    if (!pp_countdown_ok(c, cond, body))
        pp_loop_body(w, c, body, depth, 0);
    else if (height)
        pp_loop_body(w, c, body, depth, units);
    else
        pp_countdown(w, c, cond, clang_getNullCursor(), body, depth, head_b, head_e);
}

static void pp_for(pp_walk *w, CXCursor c, int depth)
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
    } else if (pp_counted(cond, inc, body) && pp_strippable(c, cond, body) &&
               pp_strip_bound(w, cond, inc, body, &vt, &bt, &op, &s)) {
        pp_strip_mine(w, inc, body, depth, vt, bt, op, s);
        free(bt);
    } else {
        pp_countdown(w, c, cond, inc, body, depth, semi[0], rpar);
    }
}

static enum CXChildVisitResult pp_macro_loop_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (!pp_in_macro(c))
        return CXChildVisit_Continue; /* written in the input: polled as usual */
    if (pp_is_loop(c)) {
        *(int *)d = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether statement c, written by a macro, is or holds a loop written by
 * the macro. */
static int pp_macro_loop(CXCursor c)
{
    int found = 0;
    if (pp_macro_loop_cb(c, c, &found) == CXChildVisit_Recurse)
        clang_visitChildren(c, pp_macro_loop_cb, &found);
    return found;
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
                char *name = pp_cx(clang_getCursorSpelling(decl));
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
static void pp_stmt(pp_walk *w, CXCursor c, int depth)
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
    case CXCursor_ReturnStmt: {
        pp_unit u = {0};
        pp_buf b = {0};
        char *et = NULL;
        if (k.n) {
            pp_expr(w, k.v[0], 0, &u);
            et = pp_render_str(f, k.v[0], 1);
        }
        pp_puts(&b, "{");
        pp_seqs(w, &u, &b);
        if (u.n)
            pp_puts(&b, "\n");
        char *rt = pp_return(w->fn, "LEV_RUN_DONE", et && !w->fn->is_main && !w->fn->ret_void ? et : NULL);
        if (et && w->fn->is_main)
            pp_printf(&b, " fr->m.ret = (%s);", et);
        else if (et && w->fn->ret_void)
            pp_printf(&b, " (void)(%s);", et);
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
        break;
    }
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
    case CXCursor_WhileStmt: {
        pp_unit u = {0};
        if (k.n != 2)
            break;
        pp_expr(w, k.v[0], 0, &u);
        if (u.n) {
            pp_edit_add(f, pp_begin(c), pp_begin(k.v[1]), E_REPL, depth, 1,
                        pp_strdup("for (;;)\n"));
            pp_cond_break(w, &u, k.v[0], k.v[1], depth);
        }
        pp_unit_free(&u);
        pp_loop(w, c, k.v[0], k.v[1], depth, pp_begin(c), pp_begin(k.v[1]));
        break;
    }
    case CXCursor_DoStmt:
        if (k.n == 2) {
            pp_unit du = {.nested = 1};
            pp_expr(w, k.v[1], 0, &du);
            if (du.n)
                pp_loop_tail(w, &du, k.v[0], depth);
            pp_unit_free(&du);
            if (!pp_is_loop(c))
                pp_stmt(w, k.v[0], depth + 1);
            else
                pp_loop(w, c, k.v[1], k.v[0], depth, pp_begin(c), pp_stmt_end(f, k.v[0]));
        }
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
        pp_error(PP_LOC(c), "computed goto in checkpointable function '%s' cannot be made mobile",
                 w->fn->name);
        break;
    case CXCursor_GCCAsmStmt:
    case CXCursor_MSAsmStmt:
        pp_error(PP_LOC(c),
                 "inline assembly in checkpointable function '%s' cannot be made "
                 "mobile",
                 w->fn->name);
        break;
    default:
        if (clang_isExpression(kind)) {
            pp_unit u = {0};
            u.top = c;
            u.has_top = 1;
            pp_expr(w, c, 0, &u);
            pp_unit_wrap(w, &u, pp_begin(c), pp_stmt_end(f, c), depth);
            pp_unit_free(&u);
        } else {
            char *ks = pp_cx(clang_getCursorKindSpelling(kind));
            pp_error(PP_LOC(c), "statement '%s' in checkpointable function '%s' is not supported",
                     ks, w->fn->name);
            free(ks);
        }
        break;
    }
    free(k.v);
}

typedef struct pp_scopes {
    pp_tok *v; /* extents of the blocks and for statements of a body */
    unsigned n, cap;
} pp_scopes;

static enum CXChildVisitResult pp_scopes_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_scopes *sc = d;
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
    pp_scopes sc = {0};
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
    if (fn->is_task || fn->is_main)
        return 0;
    for (unsigned i = 0; i < fn->nvars; i++)
        if (fn->vars[i].refs && !fn->vars[i].reg)
            return 0;
    for (unsigned i = 0; i < fn->nslots; i++)
        if (!pp_scalar(fn->slots[i].type))
            return 0;
    for (unsigned i = 0; i < fn->ntmps; i++)
        if (!pp_scalar(fn->tmps[i].type))
            return 0;
    return 1;
}

/* Chooses the functions that run without a frame until they unwind
 * (lazy): frameless ones that call only lazy functions, so that every
 * frame a lazy function's callees hold is spilled after its own is due,
 * never pushed on the arena below it (greatest fixpoint). */
static void pp_lazy(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        ctx.fns[i].lazy = ctx.fns[i].cp && ctx.fns[i].file >= 0 && pp_frameless(&ctx.fns[i]);
    for (int changed = 1; changed;) {
        changed = 0;
        for (unsigned i = 0; i < ctx.nfns; i++) {
            pp_fn *fn = &ctx.fns[i];
            for (unsigned c = 0; fn->lazy && c < fn->ncallees; c++) {
                pp_fn *g = &ctx.fns[fn->callees[c]];
                if (g->cp && !g->lazy) {
                    fn->lazy = 0;
                    changed = 1;
                }
            }
        }
    }
}

/* The C locals of slots and temporaries (pp_slot_ref) visited with fn(i,
 * x, k, t) for i = 0, 1, ...: x is 'r' or 't'. */
#define PP_EACH_SLOT(FN, X, K, T, ...)                                                          \
    do {                                                                                        \
        for (unsigned pp_i = 0; pp_i < (FN)->nslots + (FN)->ntmps; pp_i++) {                    \
            int X = pp_i < (FN)->nslots ? 'r' : 't';                                            \
            pp_slot *pp_s = X == 'r' ? &(FN)->slots[pp_i] : &(FN)->tmps[pp_i - (FN)->nslots];   \
            unsigned K = pp_s->k;                                                               \
            CXType T = pp_s->type;                                                              \
            if (pp_scalar(T)) {                                                                 \
                __VA_ARGS__;                                                                    \
            }                                                                                   \
        }                                                                                       \
    } while (0)

/* Declares the C locals of fn's body. `from`: how they start: 0 at 0
 * but the parameters loaded from the frame (a fresh frame), 1 all loaded
 * from the frame (resuming a lazy function), 2 at 0 with the parameters
 * left out (a lazy function's fresh __run, whose parameters they are). */
static void pp_locals(pp_buf *b, pp_fn *fn, int from)
{
    for (unsigned i = 0; i < fn->nvars; i++)
        if (fn->vars[i].reg && !(from == 2 && i < fn->nparams)) {
            char *r = pp_var_ref(fn, (int)i);
            if (from == 1 || (from == 0 && i < fn->nparams))
                pp_printf(b, "    __typeof__(fr->%s) %s = fr->%s;\n", fn->vars[i].field, r,
                          fn->vars[i].field);
            else
                pp_printf(b, "    __typeof__(fr->%s) %s = 0;\n", fn->vars[i].field, r);
            free(r);
        }
    if (from == 1)
        PP_EACH_SLOT(fn, x, k, t,
                     pp_printf(b, "    __typeof__(fr->lev__%c%u) lev__%c%u = fr->lev__%c%u;\n", x,
                               k, x, k, x, k));
    else
        PP_EACH_SLOT(fn, x, k, t,
                     pp_printf(b, "    __typeof__(fr->lev__%c%u) lev__%c%u = 0;\n", x, k, x, k));
    if (fn->counters.p)
        pp_puts(b, fn->counters.p);
}

/* The resume path: reloads the C locals other than the parameters unless
 * `loaded`, and jumps to the resume point numbered by the frame's pc. */
static void pp_resume(pp_buf *b, pp_fn *fn, int loaded)
{
    for (unsigned i = fn->nparams; !loaded && i < fn->nvars; i++)
        if (fn->vars[i].reg) {
            char *r = pp_var_ref(fn, (int)i);
            pp_printf(b, "        %s = fr->%s;\n", r, fn->vars[i].field);
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
static int pp_in_scope(pp_fn *fn, unsigned vi, unsigned k)
{
    unsigned at = fn->site_at[k];
    return vi < fn->nparams || (fn->vars[vi].scope_b <= at && at < fn->vars[vi].scope_e);
}

/* A lazy function's unwind out of line, so that its fresh __run stays
 * small enough to inline: the frame is spilled from the C locals passed
 * in, with the resume point lev__pc. */
static void pp_spill_fn(pp_buf *b, pp_fn *fn)
{
    pp_printf(b, "__attribute__((noinline, cold)) static struct %s__ret %s__spill(lev_ctx *vt, "
                 "uint32_t lev__pc", fn->cname, fn->cname);
    pp_spill_list(b, fn);
    pp_printf(b,
              ")\n{\n    struct %s__frame *fr = lev_frame_spill(vt, sizeof *fr, %s);\n"
              "    if (!fr)\n        return (struct %s__ret){.rc = LEV_RUN_EXIT};\n"
              "    fr->h.pc = lev__pc;\n",
              fn->cname, fn->idname, fn->cname);
    for (unsigned i = 0; i < fn->nvars; i++)
        if (fn->vars[i].reg) {
            char *r = pp_var_ref(fn, (int)i);
            pp_printf(b, "    fr->%s = %s;\n", fn->vars[i].field, r);
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
            pp_printf(b, "        return %s__spill(vt, %u", fn->cname, k);
        else
            pp_printf(b, "        %s = %u;\n", fn->pcf, k);
        for (unsigned i = 0; i < fn->nvars; i++)
            if (fn->vars[i].reg) {
                char *r = pp_in_scope(fn, i, k) ? pp_var_ref(fn, (int)i) : pp_strdup("0");
                if (spill)
                    pp_printf(b, ", %s", r);
                else
                    pp_printf(b, "        fr->%s = %s;\n", fn->vars[i].field, r);
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
static void pp_params(pp_buf *b, pp_fn *fn, int names)
{
    CXType ft = clang_getCursorType(fn->def);
    int n = clang_getNumArgTypes(ft);
    for (int i = 0; i < n; i++) {
        char *nm = names && fn->lazy && (unsigned)i < fn->nvars && fn->vars[i].reg
                       ? pp_var_ref(fn, i)
                       : pp_fmt("lev__a%d", i);
        char *d = pp_decl(clang_getArgType(ft, (unsigned)i), nm);
        pp_printf(b, ", %s", d);
        free(d);
        free(nm);
    }
}

/* The definition of fn's result type, struct NAME__ret: the LEV_RUN_*
 * code and the value, returned in registers where the ABI allows. */
static void pp_ret_struct(pp_buf *o, pp_fn *fn)
{
    pp_printf(o, "struct %s__ret {\n    int rc;\n", fn->cname);
    if (!fn->ret_void) {
        char *d = pp_decl(clang_getUnqualifiedType(fn->ret), "v");
        pp_printf(o, "    %s;\n", d);
        free(d);
    }
    pp_puts(o, "};\n");
}

/* Declaration text of what calls fn: its fresh entry __run (`resume` 0,
 * or -1 for its definition, whose parameters a lazy body names as its C
 * locals) or its __resume (1: the frame restored by the runtime); task
 * and main entries have one __run(vt, frame) that the runtime calls. */
static char *pp_run_proto(pp_fn *fn, int resume)
{
    if (fn->is_task || fn->is_main)
        return pp_fmt("static int %s__run(lev_ctx *vt, void *frame)", fn->cname);
    pp_buf b = {0};
    if (resume > 0) {
        pp_printf(&b, "static struct %s__ret %s__resume(lev_ctx *vt, struct %s__frame *fr)",
                  fn->cname, fn->cname, fn->cname);
    } else {
        /* a lazy function's fresh entry is a candidate for inlining, also
         * into itself, as the native function would be */
        pp_printf(&b, "static %sstruct %s__ret %s__run(lev_ctx *vt",
                  resume < 0 && fn->lazy ? "inline " : "", fn->cname, fn->cname);
        pp_params(&b, fn, resume < 0);
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
        pp_printf(b, "static int %s__run(lev_ctx *vt, void *frame)\n{\n", fn->cname);
        pp_printf(b, "    struct %s__frame *fr = frame;\n", fn->cname);
        pp_printf(b,
                  "    if (%s == 0)\n"
                  "        __builtin_memset((char *)fr + sizeof fr->%c, 0, sizeof *fr - sizeof "
                  "fr->%c);\n",
                  fn->pcf, fn->is_task ? 't' : 'm', fn->is_task ? 't' : 'm');
    } else if (fn->lazy) {
        pp_spill_fn(b, fn);
        p = pp_run_proto(fn, -1);
        pp_printf(b, "%s\n{\n    typedef struct %s__ret lev__ret_t;\n    struct %s__frame *fr = NULL;\n",
                  p, fn->cname, fn->cname);
        free(p);
        for (unsigned i = 0; i < fn->nparams; i++)
            if (!fn->vars[i].reg)
                pp_printf(b, "    (void)lev__a%u;\n", i);
        pp_locals(b, fn, 2);
        pp_unwind_block(b, fn, 1);
        pp_body_text(b, fn);
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
        p = pp_run_proto(fn, 0);
        pp_printf(b,
                  "%s\n{\n    struct %s__ret lev__x;\n    struct %s__frame *fr = "
                  "lev_frame_push(vt, sizeof *fr, %s);\n    if (!fr) {\n"
                  "        lev_vt_fail(vt, LEV_ENOMEM, \"%s: no frame\");\n"
                  "        return (struct %s__ret){.rc = LEV_RUN_EXIT};\n    }\n",
                  p, fn->cname, fn->cname, fn->idname, fn->name, fn->cname);
        free(p);
        for (unsigned i = 0; i < fn->nparams; i++)
            pp_printf(b, "    fr->%s = lev__a%u;\n", fn->vars[i].field, i);
        pp_printf(b,
                  "    lev__x = %s__resume(vt, fr);\n    if (lev__x.rc != LEV_RUN_UNWIND)\n"
                  "        lev_frame_pop(vt, fr);\n    return lev__x;\n}\n\n",
                  fn->cname);
        p = pp_run_proto(fn, 1);
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
            if (!pp_scalar(sl->type) && pp_has_pointer(sl->type))
                pp_printf(b, "    __builtin_memset(&fr->lev__%c%u, 0, sizeof fr->lev__%c%u);\n",
                          x, sl->k, x, sl->k);
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
            CXSourceRange nr = clang_Cursor_getSpellingNameRange(ctx.fns[i].def, 0, 0);
            pp_edit_add(&ctx.files[ctx.fns[i].file], pp_off(clang_getRangeStart(nr)),
                        pp_off(clang_getRangeEnd(nr)), E_REPL, 0, 0, pp_strdup("main__native"));
        }
}

/* ===================================================================
 * The common pass: heap calls, string literals, statics
 * =================================================================== */

const char *const pp_std_names[3] = {"stdin", "stdout", "stderr"};

static int pp_defined_here(CXCursor fndecl)
{
    char *usr = pp_cx(clang_getCursorUSR(fndecl));
    int i = pp_fn_find(usr);
    free(usr);
    return i >= 0 && ctx.fns[i].file >= 0;
}

/* The type operand or expression type of a sizeof; 0: found. */
static int pp_sizeof_type(pp_file *f, CXCursor c, CXType *t, const char **special)
{
    unsigned sb, se;
    pp_written_at(f, c, &sb, &se);
    unsigned i = pp_tok_from(f, sb);
    if (!pp_tok_is(f, i, "sizeof"))
        return -1;
    *special = NULL;
    pp_kids k = pp_children(c);
    int rc = -1;
    if (k.n == 1 && clang_isExpression(pp_kind(k.v[0]))) {
        *t = clang_getCursorType(k.v[0]);
        rc = 0;
    } else {
        /* sizeof(type): the tokens tell pointers from the type named */
        unsigned e = se;
        int star = 0, paren = 0;
        for (unsigned j = i + 2; j < f->ntoks && f->toks[j].e < e; j++) {
            star |= pp_tok_is(f, j, "*");
            paren |= pp_tok_is(f, j, "(");
        }
        if (star) {
            *special = paren ? "LEV_T_FNPTR" : "LEV_T_PTR";
            rc = 0;
        } else if (k.n >= 1 && pp_kind(k.v[0]) == CXCursor_TypeRef) {
            *t = clang_getCursorType(k.v[0]);
            rc = 0;
        } else {
            CXEvalResult ev = clang_Cursor_Evaluate(c);
            if (ev) {
                long long sz = clang_EvalResult_getAsLongLong(ev);
                clang_EvalResult_dispose(ev);
                *special = sz == 1   ? "LEV_T_BYTES"
                           : sz == 2 ? "LEV_T_U16"
                           : sz == 4 ? "LEV_T_U32"
                           : sz == 8 ? "LEV_T_U64"
                                     : NULL;
                rc = *special ? 0 : -1;
            }
        }
    }
    free(k.v);
    return rc;
}

typedef struct pp_heapinf {
    const char *id;
    char *size;   /* element size text */
    CXCursor fac; /* n of n * sizeof(T), or null */
    int sizeof_only, by_dest;
} pp_heapinf;

/* Infers the element type of an allocation of E bytes. */
static int pp_heap_infer(pp_file *f, CXCursor call, CXCursor E, CXCursor *parents, int np,
                         pp_heapinf *hi)
{
    memset(hi, 0, sizeof *hi);
    hi->fac = clang_getNullCursor();
    CXCursor s = pp_strip(E), so = clang_getNullCursor();
    if (pp_kind(s) == CXCursor_UnaryExpr) {
        so = s;
        hi->sizeof_only = 1;
    } else if (pp_kind(s) == CXCursor_BinaryOperator &&
               clang_getCursorBinaryOperatorKind(s) == CXBinaryOperator_Mul) {
        pp_kids k = pp_children(s);
        if (k.n == 2) {
            CXCursor l = pp_strip(k.v[0]), r = pp_strip(k.v[1]);
            if (pp_kind(r) == CXCursor_UnaryExpr) {
                so = r;
                hi->fac = k.v[0];
            } else if (pp_kind(l) == CXCursor_UnaryExpr) {
                so = l;
                hi->fac = k.v[1];
            }
        }
        free(k.v);
    }
    CXType t;
    const char *special = NULL;
    if (!clang_Cursor_isNull(so) && pp_sizeof_type(f, so, &t, &special) == 0) {
        if (special) {
            hi->id = special;
            hi->size = pp_strdup("1");
            return 0;
        }
        long long mult;
        return pp_elem(t, call, &hi->id, &hi->size, &mult) || mult != 1 ? -1 : 0;
    }
    hi->sizeof_only = 0;
    hi->fac = clang_getNullCursor();
    /* The destination: a cast, an initialised variable, an assignment. */
    CXType dest = {0};
    int have = 0;
    for (int i = np - 1; i >= 0 && !have; i--) {
        CXCursor p = parents[i];
        enum CXCursorKind k = pp_kind(p);
        if (k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr)
            continue;
        if (k == CXCursor_CStyleCastExpr || k == CXCursor_VarDecl) {
            dest = clang_getCursorType(p);
            have = 1;
        } else if (k == CXCursor_BinaryOperator &&
                   clang_getCursorBinaryOperatorKind(p) == CXBinaryOperator_Assign) {
            pp_kids kk = pp_children(p);
            dest = clang_getCursorType(kk.v[0]);
            have = 1;
            free(kk.v);
        }
        break;
    }
    if (have && clang_getCanonicalType(dest).kind == CXType_Pointer) {
        CXType pt = clang_getPointeeType(clang_getCanonicalType(dest));
        if (pt.kind != CXType_Void) {
            long long mult;
            hi->by_dest = 1;
            /* the sugared pointee keeps typedef names */
            CXType sp = clang_getPointeeType(pp_desugar(dest));
            if (sp.kind == CXType_Invalid)
                sp = pt;
            return pp_elem(sp, call, &hi->id, &hi->size, &mult) || mult != 1 ? -1 : 0;
        }
    }
    return -1;
}

/* Count edits for an allocation whose byte-size argument is written at
 * [eb, ee), with the text before it (from hb) replaced by prefix. */
static void pp_heap_count(pp_file *f, pp_heapinf *hi, const char *prefix, unsigned hb, unsigned eb,
                          unsigned ee, unsigned ce)
{
    unsigned b = eb, e = ee;
    if (!clang_Cursor_isNull(hi->fac)) {
        pp_written_at(f, hi->fac, &b, &e);
        if (b < eb || e > ee) { /* not written there: divide the whole size */
            hi->fac = clang_getNullCursor();
            b = eb;
            e = ee;
        }
    }
    if (hi->sizeof_only) {
        pp_edit_add(f, hb, ce, E_REPL, 0, 0, pp_fmt("%s1)", prefix));
    } else if (!clang_Cursor_isNull(hi->fac)) {
        pp_edit_add(f, hb, b, E_REPL, 0, 0, pp_fmt("%s(", prefix));
        pp_edit_add(f, e, ce, E_REPL, 0, 0, pp_strdup("))"));
    } else if (!strcmp(hi->size, "1")) {
        pp_edit_add(f, hb, b, E_REPL, 0, 0, pp_fmt("%s(", prefix));
        pp_edit_add(f, e, ce, E_REPL, 0, 0, pp_strdup("))"));
    } else {
        pp_edit_add(f, hb, b, E_REPL, 0, 0, pp_fmt("%s((", prefix));
        pp_edit_add(f, e, ce, E_REPL, 0, 0, pp_fmt(") + %s - 1) / %s)", hi->size, hi->size));
    }
}

/* Whether call c is the expansion of the C library's macro `alloca(E)`
 * written in f (its argument is then spelled in f). */
static int pp_alloca_macro(const pp_file *f, CXCursor c)
{
    unsigned b = pp_begin(c), e = pp_end(c), i = pp_tok_from(f, b), j = pp_tok_from(f, e);
    return pp_tok_is(f, i, "alloca") && f->toks[i].b == b && pp_tok_is(f, i + 1, "(") && j > 0 &&
           pp_tok_is(f, j - 1, ")") && f->toks[j - 1].e == e;
}

static const char *pp_heap_names[] = {"malloc", "calloc", "realloc", "strdup", NULL};

static void pp_heap(pp_file *f, CXCursor c, const char *name, CXCursor *parents, int np)
{
    int is_alloca = !strcmp(name, "alloca");
    if (pp_in_macro(c) && !(is_alloca && pp_alloca_macro(f, c))) {
        pp_error(PP_LOC(c),
                 "%s inside a macro expansion cannot be rewritten to the VT heap; "
                 "call it outside the macro",
                 name);
        return;
    }
    int n = clang_Cursor_getNumArguments(c);
    unsigned cb = pp_begin(c), ce = pp_end(c);
    CXCursor a0 = clang_Cursor_getArgument(c, 0), a1 = clang_Cursor_getArgument(c, 1);
    pp_heapinf hi;
    if (!strcmp(name, "strdup") && n == 1) {
        pp_edit_add(f, cb, pp_begin(a0), E_REPL, 0, 0, pp_strdup("lev_strdup(lev__module(), "));
        return;
    }
    unsigned eb, ee; /* where the size is written */
    pp_written_at(f, !strcmp(name, "malloc") || is_alloca ? a0 : a1, &eb, &ee);
    if (is_alloca && pp_in_macro(c)) { /* between the parentheses of alloca( ) */
        unsigned i = pp_tok_from(f, cb), j = pp_tok_from(f, ce);
        eb = f->toks[i + 2 < j ? i + 2 : i].b;
        ee = f->toks[j >= 2 ? j - 2 : 0].e;
    }
    if (is_alloca) /* on the heap, the memory outlives the call: harmless */
        name = "malloc";
    CXCursor E = !strcmp(name, "malloc") ? a0 : a1;
    if ((!strcmp(name, "malloc") ? n != 1 : n != 2) || pp_heap_infer(f, c, E, parents, np, &hi)) {
        if (is_alloca)
            name = "alloca";
        pp_error(PP_LOC(c),
                 "cannot infer the element type of this %s; write %s(n * sizeof(T)) or "
                 "assign the result to a T *",
                 name, !strcmp(name, "calloc") ? "calloc(n, sizeof(T)) or calloc" : name);
        return;
    }
    if (!strcmp(name, "malloc")) {
        char *pre = pp_fmt("lev_alloc(lev__module(), %s, ", hi.id);
        pp_heap_count(f, &hi, pre, cb, eb, ee, ce);
        free(pre);
    } else if (!strcmp(name, "realloc")) {
        pp_edit_add(f, cb, pp_begin(a0), E_REPL, 0, 0, pp_strdup("lev_realloc(lev__module(), "));
        char *pre = pp_fmt(", %s, ", hi.id);
        pp_heap_count(f, &hi, pre, pp_end(a0), eb, ee, ce);
        free(pre);
    } else { /* calloc */
        pp_edit_add(f, cb, pp_begin(a0), E_REPL, 0, 0,
                    pp_fmt("lev_alloc(lev__module(), %s, (", hi.id));
        pp_heap_count(f, &hi, ") * ", pp_end(a0), eb, ee, ce);
    }
    free(hi.size);
}

/* C library calls with hidden state (--main-task). The rand family and
 * strtok become wrappers (emitted by pp_libc_prelude) over generated
 * travelling statics, so their state is part of every image; calls whose
 * state cannot be moved into the program are refused. */
static const char *pp_libc_names[][2] = {{"rand", "lev__rand"},     {"srand", "lev__srand"},
                                         {"random", "lev__random"}, {"srandom", "lev__srandom"},
                                         {"strtok", "lev__strtok"}, {NULL, NULL}};

static const char *pp_libc_refused[][2] = {
    {"drand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"lrand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"mrand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"srand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"seed48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"lcong48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"initstate", "use srandom"},
    {"setstate", "use srandom"},
    {"atexit", "a process that resumes the program would not run the handler"},
    {"at_quick_exit", "a process that resumes the program would not run the handler"},
    {"on_exit", "a process that resumes the program would not run the handler"},
    {NULL, NULL}};

/* A reference to external function `name` in input f. The name is
 * renamed where it is written: also in a macro argument or in the body of
 * a macro defined in this input (once, however often it is expanded). */
static void pp_libc_call(pp_file *f, CXCursor c, const char *name)
{
    if (!ctx.main_task)
        return;
    for (int i = 0; pp_libc_names[i][0]; i++)
        if (!strcmp(name, pp_libc_names[i][0])) {
            CXFile sf;
            unsigned b, e = 0;
            clang_getSpellingLocation(PP_LOC(c), &sf, NULL, NULL, &b);
            if (sf && clang_File_isEqual(sf, f->cxf))
                e = b + (unsigned)strlen(name);
            if (!e || e > f->len || memcmp(f->text + b, name, e - b)) {
                /* once per expansion */
                if (ctx.libc_macro_file == f && ctx.libc_macro_at == pp_off(PP_LOC(c)))
                    return;
                ctx.libc_macro_file = f;
                ctx.libc_macro_at = pp_off(PP_LOC(c));
                pp_error(PP_LOC(c),
                         "%s inside a macro of another file cannot be rewritten onto state that "
                         "travels; call it outside the macro",
                         name);
                return;
            }
            f->uses_libc[strcmp(name, "strtok") ? 0 : 1] = 1;
            for (unsigned k = 0; k < f->nedits; k++)
                if (f->edits[k].b == b && f->edits[k].e == e && f->edits[k].cls == E_REPL)
                    return; /* a macro expanded again */
            pp_edit_add(f, b, e, E_REPL, 0, 0, pp_strdup(pp_libc_names[i][1]));
            return;
        }
    for (int i = 0; pp_libc_refused[i][0]; i++)
        if (!strcmp(name, pp_libc_refused[i][0]))
            pp_error(PP_LOC(c), "%s keeps state inside the C library, which no image holds (%s)",
                     name, pp_libc_refused[i][1]);
}

/* Registers the statics behind the rewritten calls (owned by the first
 * input, shared by all) and the type of the rand state. */
static void pp_libc_statics(void)
{
    int any[2] = {0, 0};
    for (unsigned i = 0; i < ctx.nfiles; i++)
        for (int k = 0; k < 2; k++)
            any[k] |= ctx.files[i].uses_libc[k];
    if (any[0]) {
        PP_PUSH(ctx.types, ctx.ntypes, ctx.captypes);
        pp_type *ty = &ctx.types[ctx.ntypes++];
        memset(ty, 0, sizeof *ty);
        ty->key = pp_strdup("lev_rand_state");
        ty->spell = pp_strdup("lev_rand_state");
        ty->idname = pp_strdup("LEV__T_lev_rand_state");
        ty->fn = -1;
        ty->owner = 0;
        pp_field_row(ty, "lev_rand_state", "r", "LEV_K_B4", 31, "0");
        pp_field_row(ty, "lev_rand_state", "f", "LEV_K_B4", 1, "0");
        pp_field_row(ty, "lev_rand_state", "b", "LEV_K_B4", 1, "0");
        pp_field_row(ty, "lev_rand_state", "seeded", "LEV_K_B4", 1, "0");
        PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
        ctx.statics[ctx.nstatics++] = (pp_static){pp_strdup("lev__rand_state"),
                                              pp_strdup("(void *)&lev__rand_state"),
                                              pp_strdup("LEV__T_lev_rand_state"),
                                              pp_strdup("1"),
                                              "LEV_S_TRAVELS",
                                              0,
                                              0};
    }
    if (any[1]) {
        PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
        ctx.statics[ctx.nstatics++] = (pp_static){pp_strdup("lev__strtok_save"),
                                              pp_strdup("(void *)&lev__strtok_save"),
                                              pp_strdup("LEV_T_PTR"),
                                              pp_strdup("1"),
                                              "LEV_S_TRAVELS",
                                              0,
                                              0};
    }
}

/* The statics and wrappers of the rewritten calls, in input fi's output. */
static void pp_libc_prelude(pp_buf *o, unsigned fi)
{
    int multi = ctx.nfiles > 1;
    static const char *def[2] = {"lev_rand_state lev__rand_state", "char *lev__strtok_save"};
    for (int k = 0; k < 2; k++) {
        int any = 0;
        for (unsigned i = 0; i < ctx.nfiles; i++)
            any |= ctx.files[i].uses_libc[k];
        if (!any || (fi && !ctx.files[fi].uses_libc[k]))
            continue;
        pp_printf(o, "%s%s;\n",
                  !multi ? "static "
                  : fi   ? "PP_HIDDEN extern "
                         : "PP_HIDDEN ",
                  def[k]);
        if (!ctx.files[fi].uses_libc[k])
            continue;
        if (k == 0)
            pp_puts(o, "static inline int lev__rand(void)\n"
                       "{\n    return lev_rand_r(&lev__rand_state);\n}\n"
                       "static inline long lev__random(void)\n"
                       "{\n    return lev_rand_r(&lev__rand_state);\n}\n"
                       "static inline void lev__srand(unsigned s)\n"
                       "{\n    lev_srand_r(&lev__rand_state, s);\n}\n"
                       "static inline void lev__srandom(unsigned s)\n"
                       "{\n    lev_srand_r(&lev__rand_state, s);\n}\n");
        else
            pp_puts(o, "static inline char *lev__strtok(char *s, const char *d)\n"
                       "{\n    return lev_strtok_r(s, d, &lev__strtok_save);\n}\n");
    }
}

/* Whether a literal passed to external function `name` may be kept. */
static int pp_lit_keep_for(const char *name)
{
    static const char *keep[] = {"strchr", "strrchr", "strstr",    "strpbrk",   "memchr",
                                 "strtok", "strtol",  "strtoul",   "strtoll",   "strtoull",
                                 "strtod", "strtof",  "strchrnul", "rawmemchr", NULL};
    for (int i = 0; keep[i]; i++)
        if (!strcmp(name, keep[i]))
            return 0;
    return 1;
}

static void pp_literal(pp_file *f, CXCursor c, CXCursor *parents, int np)
{
    if (pp_in_macro(c) || np < 1 || pp_kind(parents[np - 1]) != CXCursor_UnexposedExpr)
        return;
    unsigned b = pp_begin(c), e = pp_end(c);
    if (f->text[b] != '"')
        return; /* wide and prefixed literals stay */
    int up = np - 1;
    while (up > 0 && pp_kind(parents[up]) == CXCursor_UnexposedExpr)
        up--;
    if (pp_kind(parents[up]) == CXCursor_CallExpr) {
        CXCursor ref = clang_getCursorReferenced(parents[up]);
        if (pp_kind(ref) == CXCursor_FunctionDecl && !pp_defined_here(ref)) {
            char *name = pp_cx(clang_getCursorSpelling(ref));
            int keep = pp_lit_keep_for(name);
            free(name);
            if (keep)
                return; /* only read by the callee: no pointer to it survives */
        }
    }
    unsigned id = ctx.nlit++;
    pp_printf(&f->lits, "static char lev__str%u[] = ", id);
    pp_putn(&f->lits, f->text + b, e - b);
    pp_puts(&f->lits, ";\n");
    pp_edit_add(f, b, e, E_REPL, 0, 0, pp_fmt("lev__str%u", id));
    PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
    ctx.statics[ctx.nstatics++] = (pp_static){pp_fmt("lev__str%u", id),
                                          pp_fmt("lev__str%u", id),
                                          pp_strdup("LEV_T_BYTES"),
                                          pp_fmt("sizeof lev__str%u", id),
                                          "0",
                                          0,
                                          ctx.cur_file};
}


static const char *pp_moved_name(CXCursor decl)
{
    for (unsigned i = 0; i < ctx.nmoved; i++)
        if (clang_equalCursors(ctx.moved[i].decl, decl))
            return ctx.moved[i].name;
    return NULL;
}

static void pp_static_var(CXCursor v);

/* A DeclStmt of a function: local types and static locals move before
 * the function, so that both copies of its body share them. 1: done. */
static int pp_move_decl(pp_file *f, CXCursor c, CXCursor fn)
{
    pp_kids k = pp_children(c);
    int types = 0, statics = 0, others = 0;
    for (unsigned i = 0; i < k.n; i++) {
        enum CXCursorKind kk = pp_kind(k.v[i]);
        if (kk == CXCursor_StructDecl || kk == CXCursor_UnionDecl || kk == CXCursor_EnumDecl ||
            (kk == CXCursor_TypedefDecl && !pp_vm_typedef(k.v[i])))
            types++;
        else if (kk == CXCursor_VarDecl && clang_Cursor_getStorageClass(k.v[i]) == CX_SC_Static)
            statics++;
        else
            others++;
    }
    int done = 0;
    if ((types || statics) && !others && !pp_in_macro(c)) {
        unsigned at = pp_begin(fn);
        pp_buf b = {0};
        if (types) {
            pp_putn(&b, f->text + pp_begin(c), pp_stmt_end(f, c) - pp_begin(c));
        } else {
            char *fname = pp_cx(clang_getCursorSpelling(fn));
            for (unsigned i = 0; i < k.n; i++) {
                CXCursor v = k.v[i];
                char *vn = pp_cx(clang_getCursorSpelling(v));
                char *nn = pp_fmt("%s__%s", fname, vn);
                PP_PUSH(ctx.moved, ctx.nmoved, ctx.capmoved);
                ctx.moved[ctx.nmoved++] = (pp_moved){v, nn};
                char *d = pp_decl(clang_getCursorType(v), nn);
                pp_printf(&b, "static %s", d);
                free(d);
                CXCursor init = clang_Cursor_getVarDeclInitializer(v);
                if (!clang_Cursor_isNull(init)) {
                    char *it = pp_render_str(f, init, 0);
                    pp_printf(&b, " = %s", it);
                    free(it);
                }
                pp_puts(&b, ";\n");
                pp_static_var(v);
                free(vn);
            }
            free(fname);
        }
        pp_puts(&b, "\n");
        pp_edit_add(f, at, at, E_PRE, 0, 0, b.p);
        pp_edit_add(f, pp_begin(c), pp_stmt_end(f, c), E_REPL, 0, 0, pp_strdup(";"));
        done = 1;
    }
    free(k.v);
    return done;
}

static void pp_common(pp_file *f, CXCursor c, CXCursor *parents, int np)
{
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_StringLiteral) {
        pp_literal(f, c, parents, np);
        return;
    }
    int skip_callee = 0;
    if (k == CXCursor_CallExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        if (pp_kind(ref) == CXCursor_FunctionDecl && !pp_defined_here(ref)) {
            char *name = pp_cx(clang_getCursorSpelling(ref));
            for (int i = 0; pp_heap_names[i]; i++)
                if (!strcmp(name, pp_heap_names[i])) {
                    pp_heap(f, c, name, parents, np);
                    skip_callee = 1;
                }
            if ((!strcmp(name, "alloca") || !strcmp(name, "__builtin_alloca")) && np >= 1 &&
                pp_kind(parents[0]) == CXCursor_FunctionDecl) {
                /* a checkpointable function's stack is its frame: the
                 * buffer moves to the VT heap like malloc's */
                char *usr = pp_cx(clang_getCursorUSR(parents[0]));
                int g = pp_fn_find(usr);
                free(usr);
                if (g >= 0 && ctx.fns[g].cp) {
                    pp_heap(f, c, "alloca", parents, np);
                    skip_callee = 1;
                }
            }
            free(name);
        }
    }
    if (k == CXCursor_DeclStmt && np >= 1 && pp_kind(parents[0]) == CXCursor_FunctionDecl &&
        pp_move_decl(f, c, parents[0]))
        return;
    if (k == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        const char *moved = pp_moved_name(ref);
        if (moved) {
            if (pp_in_macro(c))
                pp_error(PP_LOC(c), "a static local used inside a macro expansion cannot be "
                                    "rewritten yet; move it to file scope");
            else
                pp_edit_add(f, pp_begin(c), pp_end(c), E_REPL, 0, 0, pp_strdup(moved));
            return;
        }
        char *name = pp_cx(clang_getCursorSpelling(ref));
        if (pp_kind(ref) == CXCursor_FunctionDecl && !pp_defined_here(ref)) {
            if (!strcmp(name, "free")) {
                if (pp_in_macro(c))
                    pp_error(PP_LOC(c), "free inside a macro expansion cannot be rewritten; "
                                        "call it outside the macro");
                else
                    pp_edit_add(f, pp_begin(c), pp_end(c), E_REPL, 0, 0, pp_strdup("lev_free"));
            }
            for (int i = 0; pp_heap_names[i]; i++)
                if (!strcmp(name, pp_heap_names[i]))
                    pp_error(PP_LOC(c), "%s used as a value cannot be rewritten to the VT heap",
                             name);
            pp_libc_call(f, c, name);
        }
        if (pp_kind(ref) == CXCursor_VarDecl && !clang_Location_isFromMainFile(PP_LOC(ref))) {
            for (int i = 0; i < 3; i++)
                if (!strcmp(name, pp_std_names[i]))
                    f->uses_std[i] = 1;
        }
        free(name);
        return;
    }
    pp_kids kids = pp_children(c);
    CXCursor *np2 = pp_xrealloc(NULL, sizeof(CXCursor) * (size_t)(np + 1));
    if (np)
        memcpy(np2, parents, sizeof(CXCursor) * (size_t)np);
    np2[np] = c;
    for (unsigned i = skip_callee ? 1 : 0; i < kids.n; i++)
        pp_common(f, kids.v[i], np2, np + 1);
    free(np2);
    free(kids.v);
}

/* Registers file-scope variable v as a static. */
static void pp_static_var(CXCursor v)
{
    CXType t = clang_getCursorType(v);
    const char *moved = pp_moved_name(v);
    if (clang_getCanonicalType(t).kind == CXType_IncompleteArray)
        return;
    const char *id;
    char *size;
    long long mult;
    char *name = moved ? pp_strdup(moved) : pp_cx(clang_getCursorSpelling(v));
    pp_buf hint = {0};
    pp_printf(&hint, "__typeof__(%s", name);
    for (CXType c = clang_getCanonicalType(t); c.kind == CXType_ConstantArray;
         c = clang_getArrayElementType(c))
        pp_puts(&hint, "[0]");
    pp_puts(&hint, ")");
    ctx.typeof_hint = hint.p;
    int bad = pp_elem(t, v, &id, &size, &mult);
    ctx.typeof_hint = NULL;
    free(hint.p);
    if (bad) {
        free(name);
        return;
    }
    free(size);
    for (unsigned i = 0; i < ctx.nstatics; i++)
        if (!strcmp(ctx.statics[i].name, name)) {
            free(name);
            return; /* a tentative definition seen again */
        }
    int is_const = clang_isConstQualifiedType(t);
    for (CXType c = clang_getCanonicalType(t);; c = clang_getArrayElementType(c)) {
        is_const |= clang_isConstQualifiedType(c);
        if (c.kind != CXType_ConstantArray)
            break;
    }
    PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
    ctx.statics[ctx.nstatics++] = (pp_static){name,
                                          pp_fmt("(void *)&%s", name),
                                          pp_strdup(id),
                                          pp_fmt("%lld", mult),
                                          ctx.main_task && !is_const ? "LEV_S_TRAVELS" : "0",
                                          0,
                                          ctx.cur_file};
}

static void pp_common_file(unsigned fi)
{
    pp_file *f = &ctx.files[fi];
    ctx.cur_file = (int)fi;
    pp_kids k = pp_children(clang_getTranslationUnitCursor(f->tu));
    f->insert_at = f->len;
    int first = 1;
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor c = k.v[i];
        if (!clang_Location_isFromMainFile(PP_LOC(c)))
            continue;
        if (first || pp_begin(c) < f->insert_at) {
            /* a declaration may begin before the type it defines */
            f->insert_at = f->lines[pp_line_of(f, pp_begin(c)) - 1];
            first = 0;
        }
        if (pp_kind(c) == CXCursor_VarDecl && clang_Cursor_getStorageClass(c) != CX_SC_Extern)
            pp_static_var(c);
        pp_common(f, c, NULL, 0);
    }
    free(k.v);
    /* Not inside a conditional group: before the outermost one open there. */
    unsigned open[64], nopen = 0;
    for (unsigned i = 0; i + 1 < f->ntoks && f->toks[i].b < f->insert_at; i++) {
        unsigned ls = f->lines[pp_line_of(f, f->toks[i].b) - 1];
        if (!pp_tok_is(f, i, "#") || (i > 0 && f->toks[i - 1].b >= ls))
            continue;
        if (pp_tok_is(f, i + 1, "if") || pp_tok_is(f, i + 1, "ifdef") ||
            pp_tok_is(f, i + 1, "ifndef")) {
            if (nopen < 64)
                open[nopen] = ls;
            nopen++;
        } else if (pp_tok_is(f, i + 1, "endif") && nopen) {
            nopen--;
        }
    }
    if (nopen)
        f->insert_at = open[0];
}

/* Pass: the common rewriting of every input (heap calls, string
 * literals, statics), then the statics of the C library's state and of
 * the standard streams used. */
void pp_common_pass(void)
{
    for (unsigned i = 0; i < ctx.nfiles; i++)
        pp_common_file(i);
    pp_libc_statics();
    for (int k = 0; k < 3; k++)
        for (unsigned i = 0; i < ctx.nfiles; i++)
            if (ctx.files[i].uses_std[k]) {
                PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
                ctx.statics[ctx.nstatics++] = (pp_static){pp_strdup(pp_std_names[k]),
                                                          pp_strdup("NULL"),
                                                          pp_strdup("LEV_T_BYTES"),
                                                          pp_strdup("1"),
                                                          "0",
                                                          k + 1,
                                                          (int)i};
                break;
            }
}

/* ===================================================================
 * Output
 * =================================================================== */

static void pp_frame_struct(pp_buf *o, pp_fn *fn)
{
    pp_printf(o, "struct %s__frame {\n    %s;\n", fn->cname,
              fn->is_task   ? "lev_task_frame t"
              : fn->is_main ? "lev_main_frame m"
                            : "lev_frame h");
    for (unsigned i = 0; i < fn->nvars; i++) {
        pp_var *v = &fn->vars[i];
        if (strchr(v->field, '.'))
            continue;
        if (v->vla.kind) {
            /* the pointer to the heap array (or the pointer variable, with
             * its first dimension unknown) and the variable dimensions */
            pp_buf nm = {0};
            pp_printf(&nm, v->vla.kind == PP_VLA_ARRAY ? "*%s" : "(*%s)[]", v->field);
            for (unsigned d = 1; v->vla.kind == PP_VLA_POINTER && d < v->vla.ndims; d++)
                pp_printf(&nm, "[%lld]", v->vla.cdim[d]);
            char *d = pp_decl(v->vla.elem, nm.p);
            pp_printf(o, "    %s;\n", d);
            free(d);
            free(nm.p);
            for (unsigned k = 0; k < v->vla.ndims; k++)
                if (v->vla.cdim[k] < 0)
                    pp_printf(o, "    unsigned long long lev__d%u_%s;\n", k, v->field);
            continue;
        }
        char *d = pp_decl(v->type, v->field);
        pp_printf(o, "    %s;\n", d);
        free(d);
    }
    for (unsigned i = 0; i < fn->nslots; i++) {
        char *nm = pp_fmt("lev__r%u", fn->slots[i].k);
        char *d = pp_decl(fn->slots[i].type, nm);
        pp_printf(o, "    %s;\n", d);
        free(d);
        free(nm);
    }
    for (unsigned i = 0; i < fn->ntmps; i++) {
        char *nm = pp_fmt("lev__t%u", fn->tmps[i].k);
        char *d = pp_decl(fn->tmps[i].type, nm);
        pp_printf(o, "    %s;\n", d);
        free(d);
        free(nm);
    }
    pp_puts(o, "};\n");
}

static void pp_frame_type(int fi)
{
    pp_fn *fn = &ctx.fns[fi];
    PP_PUSH(ctx.types, ctx.ntypes, ctx.captypes);
    pp_type *ty = &ctx.types[ctx.ntypes++];
    memset(ty, 0, sizeof *ty);
    ty->key = pp_fmt("frame %s", fn->cname);
    ty->spell = pp_fmt("struct %s__frame", fn->cname);
    ty->idname = pp_fmt("LEV__T_%s__frame", fn->cname);
    ty->fn = fi;
    ty->owner = fn->file;
}

/* Fills the field tables of every type (may register more record types). */
static void pp_describe_types(void)
{
    for (unsigned i = 0; i < ctx.ntypes; i++) {
        pp_type *ty = &ctx.types[i];
        ctx.cur_file = ty->owner;
        if (ty->fn >= 0) {
            pp_fn *fn = &ctx.fns[ty->fn];
            const char *owner = ty->spell;
            if (fn->is_task) {
                pp_field_row(ty, owner, "t.arg", "LEV_K_PTR", 1, "0");
                pp_field_row(ty, owner, "t.len", "LEV_K_B8", 1, "0");
            } else if (fn->is_main) {
                pp_field_row(ty, owner, "m.argc", "LEV_K_B4", 1, "0");
                pp_field_row(ty, owner, "m.argv", "LEV_K_PTR", 1, "0");
                pp_field_row(ty, owner, "m.ret", "LEV_K_B4", 1, "0");
            }
            for (unsigned v = 0; v < fn->nvars; v++) {
                pp_var *var = &fn->vars[v];
                if (strchr(var->field, '.'))
                    continue;
                if (!var->vla.kind) {
                    pp_fields(&ctx.types[i], owner, var->field, var->type, var->decl);
                    continue;
                }
                pp_field_row(&ctx.types[i], owner, var->field, "LEV_K_PTR", 1, "0");
                for (unsigned d = 0; d < var->vla.ndims; d++)
                    if (var->vla.cdim[d] < 0) {
                        char *nm = pp_fmt("lev__d%u_%s", d, var->field);
                        pp_field_row(&ctx.types[i], owner, nm, "LEV_K_B8", 1, "0");
                        free(nm);
                    }
            }
            for (unsigned s = 0; s < fn->nslots; s++) {
                char *nm = pp_fmt("lev__r%u", fn->slots[s].k);
                pp_fields(&ctx.types[i], ctx.types[i].spell, nm, fn->slots[s].type, fn->def);
                free(nm);
            }
            for (unsigned s = 0; s < fn->ntmps; s++) {
                char *nm = pp_fmt("lev__t%u", fn->tmps[s].k);
                pp_fields(&ctx.types[i], ctx.types[i].spell, nm, fn->tmps[s].type, fn->def);
                free(nm);
            }
        } else if (!ty->nfields) { /* not lev_rand_state, described when registered */
            if (pp_bad_spelling(ty->spell)) {
                pp_error(PP_LOC(ty->where), "an unnamed struct type cannot be described; give "
                                            "it a tag or a typedef name");
                continue;
            }
            char *owner = pp_strdup(ty->spell);
            pp_record_fields(ty, owner, "", ty->type, 0);
            free(owner);
            ty = &ctx.types[i];
        }
        if (!ctx.types[i].nfields)
            pp_printf(&ctx.types[i].fields, "    {\"lev__empty\", 0, LEV_K_B1, 1, 0},\n");
    }
}

static const char *pp_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Declarations of the entries of fn for calls from other inputs, where
 * its frame type is unknown: __xrun (`resume` 0) and __xresume. */
static char *pp_xrun_proto(pp_fn *fn, int resume)
{
    pp_buf b = {0};
    if (resume) {
        pp_printf(&b, "PP_HIDDEN struct %s__ret %s__xresume(lev_ctx *vt, void *frame)", fn->cname,
                  fn->cname);
    } else {
        pp_printf(&b, "PP_HIDDEN struct %s__ret %s__xrun(lev_ctx *vt", fn->cname, fn->cname);
        pp_params(&b, fn, 0);
        pp_puts(&b, ")");
    }
    return b.p;
}

/* The descriptor initialisers of what input fi owns, as C statements
 * (multi: assignments into the module's tables) or table rows. */
static void pp_fn_row(pp_buf *o, pp_fn *fn)
{
    const char *nat = fn->is_main ? "main__native" : fn->name;
    if (fn->cp)
        pp_printf(o, "{\"%s\", (void (*)(void))%s, %s%s, LEV__T_%s__frame, %s}", fn->name, nat,
                  fn->is_task || fn->is_main ? fn->cname : "NULL",
                  fn->is_task || fn->is_main ? "__run" : "", fn->cname,
                  fn->is_task   ? "LEV_FN_TASK"
                  : fn->is_main ? "LEV_FN_MAIN"
                                : "0");
    else
        pp_printf(o, "{\"%s\", (void (*)(void))%s, NULL, 0, 0}", fn->name, nat);
}

static void pp_static_row(pp_buf *o, pp_static *st)
{
    pp_printf(o, "{\"%s\", %s, %s, (uint32_t)(%s), %s}", st->name, st->std ? "NULL" : st->addr,
              st->type, st->count, st->flags);
}

static void pp_emit(unsigned fi, pp_buf *o)
{
    pp_file *f = &ctx.files[fi];
    const char *outname = f->outname;
    int multi = ctx.nfiles > 1, first = fi == 0;
    const char *vis = multi ? "PP_HIDDEN " : "static ";
    pp_printf(o, "/* %s: written by levpp from %s; edit the source, not this file. */\n",
              pp_base(outname), pp_base(f->path));
    pp_printf(o, "#line 1 \"%s\"\n", f->path);
    pp_render(o, f, 0, f->insert_at, 0, 0);
    pp_printf(o, "\n#line %u \"%s\"\n", pp_lines_in(o) + 1, outname);
    pp_puts(o, "#include \"lev_task.h\"\n\n");
    if (multi)
        pp_puts(o, "#define PP_HIDDEN __attribute__((visibility(\"hidden\")))\n");
    pp_printf(o, "%sconst lev_module *lev__module(void);\n", vis);
    pp_libc_prelude(o, fi);
    if (ctx.ntypes) {
        pp_puts(o, "enum {\n");
        for (unsigned i = 0; i < ctx.ntypes; i++)
            pp_printf(o, "    %s = LEV_T_USER + %u,\n", ctx.types[i].idname, i);
        pp_puts(o, "};\n");
    }
    pp_puts(o, "enum {\n");
    unsigned nfn = 0;
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].file >= 0)
            pp_printf(o, "    %s = %u,\n", ctx.fns[i].idname, nfn++);
    pp_printf(o, "    LEV__NFNS = %u\n};\n", nfn);
    if (f->lits.p)
        pp_puts(o, f->lits.p);
    pp_printf(o, "#line %u \"%s\"\n", pp_line_of(f, f->insert_at), f->path);
    pp_render(o, f, f->insert_at, f->len, 0, R_SYNC);
    if (f->len && f->text[f->len - 1] != '\n')
        pp_puts(o, "\n");

    pp_printf(o, "#line %u \"%s\"\n", pp_lines_in(o) + 1, outname);
    pp_puts(o, "\n/* ===================================================================\n"
               " * Frames and resumable bodies (levpp)\n"
               " * =================================================================== */\n\n"
               "#include <stddef.h>\n\n");
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp && ctx.fns[i].file == (int)fi) {
            pp_frame_struct(o, &ctx.fns[i]);
            pp_puts(o, "\n");
        }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp && ctx.fns[i].file == (int)fi)
            for (int r = 0; r < 2 - (ctx.fns[i].is_task || ctx.fns[i].is_main); r++) {
                char *p = pp_run_proto(&ctx.fns[i], r);
                pp_printf(o, "%s;\n", p);
                free(p);
            }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp && ctx.fns[i].file == (int)fi && !ctx.fns[i].is_task && !ctx.fns[i].is_main)
            pp_ret_struct(o, &ctx.fns[i]);
    for (unsigned x = 0; x < f->nx; x++)
        pp_ret_struct(o, &ctx.fns[f->xcallees[x]]);
    for (unsigned x = 0; x < f->nx; x++) {
        pp_fn *g = &ctx.fns[f->xcallees[x]];
        for (int r = 0; r < 2; r++) {
            char *p = pp_xrun_proto(g, r);
            pp_printf(o, "%s;\n", p);
            free(p);
        }
        if (g->addr_taken)
            pp_printf(o, "PP_HIDDEN extern void (*const %s__xaddr)(void);\n", g->cname);
    }
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        if (!fn->cp || fn->file != (int)fi)
            continue;
        pp_puts(o, "\n");
        pp_puts(o, fn->body.p);
        pp_printf(o, "#line %u \"%s\"\n", pp_lines_in(o) + 1, outname);
        if (fn->is_main)
            pp_puts(o, "    fr->m.ret = 0;\n");
        char *rt = pp_return(fn, "LEV_RUN_DONE", NULL);
        pp_printf(o, "    %s\n}\n", rt);
        free(rt);
        if (multi && !fn->is_task && !fn->is_main) {
            /* what the other inputs call: the frame is only known here */
            char *p = pp_xrun_proto(fn, 0);
            pp_printf(o, "\n%s\n{\n    return %s__run(vt", p, fn->cname);
            free(p);
            CXType ft = clang_getCursorType(fn->def);
            int n = clang_getNumArgTypes(ft);
            for (int a = 0; a < n; a++)
                pp_printf(o, ", lev__a%d", a);
            pp_puts(o, ");\n}\n");
            p = pp_xrun_proto(fn, 1);
            pp_printf(o, "\n%s\n{\n    return %s__resume(vt, frame);\n}\n", p, fn->cname);
            free(p);
            if (fn->addr_taken) /* what indirect calls of other inputs compare with */
                pp_printf(o, "\nPP_HIDDEN void (*const %s__xaddr)(void) = (void (*)(void))%s;\n",
                          fn->cname, fn->name);
        }
    }

    pp_puts(o, "\n/* ===================================================================\n"
               " * Descriptors (levpp)\n"
               " * =================================================================== */\n\n");
    pp_puts(o, "#define LEV__NF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))\n\n");
    for (unsigned i = 0; i < ctx.ntypes; i++)
        if (!multi || ctx.types[i].owner == (int)fi)
            pp_printf(o, "static const lev_field_desc lev__fields%u[] = {\n%s};\n", i,
                      ctx.types[i].fields.p);
    int any_std = 0;
    for (unsigned i = 0; i < ctx.nstatics; i++)
        any_std |= ctx.statics[i].std != 0;
    char *mname = pp_strdup(pp_base(ctx.files[0].path));
    char *dot = strrchr(mname, '.');
    if (dot)
        *dot = '\0';
    if (!multi) {
        if (ctx.ntypes) {
            pp_puts(o, "\nstatic const lev_type_desc lev__types[] = {\n");
            for (unsigned i = 0; i < ctx.ntypes; i++)
                pp_printf(o, "    {\"%s\", sizeof(%s), LEV__NF(lev__fields%u), lev__fields%u},\n",
                          ctx.types[i].key, ctx.types[i].spell, i, i);
            pp_puts(o, "};\n");
        }
        pp_puts(o, "\nstatic const lev_fn_desc lev__fns[LEV__NFNS] = {\n");
        for (unsigned i = 0; i < ctx.nfns; i++)
            if (ctx.fns[i].file >= 0) {
                pp_printf(o, "    [%s] = ", ctx.fns[i].idname);
                pp_fn_row(o, &ctx.fns[i]);
                pp_puts(o, ",\n");
            }
        pp_puts(o, "};\n");
        if (ctx.nstatics) {
            pp_printf(o, "\nstatic %slev_static_desc lev__statics[] = {\n",
                      any_std ? "" : "const ");
            for (unsigned i = 0; i < ctx.nstatics; i++) {
                pp_puts(o, "    ");
                pp_static_row(o, &ctx.statics[i]);
                pp_puts(o, ",\n");
            }
            pp_puts(o, "};\n");
        }
        pp_printf(o,
                  "\nstatic const lev_module_desc lev__module_desc = {\n"
                  "    LEV_ABI_VERSION, \"%s\",\n    %s, %s,\n    LEV__NFNS, lev__fns,\n"
                  "    %s, %s,\n};\n",
                  mname, ctx.ntypes ? "LEV__NF(lev__types)" : "0", ctx.ntypes ? "lev__types" : "NULL",
                  ctx.nstatics ? "LEV__NF(lev__statics)" : "0", ctx.nstatics ? "lev__statics" : "NULL");
    } else {
        /* Each output fills the entries of what it defines into the
         * module's tables, which live in the first output. */
        pp_printf(o,
                  "\nPP_HIDDEN void lev__fill_%s(lev_type_desc *types, lev_fn_desc *fns, "
                  "lev_static_desc *statics)\n{\n    (void)types;\n    (void)fns;\n"
                  "    (void)statics;\n",
                  f->stem);
        for (unsigned i = 0; i < ctx.ntypes; i++)
            if (ctx.types[i].owner == (int)fi)
                pp_printf(o,
                          "    types[%u] = (lev_type_desc){\"%s\", sizeof(%s), "
                          "LEV__NF(lev__fields%u), lev__fields%u};\n",
                          i, ctx.types[i].key, ctx.types[i].spell, i, i);
        for (unsigned i = 0; i < ctx.nfns; i++)
            if (ctx.fns[i].file == (int)fi) {
                pp_printf(o, "    fns[%s] = (lev_fn_desc)", ctx.fns[i].idname);
                pp_fn_row(o, &ctx.fns[i]);
                pp_puts(o, ";\n");
            }
        for (unsigned i = 0; i < ctx.nstatics; i++)
            if (ctx.statics[i].owner == (int)fi) {
                pp_printf(o, "    statics[%u] = (lev_static_desc)", i);
                pp_static_row(o, &ctx.statics[i]);
                pp_puts(o, ";\n");
                if (ctx.statics[i].std)
                    pp_printf(o, "    statics[%u].addr = (void *)%s;\n", i,
                              pp_std_names[ctx.statics[i].std - 1]);
            }
        pp_puts(o, "}\n");
        if (first) {
            for (unsigned j = 1; j < ctx.nfiles; j++)
                pp_printf(o,
                          "PP_HIDDEN void lev__fill_%s(lev_type_desc *types, lev_fn_desc *fns, "
                          "lev_static_desc *statics);\n",
                          ctx.files[j].stem);
            pp_printf(o,
                      "\nstatic lev_type_desc lev__types[%u];\nstatic lev_fn_desc "
                      "lev__fns[LEV__NFNS];\nstatic lev_static_desc lev__statics[%u];\n",
                      ctx.ntypes ? ctx.ntypes : 1, ctx.nstatics ? ctx.nstatics : 1);
            pp_printf(o,
                      "\nPP_HIDDEN const lev_module_desc lev__module_desc = {\n"
                      "    LEV_ABI_VERSION, \"%s\",\n    %u, lev__types,\n"
                      "    LEV__NFNS, lev__fns,\n    %u, lev__statics,\n};\n",
                      mname, ctx.ntypes, ctx.nstatics);
        }
    }
    free(mname);
    if (!multi || first) {
        pp_printf(o,
                  "\nstatic lev_module *lev__mod;\n\n"
                  "/* The module of this program's descriptors, registered on first use. */\n"
                  "%sconst lev_module *lev__module(void)\n{\n    if (lev__mod)\n"
                  "        return lev__mod;\n",
                  vis);
        if (multi) {
            for (unsigned j = 0; j < ctx.nfiles; j++)
                pp_printf(o, "    lev__fill_%s(lev__types, lev__fns, lev__statics);\n",
                          ctx.files[j].stem);
        } else {
            for (unsigned i = 0; i < ctx.nstatics; i++)
                if (ctx.statics[i].std)
                    pp_printf(o, "    lev__statics[%u].addr = (void *)%s;\n", i,
                              pp_std_names[ctx.statics[i].std - 1]);
        }
        pp_puts(o, "    if (lev_module_register(&lev__module_desc, &lev__mod) != 0)\n"
                   "        return NULL;\n    return lev__mod;\n}\n");
        if (!ctx.main_task)
            pp_puts(o, "\n__attribute__((constructor)) static void lev__register(void)\n{\n"
                       "    (void)lev__module();\n}\n");
    }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].is_main && ctx.fns[i].file == (int)fi) {
            if (multi && !first)
                pp_puts(o, "PP_HIDDEN extern const lev_module_desc lev__module_desc;\n");
            pp_printf(o,
                      "\nint main(int argc, char **argv)\n{\n"
                      "    if (!lev__module())\n        return 2;\n"
                      "    return lev_main_run(&lev__module_desc, %s, argc, argv);\n}\n",
                      ctx.fns[i].idname);
        }
}

/* Pass: writes every output to OUT.tmp, then renames them all; on an
 * error (rc != 0, given or met) removes the temporaries. Returns rc. */
int pp_write_outputs(int rc)
{
    for (unsigned i = 0; i < ctx.nfiles && !rc; i++) {
        pp_buf o = {0};
        pp_emit(i, &o);
        char *tmp = pp_fmt("%s.tmp", ctx.files[i].outname);
        FILE *fp = fopen(tmp, "wb");
        if (!fp || fwrite(o.p, 1, o.n, fp) != o.n || fclose(fp) != 0) {
            pp_error_noloc(NULL, "cannot write %s: %s", tmp, strerror(errno));
            rc = 1;
        }
        free(tmp);
        free(o.p);
    }
    for (unsigned i = 0; i < ctx.nfiles; i++) {
        char *tmp = pp_fmt("%s.tmp", ctx.files[i].outname ? ctx.files[i].outname : "");
        if (!rc && rename(tmp, ctx.files[i].outname) != 0) {
            pp_error_noloc(NULL, "cannot rename %s to %s: %s", tmp, ctx.files[i].outname,
                           strerror(errno));
            rc = 1;
        }
        if (rc && ctx.files[i].outname)
            unlink(tmp);
        free(tmp);
    }
    return rc;
}

/* ===================================================================
 * Command line, parsing, driver
 * =================================================================== */

static void pp_usage(FILE *out)
{
    fprintf(out, "usage: levpp [--main-task] [--no-auto-poll] [-p BUILD_DIR] IN.c... -o OUT "
                 "[-- CLANG_FLAGS...]\n"
                 "\n"
                 "Rewrites C task sources so that their virtual threads can be captured at safe\n"
                 "points and resumed elsewhere (see preproc/README.md).\n"
                 "\n"
                 "  --main-task      turn main into the entry of a VT run by the embedded runtime\n"
                 "  --no-auto-poll   no automatic safe point at the head of each loop body\n"
                 "  -p BUILD_DIR     read each input's flags from BUILD_DIR/compile_commands.json\n"
                 "  -o OUT           output file (one input) or directory (several)\n"
                 "  --help           show this help\n");
}

/* A usage error: exit status 2. */
static int __attribute__((format(printf, 1, 2))) pp_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pp_vdiag(PP_ERROR, 0, NULL, 0, 0, fmt, ap);
    va_end(ap);
    fputs("(levpp --help shows the usage)\n", stderr);
    return 2;
}

static char *pp_read_file(const char *path, unsigned *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    pp_buf b = {0};
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
        pp_putn(&b, tmp, n);
    int err = ferror(fp);
    fclose(fp);
    if (err) {
        free(b.p);
        return NULL;
    }
    *len = (unsigned)b.n;
    return b.p ? b.p : pp_strdup("");
}

/* Flags of `path` from a compilation database (without the compiler, the
 * input, -o and -c), appended to *args. */
static void pp_db_flags(CXCompilationDatabase db, const char *path, const char ***args, unsigned *n,
                        unsigned *cap)
{
    char *abs = realpath(path, NULL);
    CXCompileCommands cmds = clang_CompilationDatabase_getCompileCommands(db, abs ? abs : path);
    free(abs);
    if (cmds && clang_CompileCommands_getSize(cmds) > 0) {
        CXCompileCommand cmd = clang_CompileCommands_getCommand(cmds, 0);
        unsigned na = clang_CompileCommand_getNumArgs(cmd);
        char *dir = pp_cx(clang_CompileCommand_getDirectory(cmd));
        for (unsigned i = 1; i < na; i++) {
            char *a = pp_cx(clang_CompileCommand_getArg(cmd, i));
            if (!strcmp(a, "-o") || !strcmp(a, "-c") || !strcmp(a, "--")) {
                if (!strcmp(a, "-o"))
                    i++;
                free(a);
                continue;
            }
            /* the entry's paths are relative to its directory */
            char *pa = a[0] == '/' ? pp_strdup(a) : pp_fmt("%s/%s", dir, a);
            char *ra = realpath(pa, NULL), *rp = realpath(path, NULL);
            int same = a[0] != '-' && ra && rp && !strcmp(ra, rp);
            free(pa);
            free(ra);
            free(rp);
            if (same || (a[0] != '-' && strstr(a, ".c") && i == na - 1)) {
                free(a);
                continue;
            }
            static const char *const dir_opts[] = {"-I", "-isystem", "-iquote"};
            for (unsigned o = 0; o < sizeof dir_opts / sizeof *dir_opts; o++) {
                size_t ol = strlen(dir_opts[o]);
                if (strncmp(a, dir_opts[o], ol))
                    continue;
                if (!a[ol] && i + 1 < na) { /* two arguments: -I DIR */
                    PP_PUSH(*args, *n, *cap);
                    (*args)[(*n)++] = a;
                    a = pp_cx(clang_CompileCommand_getArg(cmd, ++i));
                    if (a[0] != '/') {
                        char *abs_i = pp_fmt("%s/%s", dir, a);
                        free(a);
                        a = abs_i;
                    }
                } else if (a[ol] && a[ol] != '/') {
                    char *abs_i = pp_fmt("%s%s/%s", dir_opts[o], dir, a + ol);
                    free(a);
                    a = abs_i;
                }
                break;
            }
            PP_PUSH(*args, *n, *cap);
            (*args)[(*n)++] = a;
        }
        free(dir);
    }
    if (cmds)
        clang_CompileCommands_dispose(cmds);
}

static int pp_parse(pp_file *f, CXIndex idx, const char **args, unsigned nargs)
{
    f->text = pp_read_file(f->path, &f->len);
    if (!f->text) {
        pp_error_noloc(NULL, "cannot read %s: %s", f->path, strerror(errno));
        return -1;
    }
    enum CXErrorCode ec = clang_parseTranslationUnit2(idx, f->path, args, (int)nargs, NULL, 0,
                                                      CXTranslationUnit_None, &f->tu);
    if (ec != CXError_Success || !f->tu) {
        pp_error_noloc(f->path, "libclang cannot parse this file (code %d)", (int)ec);
        return -1;
    }
    int bad = 0;
    unsigned nd = clang_getNumDiagnostics(f->tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic d = clang_getDiagnostic(f->tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error) {
            CXFile df = NULL;
            clang_getExpansionLocation(clang_getDiagnosticLocation(d), &df, NULL, NULL, NULL);
            char *s = df ? pp_cx(clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation |
                                                               CXDiagnostic_DisplayColumn |
                                                               CXDiagnostic_DisplayOption))
                         : pp_cx(clang_getDiagnosticSpelling(d));
            /* No location (a bad flag, say): ours to say, with clang's words. */
            if (df)
                fprintf(stderr, "%s\n", s);
            else
                pp_error_noloc(NULL, "%s", s);
            free(s);
            bad = 1;
        }
        clang_disposeDiagnostic(d);
    }
    if (bad)
        return -1;
    f->cxf = clang_getFile(f->tu, f->path);
    /* lines */
    unsigned cap = 0;
    PP_PUSH(f->lines, f->nlines, cap);
    f->lines[f->nlines++] = 0;
    for (unsigned i = 0; i < f->len; i++)
        if (f->text[i] == '\n') {
            PP_PUSH(f->lines, f->nlines, cap);
            f->lines[f->nlines++] = i + 1;
        }
    /* tokens */
    CXSourceRange r = clang_getRange(clang_getLocationForOffset(f->tu, f->cxf, 0),
                                     clang_getLocationForOffset(f->tu, f->cxf, f->len));
    CXToken *toks;
    unsigned nt;
    clang_tokenize(f->tu, r, &toks, &nt);
    f->toks = pp_xrealloc(NULL, sizeof *f->toks * (nt ? nt : 1));
    for (unsigned i = 0; i < nt; i++) {
        CXSourceRange tr = clang_getTokenExtent(f->tu, toks[i]);
        f->toks[i] = (pp_tok){pp_off(clang_getRangeStart(tr)), pp_off(clang_getRangeEnd(tr))};
    }
    f->ntoks = nt;
    clang_disposeTokens(f->tu, toks, nt);
    return 0;
}

/* The command line. */
typedef struct pp_options {
    const char **inputs, *out, *dbdir;
    unsigned nin, capin;
    const char **cflags; /* after -- */
    unsigned ncf, capcf;
} pp_options;

/* Parses the command line into *o and ctx's flags. Returns -1 to go on,
 * else the exit status (--help, usage errors). */
static int pp_parse_args(int argc, char **argv, pp_options *o)
{
    ctx.auto_poll = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) {
                PP_PUSH(o->cflags, o->ncf, o->capcf);
                o->cflags[o->ncf++] = argv[i];
            }
            break;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            pp_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--main-task")) {
            ctx.main_task = 1;
        } else if (!strcmp(a, "--no-auto-poll")) {
            ctx.auto_poll = 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "-p")) {
            if (i + 1 >= argc)
                return pp_usage_error("option %s needs an argument", a);
            if (!strcmp(a, "-o"))
                o->out = argv[++i];
            else
                o->dbdir = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return pp_usage_error("unknown option '%s'", a);
        } else {
            PP_PUSH(o->inputs, o->nin, o->capin);
            o->inputs[o->nin++] = a;
        }
    }
    if (!o->nin)
        return pp_usage_error("%s", "no input files");
    if (!o->out)
        return pp_usage_error("%s", "no output given (-o OUT)");
    if (o->nin > 1) {
        struct stat st;
        if (stat(o->out, &st) != 0 || !S_ISDIR(st.st_mode))
            return pp_usage_error("with several inputs, -o names an existing directory: %s",
                                  o->out);
    }
    return -1;
}

/* The clang arguments of input i: the compilation database's flags, those
 * after --, the resource directory and -D__LEVPP__=1. */
static const char **pp_clang_args(const pp_options *o, CXCompilationDatabase db, unsigned i,
                                  unsigned *nargs)
{
    const char **args = NULL;
    unsigned na = 0, capa = 0;
    if (db)
        pp_db_flags(db, o->inputs[i], &args, &na, &capa);
    for (unsigned j = 0; j < o->ncf; j++) {
        PP_PUSH(args, na, capa);
        args[na++] = o->cflags[j];
    }
    struct stat st;
    if (*LEVPP_RESOURCE_DIR && stat(LEVPP_RESOURCE_DIR, &st) == 0) {
        int given = 0;
        for (unsigned j = 0; j < na; j++)
            given |= !strcmp(args[j], "-resource-dir");
        if (!given) {
            PP_PUSH(args, na, capa);
            args[na++] = "-resource-dir";
            PP_PUSH(args, na, capa);
            args[na++] = LEVPP_RESOURCE_DIR;
        }
    }
    PP_PUSH(args, na, capa);
    args[na++] = "-D__LEVPP__=1";
    *nargs = na;
    return args;
}

/* Pass: reads and parses every input (ctx.files), naming its output.
 * Returns 0, or 1 after an error (printed). */
static int pp_read_inputs(const pp_options *o, CXIndex idx)
{
    CXCompilationDatabase db = NULL;
    if (o->dbdir) {
        CXCompilationDatabase_Error dberr;
        db = clang_CompilationDatabase_fromDirectory(o->dbdir, &dberr);
        if (dberr != CXCompilationDatabase_NoError || !db) {
            pp_error_noloc(NULL, "cannot read %s/compile_commands.json", o->dbdir);
            return 1;
        }
    }
    unsigned nin = o->nin;
    ctx.nfiles = nin;
    ctx.files = pp_xrealloc(NULL, sizeof *ctx.files * nin);
    memset(ctx.files, 0, sizeof *ctx.files * nin);
    int rc = 0;
    for (unsigned i = 0; i < nin && !rc; i++) {
        unsigned na;
        const char **args = pp_clang_args(o, db, i, &na);
        ctx.files[i].path = o->inputs[i];
        char *stem = pp_strdup(pp_base(o->inputs[i]));
        char *dot = strrchr(stem, '.');
        if (dot)
            *dot = '\0';
        ctx.files[i].stem = pp_ident(stem);
        ctx.files[i].outname = nin > 1 ? pp_fmt("%s/%s.lev.c", o->out, stem) : pp_strdup(o->out);
        free(stem);
        for (unsigned j = 0; j < i; j++)
            if (!strcmp(ctx.files[j].stem, ctx.files[i].stem)) {
                pp_error_noloc(NULL, "two inputs are named %s.c: each gives %s.lev.c",
                               ctx.files[i].stem, ctx.files[i].stem);
                rc = 1;
            }
        if (!rc && pp_parse(&ctx.files[i], idx, args, na))
            rc = 1;
        free(args);
    }
    if (db)
        clang_CompilationDatabase_dispose(db);
    return rc;
}

int main(int argc, char **argv)
{
    pp_options o = {0};
    int rc = pp_parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    CXIndex idx = clang_createIndex(0, 0);
    /* sources: read, parse and tokenize every input */
    rc = pp_read_inputs(&o, idx);
    if (!rc) {
        /* the call graph and which functions are checkpointable */
        pp_call_graph_pass(o.inputs[0]);
        /* the frame of each checkpointable function */
        pp_layout_frames();
        /* heap calls, string literals, statics of every input */
        pp_common_pass();
        /* refuse integers that may hold pointers across a safe point */
        pp_int_ptrs();
        /* the sites and lowered expressions of each body; lazy frames */
        pp_walk_bodies();
        /* the resumable bodies */
        pp_rewrite_bodies();
        /* the descriptors of every type a frame holds */
        pp_describe_types();
        if (ctx.errors)
            rc = 1;
    }
    /* the outputs, all or none */
    rc = pp_write_outputs(rc);
    for (unsigned i = 0; i < ctx.nfiles; i++)
        if (ctx.files[i].tu)
            clang_disposeTranslationUnit(ctx.files[i].tu);
    clang_disposeIndex(idx);
    free(o.inputs);
    free(o.cflags);
    return rc;
}
