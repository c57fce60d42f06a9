/* pp_names.c - the names levpp's output depends on. The program's
 * thread-local variables under --main-task, which the output makes the
 * program's own (one object each, registered and travelling like any
 * file-scope variable); and the file-scope names of the program that
 * would clash with what the output includes (the Leverage headers, the
 * C headers they include) or with the names levpp writes (lev__...,
 * f__run, f__frame...): each is refused, naming the clash, rather than
 * left to an output that does not compile.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Thread-local variables (--main-task)
 * =================================================================== */

/* A --main-task program is one VT, which runs on a worker thread of the
 * runtime, not on the process's main thread, and moves between
 * processes: its thread-local variables are the program's own. The
 * output defines the keywords away, before the program's text and every
 * header, so each becomes one object with a constant address that is
 * registered like any static and travels (atexit functions, which the
 * runtime runs on the main thread, see the same values, as natively). A
 * program that also starts threads of its own would share them:
 * refused (pp_tls_check). In a task module thread-locals stay the worker
 * thread's and are not registered (pp_static_var). */
void pp_tls_prelude(pp_buf *o)
{
    if (!ctx.main_task || !ctx.tls_seen)
        return;
    pp_puts(o, "/* levpp: thread-local variables are the program's own (one VT) */\n"
               "#define _Thread_local\n#define __thread\n"
               "#if defined(__STDC_VERSION__) && __STDC_VERSION__ > 201710L\n"
               "#define thread_local\n#endif\n");
}

/* Whether the output defines keyword kw away (pp_tls_prelude). */
int pp_tls_defined_away(const char *kw)
{
    return ctx.main_task && ctx.tls_seen &&
           (!strcmp(kw, "_Thread_local") || !strcmp(kw, "__thread") || !strcmp(kw, "thread_local"));
}

/* Refuses thread-local variables in a --main-task program that starts
 * threads (pthread_create or thrd_create written in an input). */
void pp_tls_check(void)
{
    if (!ctx.main_task || !ctx.tls_seen)
        return;
    for (unsigned fi = 0; fi < ctx.nfiles; fi++) {
        pp_file *f = &ctx.files[fi];
        for (unsigned i = 0; i < f->ntoks; i++)
            if (pp_tok_is(f, i, "pthread_create") || pp_tok_is(f, i, "thrd_create")) {
                char *name = pp_cxstring(clang_getCursorSpelling(ctx.tls_first));
                pp_error(PP_LOC(ctx.tls_first),
                         "thread-local variable '%s': with --main-task a thread-local is the "
                         "program's own (one object, carried in its image), but this program "
                         "also starts threads (%.*s at %s:%u), which would share it",
                         name, (int)(f->toks[i].e - f->toks[i].b), f->text + f->toks[i].b, f->path,
                         pp_line_of(f, f->toks[i].b));
                free(name);
                return;
            }
    }
}

/* ===================================================================
 * Names the output includes
 * =================================================================== */

/* What a translation unit of `#include "lev_task.h"` declares, as
 * levpp's outputs include it (pp_names_probe): ordinary identifiers,
 * tags and the Leverage headers' macros, each with its file. */
enum { N_ORDINARY, N_TAG, N_MACRO };

typedef struct pp_name {
    char *name, *file;
    int ns;  /* N_* */
    int lev; /* declared by a Leverage header */
    CXCursor c;
} pp_name;

static struct {
    CXTranslationUnit tu;
    pp_name *v;
    unsigned n, cap;
} s_probe;

static char *s_file_of(CXCursor c)
{
    CXFile cf;
    clang_getExpansionLocation(PP_LOC(c), &cf, NULL, NULL, NULL);
    return cf ? pp_cxstring(clang_getFileName(cf)) : NULL;
}

static int s_lev_header(const char *path)
{
    const char *b = pp_base(path);
    return !strcmp(b, "lev_task.h") || !strcmp(b, "lev_abi.h") || !strcmp(b, "lev_errors.h");
}

/* The name space c declares a name in, or -1. */
static int s_ns(CXCursor c)
{
    switch (pp_kind(c)) {
    case CXCursor_VarDecl:
    case CXCursor_FunctionDecl:
    case CXCursor_TypedefDecl:
    case CXCursor_EnumConstantDecl:
        return N_ORDINARY;
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
    case CXCursor_EnumDecl:
        return clang_Cursor_isAnonymous(c) ? -1 : N_TAG;
    case CXCursor_MacroDefinition:
        return N_MACRO;
    default:
        return -1;
    }
}

static enum CXChildVisitResult s_probe_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    (void)d;
    if (pp_kind(c) == CXCursor_EnumDecl)
        clang_visitChildren(c, s_probe_cb, NULL); /* its constants */
    int ns = s_ns(c);
    char *file = ns < 0 ? NULL : s_file_of(c);
    if (!file)
        return CXChildVisit_Continue;
    int lev = s_lev_header(file);
    if (ns == N_MACRO && !lev) {
        free(file);
        return CXChildVisit_Continue;
    }
    PP_PUSH(s_probe.v, s_probe.n, s_probe.cap);
    s_probe.v[s_probe.n++] = (pp_name){pp_cxstring(clang_getCursorSpelling(c)), file, ns, lev, c};
    return CXChildVisit_Continue;
}

/* Parses `#include "lev_task.h"` as the output of the first input
 * includes it (with its flags, from its directory). Without the header
 * (not found), nothing is checked: the output would not compile, and the
 * compiler says why. */
void pp_names_probe(CXIndex idx, const char **args, unsigned nargs)
{
    const char *in = ctx.files[0].path;
    const char *slash = strrchr(in, '/');
    char *path =
        slash ? pp_fmt("%.*s/lev__probe.c", (int)(slash - in), in) : pp_strdup("lev__probe.c");
    static const char text[] = "#define LEV_TASK_OUTPUT 1\n#include \"lev_task.h\"\n";
    struct CXUnsavedFile uf = {path, text, sizeof text - 1};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = clang_parseTranslationUnit2(
        idx, path, args, (int)nargs, &uf, 1, CXTranslationUnit_DetailedPreprocessingRecord, &tu);
    free(path);
    if (ec != CXError_Success || !tu)
        return;
    unsigned nd = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic dg = clang_getDiagnostic(tu, i);
        int bad = clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error;
        clang_disposeDiagnostic(dg);
        if (bad) {
            clang_disposeTranslationUnit(tu);
            return;
        }
    }
    s_probe.tu = tu;
    clang_visitChildren(clang_getTranslationUnitCursor(tu), s_probe_cb, NULL);
}

/* Whether c (the program's) and p (the header's) are two declarations of
 * one thing that C lets stand together: compatible typedefs or
 * declarations of the same type, none of them a Leverage name the
 * program defines. */
static int s_compatible(CXCursor c, const pp_name *p)
{
    if (pp_kind(c) != pp_kind(p->c) || p->ns != N_ORDINARY)
        return 0;
    enum CXCursorKind k = pp_kind(c);
    if (p->lev && k == CXCursor_FunctionDecl && clang_isCursorDefinition(c))
        return 0; /* the program's own lev_checkpoint: not the safe point */
    if (k != CXCursor_TypedefDecl && k != CXCursor_FunctionDecl &&
        !(k == CXCursor_VarDecl && clang_Cursor_getStorageClass(c) == CX_SC_Extern))
        return 0;
    char *a = pp_cxstring(clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(c))));
    char *b = pp_cxstring(clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(p->c))));
    int same = !strcmp(a, b);
    free(a);
    free(b);
    return same;
}

/* ===================================================================
 * Names levpp writes
 * =================================================================== */

/* What levpp appends to a function's name (pp_body.c, pp_expr.c,
 * pp_emit.c, pp_setjmp.c): NAME__run, NAME__frame... */
static const char *const s_suffixes[] = {"run",    "resume", "spill",   "frame", "ret",
                                         "rsv",    "xrun",   "xresume", "xaddr", "push",
                                         "native", "sjbody", NULL};

/* Why the program's file-scope name would meet one levpp writes, or
 * NULL. */
static char *s_generated(const char *name)
{
    if (!strncmp(name, "lev__lit", 8) || !strncmp(name, "lev__unnamed", 12))
        return NULL; /* written into the text before it is parsed (pp_filelit.c, pp_types.c) */
    if (!strncmp(name, "lev__", 5) || !strncmp(name, "LEV__", 5))
        return pp_strdup("levpp's output names its own things 'lev__...' and 'LEV__...'");
    for (unsigned i = 0; i < ctx.nmoved; i++)
        if (!strcmp(ctx.moved[i].name, name))
            return pp_fmt("levpp moves a static local to file scope under that name");
    const char *sep = strstr(name, "__");
    for (; sep; sep = strstr(sep + 1, "__")) {
        if (sep == name)
            continue;
        size_t plen = (size_t)(sep - name);
        for (unsigned s = 0; s_suffixes[s]; s++)
            if (!strcmp(sep + 2, s_suffixes[s]))
                for (unsigned j = 0; j < ctx.nfns; j++)
                    if (ctx.fns[j].cp && strlen(ctx.fns[j].name) == plen &&
                        !strncmp(ctx.fns[j].name, name, plen))
                        return pp_fmt("levpp writes '%s' for function '%s'", name, ctx.fns[j].name);
    }
    return NULL;
}

/* ===================================================================
 * The check
 * =================================================================== */

static void s_check_decl(CXCursor c)
{
    int ns = s_ns(c);
    if (ns < 0 || ns == N_MACRO)
        return;
    char *name = pp_cxstring(clang_getCursorSpelling(c));
    char *file = s_file_of(c);
    char *why = NULL;
    for (unsigned i = 0; i < s_probe.n && !why && file; i++) {
        const pp_name *p = &s_probe.v[i];
        if (strcmp(p->name, name) || (p->ns != ns && p->ns != N_MACRO) || !strcmp(p->file, file) ||
            s_compatible(c, p))
            continue;
        why = pp_fmt("%s by %s, which levpp's output includes%s",
                     p->ns == N_MACRO ? "a macro defined" : "also declared", pp_base(p->file),
                     p->lev ? " (a name of the Leverage API: define it only where leverage.h "
                              "is not found)"
                            : "");
    }
    if (!why)
        why = s_generated(name);
    if (why)
        pp_error(PP_LOC(c), "file-scope name '%s' clashes with levpp's output: %s; rename it", name,
                 why);
    free(why);
    free(file);
    free(name);
}

/* Every file-scope name of the inputs and of the program's own headers
 * (not the system's) against the probe and levpp's names. Needs the
 * functions (pp_call_graph_pass) and the moved static locals
 * (pp_common_pass). */
void pp_names_check(void)
{
    for (unsigned fi = 0; fi < ctx.nfiles; fi++) {
        pp_kids k = pp_children(clang_getTranslationUnitCursor(ctx.files[fi].tu));
        for (unsigned i = 0; i < k.n; i++) {
            CXCursor c = k.v[i];
            if (clang_Location_isInSystemHeader(PP_LOC(c)))
                continue;
            char *file = s_file_of(c);
            int lev = file && s_lev_header(file);
            free(file);
            if (lev)
                continue;
            s_check_decl(c);
            if (pp_kind(c) == CXCursor_EnumDecl) {
                pp_kids e = pp_children(c);
                for (unsigned j = 0; j < e.n; j++)
                    s_check_decl(e.v[j]);
                free(e.v);
            }
        }
        free(k.v);
    }
    pp_tls_check();
    if (s_probe.tu) {
        for (unsigned i = 0; i < s_probe.n; i++) {
            free(s_probe.v[i].name);
            free(s_probe.v[i].file);
        }
        free(s_probe.v);
        clang_disposeTranslationUnit(s_probe.tu);
        memset(&s_probe, 0, sizeof s_probe);
    }
}
