/* levpp.h - levpp's internal header (not installed): the types every pass
 * shares (inputs, edits, functions, frames, types, statics, the lowering
 * units), the one context object `ctx` that holds all mutable state of a
 * run, and the functions one pass file uses from another.
 */
#ifndef LEVPP_H
#define LEVPP_H

#include <assert.h>
#include <clang-c/Index.h>
#include <stdarg.h>
#include <stddef.h>

/* ===================================================================
 * Growable arrays and buffers (pp_util.c)
 * =================================================================== */

/* Makes room for one more element of a growable array (arr, n, cap). */
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

/* ===================================================================
 * State: inputs and their edits, functions, frames, types, statics,
 * and the context of a run
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

/* The C library's hidden state that --main-task moves into travelling
 * statics (pp_libcstate.c): the rand family, strtok, atexit, localtime;
 * its calls that return memory of its own, which become calls on the VT
 * heap; and where the standard streams stand (every --main-task program:
 * the input that defines main). */
enum {
    PP_LIBC_RAND,
    PP_LIBC_STRTOK,
    PP_LIBC_EXIT,
    PP_LIBC_HEAP,
    PP_LIBC_TIME,
    PP_LIBC_STDIO,
    PP_NLIBC
};

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
    unsigned insert_at;      /* where the generated declarations go */
    pp_buf lits;             /* hoisted string literals */
    int uses_std[3];         /* stdin, stdout, stderr */
    int uses_libc[PP_NLIBC]; /* calls rewritten onto travelling statics (PP_LIBC_*) */
    int *xcallees;           /* checkpointable functions of other inputs called here */
    unsigned nx, capx;
    char *outname, *stem;
    unsigned outsub; /* where the part of outname below OUT begins (several inputs), or 0 */
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
    int reg;                   /* kept in a C local of the resumable body (lev__v_FIELD) */
    int sj_frame;              /* would be, but its function calls setjmp (pp_setjmp.c) */
    unsigned refs;             /* references in the body */
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
    int is_atomic;  /* LEV_ATOMIC: no loop polls, callees called natively */
    int has_setjmp; /* calls setjmp: framed, every variable in its frame (pp_setjmp.c) */
    int addr_taken; /* its address is taken somewhere: a candidate of indirect calls */
    char **itypes;  /* types (pp_fn_key) of the functions it calls through pointers */
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
    const char *pcf;        /* the frame's pc: fr->h.pc, fr->t.h.pc, fr->m.h.pc */
    int lazy;               /* runs without a frame until it unwinds (pp_lazy) */
    int reserving;          /* lazy, and may reach a framed function: reserves its
                             * frame around the calls that may (pp_lazy) */
    int label_table;        /* its label addresses are offsets in lev__lbl_NAME (pp_libc.c) */
    CXCursor body_c;        /* the body statement (pp_walk_fn) */
    pp_buf body;            /* the resumable body */
    unsigned nparams;       /* vars[0, nparams) are the parameters */
    pp_buf counters;        /* declarations of the strip counters (pp_strip_mine) */
    unsigned char *copy_in; /* [fi]: input fi holds a copy of its bodies (pp_copies) */
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
    int trailing; /* its last member, T m[0] or m[1], described as a
                   * trailing array (heap objects of the old idiom) */
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
    int tls_seen;       /* a thread-local variable was registered (--main-task) */
    CXCursor tls_first; /* the first one */
    const char *cc;     /* --cc: whose preprocessor expands bodies */
    int errors;
    unsigned nlit, seq;
    int cur_file; /* the input being processed */
    /* How to name an unnamed type in generated code: __typeof__ of an
     * object of that type, when one is at hand (set by pp_static_var
     * around one pp_elem call; NULL otherwise). */
    const char *typeof_hint;
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

/* ===================================================================
 * Diagnostics (pp_util.c)
 * =================================================================== */

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

#define PP_LOC(c) clang_getCursorLocation(c)

/* ===================================================================
 * Children, visitors, rendering and the lowering units
 * =================================================================== */

/* Visitor states. A struct passed to a libclang visitor as CXClientData
 * begins with `magic`, the PP_MAGIC_* constant of its type, which the
 * visitor checks with pp_visit_state before using it; a visitor that
 * only reports a finding gets an int flag (pp_visit_flag). */
enum {
    PP_MAGIC_KIDS = 0x70700001,
    PP_MAGIC_SCOPES,
    PP_MAGIC_CALLS,
    PP_MAGIC_ADDR_TAKEN,
    PP_MAGIC_VARS,
    PP_MAGIC_VAR_REFS,
    PP_MAGIC_LOCALS,
    PP_MAGIC_UNNAMED,
    PP_MAGIC_SIZEOFS,
    PP_MAGIC_LABELS,
    PP_MAGIC_MODIFIED,
    PP_MAGIC_NO_STORE,
    PP_MAGIC_NEST,
    PP_MAGIC_CONTINUE,
    PP_MAGIC_REGIONS,
    PP_MAGIC_TAGS,
    PP_MAGIC_FILELITS,
    PP_MAGIC_UNION,
    PP_MAGIC_SIG,
    PP_MAGIC_ATTRS,
    PP_MAGIC_USRS,
    PP_MAGIC_HDR_STATICS,
    PP_MAGIC_LOCAL_NAME,
    PP_MAGIC_BOUND,
    PP_MAGIC_BOUND_WRITES,
};

static inline void *pp_visit_state(CXClientData d, unsigned magic)
{
    assert(d && *(const unsigned *)d == magic);
    (void)magic;
    return d;
}

static inline int *pp_visit_flag(CXClientData d)
{
    assert(d);
    return d;
}

/* Whether flag visitor cb, applied to c and then to its descendants until
 * it breaks, sets its flag. */
static inline int pp_visit_finds(CXCursor c,
                                 enum CXChildVisitResult (*cb)(CXCursor, CXCursor, CXClientData))
{
    int found = 0;
    if (cb(c, c, &found) == CXChildVisit_Recurse)
        clang_visitChildren(c, cb, &found);
    return found;
}

typedef struct pp_kids {
    unsigned magic; /* PP_MAGIC_KIDS */
    CXCursor *v;
    unsigned n, cap;
} pp_kids;

/* How pp_render renders a range: R_SYNC re-synchronises #line after
 * inserted lines; R_EXPR renders an expression, without the insertions at
 * its two ends: those belong to the statements it begins or ends (an
 * unbraced loop body's poll, the code of a statement's calls), never to
 * the expression, which holds statements only inside `({ })`. R_HEAD
 * renders the head of a file split where levpp's declarations go: an
 * insertion at its end belongs to the text after them (moved static
 * locals before the file's first function use the hoisted literals). */
enum { R_SYNC = 1, R_EXPR = 2, R_HEAD = 4 };

typedef struct pp_var_refs {
    unsigned magic; /* PP_MAGIC_VAR_REFS */
    pp_fn *fn;
    unsigned *refs;
    unsigned char *taken;
    unsigned *plain; /* or NULL: references that only read or write an
                      * array's elements (pp_regs_cb) */
} pp_var_refs;

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
    unsigned arg0;   /* S_BLOCK: temporary of its first argument, the others after it */
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

/* The one context of a run: every piece of mutable state of levpp
 * (defined in levpp.c). */
extern pp_ctx ctx;

/* ===================================================================
 * Functions shared between the pass files, by the file that defines them
 * =================================================================== */
/* levpp.c: the command line, run once: parses argv, runs the passes and
 * writes the outputs; returns the exit status (0, 1 after an error, 2 on
 * a usage error). Its state (ctx, and the statics of the passes) is
 * neither reset nor freed: a second run needs a fresh process. */
int pp_main(int argc, char **argv);
/* pp_util.c */
void *pp_xrealloc(void *p, size_t n);
char *pp_strdup(const char *s);
void pp_putn(pp_buf *b, const char *s, size_t n);
void pp_puts(pp_buf *b, const char *s);
void __attribute__((format(printf, 2, 3))) pp_printf(pp_buf *b, const char *fmt, ...);
char *__attribute__((format(printf, 1, 2))) pp_fmt(const char *fmt, ...);
char *pp_cxstring(CXString s);
unsigned pp_lines_in(const pp_buf *b);

/* pp_source.c */
unsigned pp_off(CXSourceLocation l);
unsigned pp_begin(CXCursor c);
unsigned pp_end(CXCursor c);
int pp_rename_spelled(pp_file *f, CXCursor c, const char *name, const char *to);
int pp_in_macro(CXCursor c);
int pp_loc_in_macro(CXSourceLocation l);
int pp_in_input(CXCursor c);
pp_kids pp_children(CXCursor c);
enum CXCursorKind pp_kind(CXCursor c);
CXCursor pp_strip(CXCursor c);
unsigned pp_line_of(const pp_file *f, unsigned off);
unsigned pp_tok_from(const pp_file *f, unsigned off);
int pp_tok_is(const pp_file *f, unsigned i, const char *s);
unsigned pp_stmt_end(const pp_file *f, CXCursor c);
int pp_attributed(const pp_file *f, CXCursor c);
void pp_edit_add(pp_file *f, unsigned b, unsigned e, int cls, int depth, int run, char *text);
void pp_include_edits(pp_file *f);
/* pp_libc.c: whether DeclStmt c defines named tags with variables of
 * them (`struct S {...} s;`), whose definitions move to file scope. */
int pp_tags_with_vars(CXCursor c);
/* pp_libc.c: another definition in tu of the tag that `tag` defines
 * (struct, union and enum share the name space), or a null cursor. */
CXCursor pp_tag_namesake(CXTranslationUnit tu, CXCursor tag);

/* pp_expand.c: f's text with its function bodies macro-expanded (*text,
 * *len, malloc'd; 1), 0 when no body changes, -1 after an error (the
 * preprocessor could not run). */
int pp_expand_bodies(pp_file *f, const char **args, unsigned nargs, char **text, unsigned *len);
/* pp_expand.c: -fgnuc-version=V of the compiler (GCC), or NULL. */
const char *pp_cc_gnuc_flag(void);

void pp_render(pp_buf *out, pp_file *f, unsigned b, unsigned e, int run, int how);
int pp_span(const pp_file *f, CXCursor c, unsigned *b, unsigned *e);
void pp_written_at(const pp_file *f, CXCursor c, unsigned *b, unsigned *e);
char *pp_render_str(pp_file *f, CXCursor c, int run);

/* pp_types.c */
CXType pp_desugar(CXType t);
int pp_bad_spelling(const char *s);
/* pp_types.c: f's text with tags given to the unnamed struct and union
 * types of locals and the local ones that clash renamed (1), or 0 when
 * there is nothing to change. */
int pp_name_local_tags(const pp_file *f, char **text, unsigned *len);
/* pp_filelit.c: compound literals used as addresses at file scope become
 * named statics (1: *text is the new text). */
int pp_hoist_file_literals(const pp_file *f, char **text, unsigned *len);
char *pp_decl(CXType t, const char *name);
/* The alignment specifiers of variable `decl` (`_Alignas(...)`, the
 * `aligned` attribute), each followed by a space, to begin a declaration
 * of its frame field with; "" when it has none. A variable's own
 * alignment is no part of its type: it is taken from the declaration as
 * clang prints it, macros expanded. *value (unless NULL): the largest
 * alignment they give, 0 with none, -1 when one is not a number. */
char *pp_align_attrs(CXCursor decl, long *value);
int pp_has_pointer(CXType t);
int pp_is_vm(CXType t);
int pp_vm_typedef(CXCursor c);
char *pp_ident(const char *s);
int pp_elem(CXType t, CXCursor where, const char **id, char **size, long long *mult);
/* Whether t is a struct whose last member is a flexible array member
 * (its heap objects and statics count bytes: pp_elem's size is "1"). */
int pp_is_flex(CXType t);
/* The id of struct t described with its last member, an array of 0 or 1
 * element, as a trailing array (a type of its own beside t's). */
const char *pp_trailing_id(CXType t, CXCursor where);
void pp_record_fields(pp_type *ty, const char *owner, const char *path, CXType rec, int anon);
void pp_field_row(pp_type *ty, const char *owner, const char *path, const char *kind,
                  long long count, const char *type);
void pp_fields(pp_type *ty, const char *owner, const char *path, CXType t, CXCursor where);

/* pp_union.c */
/* The id of the tag table of `field`, a union member of a struct that may
 * hold a pointer (registering it), or NULL after an error naming it. */
const char *pp_tagged_union(CXCursor field);

/* pp_callgraph.c */
/* pp_alloc.c: allocation-type hints */
void pp_alloc_prepare(void);
int pp_alloc_tail(CXCursor c, CXCursor *parents, int np);
int pp_alloc_dest(CXCursor c, CXCursor *parents, int np, CXType *dest);
/* pp_libc.c: the type operand or expression type of sizeof c (or the
 * built-in type id in *special); 0: found. */
int pp_sizeof_type(pp_file *f, CXCursor c, CXType *t, const char **special);
const char *pp_alloc_hinted_name(const char *name);
void pp_alloc_call(pp_file *f, CXCursor c, CXCursor *parents, int np);
const char *pp_alloc_value(const char *name);
void pp_alloc_register(void);
void pp_alloc_prelude(pp_buf *o, unsigned fi);
int pp_alloc_value_in_macro(pp_file *f, CXCursor c, const char *name);
char *pp_fn_usr(CXCursor decl);
int pp_fn_find(const char *usr);
/* pp_callgraph.c: the function of the inputs that call c calls directly,
 * or -1. */
int pp_fn_called(CXCursor c);
int pp_is_loop(CXCursor c);
const char *pp_safepoint_kind(const char *name);
char *pp_icall_key(CXCursor c);
int pp_icall_candidate(const pp_fn *g, const char *key);
int pp_icall_cp(CXCursor c);
void pp_call_graph_pass(const char *first_input);

/* pp_copy.c */
void pp_copy_note(int file, int g, CXCursor ref);
void pp_copies(void);
int pp_copied(const pp_fn *g, int fi);

/* pp_inline.c */
int pp_has_attr(CXCursor def, const char *const *names);
void pp_emit_inline_hints(pp_buf *o, unsigned fi);

/* pp_frame.c */
int pp_var_find(pp_fn *fn, CXCursor decl);
CXCursor pp_write_var(CXCursor e);
int pp_writes_operand(CXCursor c);
void pp_layout_frames(void);
char *pp_var_ref(pp_fn *fn, int vi);
enum CXChildVisitResult pp_regs_cb(CXCursor c, CXCursor parent, CXClientData d);
int pp_scalar(CXType t);
int pp_local_ok(CXType t);
int pp_assignable(CXType t);
void pp_libc_header_defines(pp_buf *o, unsigned fi);
/* pp_names.c */
void pp_names_probe(CXIndex idx, const char **args, unsigned nargs);
void pp_names_check(void);
void pp_tls_check(void);
void pp_tls_prelude(pp_buf *o);
int pp_tls_defined_away(const char *kw);
char *pp_copy_into(const char *dst, const char *src, CXType t);
void pp_put_copy(pp_buf *b, const char *dst, const char *src, CXType t);
/* pp_frame.c: what parameter i (declared type at) of function type ft
 * holds: the pointer an array or function parameter is adjusted to. */
CXType pp_param_type(CXType ft, unsigned i, CXType at);
int pp_local_array_ok(CXType t);
void pp_regs(pp_fn *fn);
char *pp_return(pp_fn *fn, const char *code, const char *val);
unsigned pp_site_new(pp_fn *fn, unsigned at);
enum CXChildVisitResult pp_site_any_call_cb(CXCursor c, CXCursor parent, CXClientData d);
int pp_has_site(CXCursor c);
int pp_counted(CXCursor cond, CXCursor inc, CXCursor body);

/* pp_values.c: the values integer expression e of function fi may take
 * (*out, and 1) when they are at most PP_VALS_MAX constants known before
 * the program runs; 0: not known. Between pp_values_prepare, which finds
 * what the calls of each function pass it, and pp_values_free. */
#define PP_VALS_MAX 8
typedef struct pp_vals {
    int known;
    unsigned n;
    unsigned long long v[PP_VALS_MAX];
} pp_vals;
/* pp_values.c: the value of integer constant expression e (*v, and 1). */
int pp_const_value(CXCursor e, unsigned long long *v);
void pp_values_prepare(void);
int pp_values(int fi, CXCursor e, pp_vals *out);
void pp_values_free(void);

/* pp_intptr.c */
int pp_is_elvis(const pp_kids *k);
void pp_int_ptrs(void);

/* pp_expr.c */
CXCursor pp_macro_first(CXCursor c);
void pp_macro_walk(pp_walk *w, CXCursor c, CXCursor first, pp_unit *u, int depth);
void pp_expr(pp_walk *w, CXCursor c, int flags, pp_unit *u);
int pp_asm_refused(pp_walk *w, CXCursor c);
void pp_seqs(pp_walk *w, pp_unit *u, pp_buf *b);
void pp_reserve_release(pp_buf *b, pp_fn *fn);
/* pp_expr.c: a new temporary lev__tK of type t (its k); how slot
 * (x 'r') or temporary (x 't') k is named in a body. */
unsigned pp_tmp_new(pp_fn *fn, CXType t);
char *pp_slot_ref(int x, unsigned k, CXType t);

/* pp_block.c: the blocking Leverage calls. */
unsigned pp_block_args(pp_fn *fn, CXCursor c, CXCursor ref, const char *name);
void pp_block_text(pp_walk *w, const pp_site *s, pp_buf *b);

/* pp_setjmp.c: setjmp and longjmp (pp_setjmp_kind's kinds). */
enum { PP_SJ_SET = 1, PP_SJ_LONG, PP_SJ_REFUSED };
int pp_setjmp_kind(const char *name, const char **repl);
void pp_setjmp_ref(pp_file *f, CXCursor c, const char *name);
void pp_longjmp_call(pp_walk *w, CXCursor c);
void pp_setjmp_args(pp_fn *fn, CXCursor c, const char *name);
void pp_setjmp_text(pp_walk *w, CXCursor c, unsigned k, int top, pp_buf *b);
char *pp_setjmp_wrap(pp_buf *b, pp_fn *fn);
void pp_setjmp_dead(pp_buf *b, pp_fn *fn, unsigned k);
/* pp_body.c: whether var vi of fn is in scope at site k. */
int pp_in_scope(pp_fn *fn, unsigned vi, unsigned k);
void pp_unit_free(pp_unit *u);
void pp_unit_wrap(pp_walk *w, pp_unit *u, unsigned b, unsigned e, int depth);

/* pp_stmt.c */
void pp_poll_text(pp_walk *w, pp_buf *b, unsigned at);
void pp_vla_params(pp_walk *w);
void pp_declstmt(pp_walk *w, CXCursor c, int depth, int for_init, unsigned end, pp_unit *outer);
void pp_loop_body(pp_walk *w, CXCursor loop, CXCursor body, int depth, unsigned units);
void pp_cond_break(pp_walk *w, pp_unit *u, CXCursor cond, CXCursor body, int depth);
void pp_loop_tail(pp_walk *w, pp_unit *u, CXCursor body, int depth);
enum CXChildVisitResult pp_break_cb(CXCursor c, CXCursor parent, CXClientData d);
void pp_stmt(pp_walk *w, CXCursor c, int depth);

/* pp_loop.c */
void pp_budget_var(pp_fn *fn);
void pp_budget_poll(pp_walk *w, pp_buf *b, unsigned at, unsigned units);
void pp_loop(pp_walk *w, CXCursor c, CXCursor cond, CXCursor body, int depth, unsigned head_b,
             unsigned head_e);
void pp_for(pp_walk *w, CXCursor c, int depth);
int pp_macro_loop(CXCursor c);
int pp_pure_bound(pp_fn *fn, CXCursor e, CXCursor iv, int loads);
int pp_no_store(pp_fn *fn, CXCursor body);
int pp_bound_fits(CXType t, CXType bt, CXCursor b);
/* Iterations of an innermost counted loop that are not charged when it
 * is entered with fewer left (nested in another loop of the function). */
#define PP_SMALL 16

/* pp_bound.c: charged strips of loops bounded by one comparison of their
 * condition. */
unsigned pp_strip_head(pp_walk *w, pp_buf *b, const char *vt, const char *bt, long long s, int ptr,
                       unsigned u, int small, unsigned at);
void pp_strip_walk(pp_walk *w, CXCursor body, int depth, unsigned k, char *vt);
CXCursor pp_step_of(CXCursor e, long long *s);
int pp_ne_fits(CXType t, CXType bt);
int pp_polls_inside(CXCursor body);
int pp_bounded_strip(pp_walk *w, CXCursor c, CXCursor cond, CXCursor inc, CXCursor body, int depth,
                     unsigned at);

/* pp_body.c */
void pp_params(pp_buf *b, pp_fn *fn, int names);
void pp_ret_struct(pp_buf *o, pp_fn *fn);
char *pp_run_proto(pp_fn *fn, int resume);
void pp_walk_bodies(void);
void pp_rewrite_bodies(void);

/* pp_libc.c */
void pp_common_pass(void);

/* pp_libcstate.c: a reference to external function `name` in input f,
 * renamed onto travelling state or refused; the statics behind the
 * renamed calls, registered once every input is read; their definitions
 * and wrappers in input fi's output. */
void pp_libc_call(pp_file *f, CXCursor c, const char *name);
void pp_libc_statics(void);
void pp_libc_prelude(pp_buf *o, unsigned fi);
/* Statements the generated main runs before lev_main_run ("" for none). */
const char *pp_libc_main_setup(void);

/* pp_emit.c */
void pp_frame_type(int fi);
void pp_describe_types(void);
const char *pp_base(const char *path);
int pp_write_outputs(int rc);

#endif /* LEVPP_H */
