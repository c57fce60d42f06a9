/* levpp.c - the Leverage pre-processor's command line: option parsing,
 * reading and parsing the inputs, and pp_main, which runs the passes in
 * order (see preproc/README.md for the output shape).
 */
#include <clang-c/CXCompilationDatabase.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "levpp.h"

#ifndef LEVPP_RESOURCE_DIR
#define LEVPP_RESOURCE_DIR ""
#endif

/* The one context of a run: every piece of mutable state of levpp. */
pp_ctx ctx;

/* ===================================================================
 * Command line, parsing, driver
 * =================================================================== */

static void pp_usage(FILE *out)
{
    fprintf(out,
            "usage: levpp [--main-task] [--no-auto-poll] [--cc CC] [-p BUILD_DIR] IN.c... -o OUT "
            "[-- CLANG_FLAGS...]\n"
            "\n"
            "Rewrites C task sources so that their virtual threads can be captured at safe\n"
            "points and resumed elsewhere (see preproc/README.md).\n"
            "\n"
            "  --main-task      turn main into the entry of a VT run by the embedded runtime\n"
            "  --no-auto-poll   no automatic safe point at the head of each loop body\n"
            "  --cc CC          the C compiler whose preprocessor expands function bodies\n"
            "                   (default: $LEVPP_CC, else cc); give it the flags after --\n"
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
        char *dir = pp_cxstring(clang_CompileCommand_getDirectory(cmd));
        for (unsigned i = 1; i < na; i++) {
            char *a = pp_cxstring(clang_CompileCommand_getArg(cmd, i));
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
                    a = pp_cxstring(clang_CompileCommand_getArg(cmd, ++i));
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

/* Whether diagnostic d is clang's error on the types of main's parameters
 * or result (`long long main(long long argc, char **argv)`, as a program
 * that does `#define int long long` has): the C compiler accepts such a
 * main with a warning, and so does levpp, which calls it from a main of
 * its own with the standard types. */
static int pp_main_type_error(CXDiagnostic d)
{
    char *s = pp_cxstring(clang_getDiagnosticSpelling(d));
    int r = (strstr(s, "parameter of 'main' (") && strstr(s, "must be of type")) ||
            strcmp(s, "'main' must return 'int'") == 0;
    free(s);
    return r;
}

/* Parses `text` as input f into *tu. quiet: errors are not printed.
 * Returns 0, or -1 after an error. */
static int pp_parse_text(pp_file *f, CXIndex idx, const char **args, unsigned nargs,
                         const char *text, unsigned len, int quiet, CXTranslationUnit *tu)
{
    struct CXUnsavedFile uf = {f->path, text, len};
    enum CXErrorCode ec = clang_parseTranslationUnit2(idx, f->path, args, (int)nargs, &uf, 1,
                                                      CXTranslationUnit_None, tu);
    if (ec != CXError_Success || !*tu) {
        if (!quiet)
            pp_error_noloc(f->path, "libclang cannot parse this file (code %d)", (int)ec);
        return -1;
    }
    int bad = 0;
    unsigned nd = clang_getNumDiagnostics(*tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic d = clang_getDiagnostic(*tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev == CXDiagnostic_Error && pp_main_type_error(d)) {
            if (!quiet) {
                char *s = pp_cxstring(clang_getDiagnosticSpelling(d));
                pp_warn(clang_getDiagnosticLocation(d), "%s (accepted, as the C compiler does)", s);
                free(s);
            }
            sev = CXDiagnostic_Warning;
        }
        if (sev >= CXDiagnostic_Error && !quiet) {
            CXSourceLocation loc = clang_getDiagnosticLocation(d);
            CXFile df = NULL, sf = NULL;
            unsigned line, col;
            clang_getExpansionLocation(loc, &df, &line, &col, NULL);
            clang_getSpellingLocation(loc, &sf, NULL, NULL, NULL);
            char *s = df && sf
                          ? pp_cxstring(clang_formatDiagnostic(
                                d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn |
                                       CXDiagnostic_DisplayOption))
                          : pp_cxstring(clang_getDiagnosticSpelling(d));
            if (df && sf) {
                fprintf(stderr, "%s\n", s);
            } else if (df) {
                /* Spelled in no file (a built-in macro such as
                 * __PTRDIFF_TYPE__), where clang's own text names no
                 * place: the place it is expanded at. */
                char *name = pp_cxstring(clang_getFileName(df));
                fprintf(stderr, "%s:%u:%u: %s: %s\n", name, line, col,
                        sev == CXDiagnostic_Fatal ? "fatal error" : "error", s);
                free(name);
            } else {
                /* No location (a bad flag, say): ours to say, with clang's words. */
                pp_error_noloc(NULL, "%s", s);
            }
            free(s);
        }
        bad |= sev >= CXDiagnostic_Error;
        clang_disposeDiagnostic(d);
    }
    if (bad) {
        clang_disposeTranslationUnit(*tu);
        *tu = NULL;
        return -1;
    }
    return 0;
}

/* Makes `text` (malloc'd, taken) f's text if it parses, with its
 * translation unit; 0, or -1 when it does not parse (f unchanged). */
static int pp_adopt_text(pp_file *f, CXIndex idx, const char **args, unsigned nargs, char *text,
                         unsigned len)
{
    CXTranslationUnit tu;
    if (pp_parse_text(f, idx, args, nargs, text, len, 1, &tu)) {
        free(text);
        return -1;
    }
    clang_disposeTranslationUnit(f->tu);
    f->tu = tu;
    free(f->text);
    f->text = text;
    f->len = len;
    f->cxf = clang_getFile(f->tu, f->path);
    return 0;
}

static int pp_parse(pp_file *f, CXIndex idx, const char **args, unsigned nargs)
{
    f->text = pp_read_file(f->path, &f->len);
    if (!f->text) {
        pp_error_noloc(NULL, "cannot read %s: %s", f->path, strerror(errno));
        return -1;
    }
    if (pp_parse_text(f, idx, args, nargs, f->text, f->len, 0, &f->tu))
        return -1;
    f->cxf = clang_getFile(f->tu, f->path);
    /* the bodies as the compiler sees them (pp_expand.c) */
    char *ntext;
    unsigned nlen;
    int expanded = pp_expand_bodies(f, args, nargs, &ntext, &nlen);
    if (expanded < 0)
        return -1;
    if (expanded && pp_adopt_text(f, idx, args, nargs, ntext, nlen))
        pp_warn(clang_getLocationForOffset(f->tu, f->cxf, 0),
                "the function bodies with macros expanded do not parse; macros are kept");
    /* struct types of locals: unnamed ones tagged, clashing ones renamed */
    if (pp_name_local_tags(f, &ntext, &nlen))
        pp_adopt_text(f, idx, args, nargs, ntext, nlen);
    /* compound literals at file scope used as addresses: named statics */
    if (pp_hoist_file_literals(f, &ntext, &nlen) && pp_adopt_text(f, idx, args, nargs, ntext, nlen))
        pp_warn(clang_getLocationForOffset(f->tu, f->cxf, 0),
                "the file-scope compound literals made named statics do not parse; they are kept");
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
        } else if (!strcmp(a, "-o") || !strcmp(a, "-p") || !strcmp(a, "--cc")) {
            if (i + 1 >= argc)
                return pp_usage_error("option %s needs an argument", a);
            if (!strcmp(a, "-o"))
                o->out = argv[++i];
            else if (!strcmp(a, "-p"))
                o->dbdir = argv[++i];
            else
                ctx.cc = argv[++i];
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
    const char *gnuc = pp_cc_gnuc_flag();
    if (gnuc) { /* before the user's flags: theirs win */
        PP_PUSH(args, na, capa);
        memmove(args + 1, args, na * sizeof *args);
        args[0] = gnuc;
        na++;
    }
    PP_PUSH(args, na, capa);
    args[na++] = "-D__LEVPP__=1";
    *nargs = na;
    return args;
}

/* The components of path, made absolute (from the working directory) and
 * with `.` and `..` resolved as written (no symbolic link followed: as
 * CMake's leverage_add_tasks names the outputs). Its base name loses its
 * extension. *n: how many. */
static char **pp_path_parts(const char *path, unsigned *n)
{
    char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0);
    char *full = pp_fmt("%s/%s", cwd ? cwd : "", path);
    free(cwd);
    char **v = NULL;
    unsigned cap = 0;
    *n = 0;
    for (char *t = strtok(full, "/"); t; t = strtok(NULL, "/")) {
        if (!strcmp(t, "."))
            continue;
        if (!strcmp(t, "..")) {
            if (*n)
                free(v[--*n]);
            continue;
        }
        PP_PUSH(v, *n, cap);
        v[(*n)++] = pp_strdup(t);
    }
    free(full);
    if (*n) {
        char *dot = strrchr(v[*n - 1], '.');
        if (dot && dot != v[*n - 1])
            *dot = '\0';
    }
    return v;
}

/* The last `depth` components of parts, joined by '/'. */
static char *pp_path_tail(char **parts, unsigned n, unsigned depth)
{
    pp_buf b = {0};
    for (unsigned i = n - depth; i < n; i++)
        pp_printf(&b, "%s%s", i > n - depth ? "/" : "", parts[i]);
    return b.p;
}

/* Names each input's output and stem (pp_file.outname, .stem): its base
 * name without its extension, OUT/NAME.lev.c with several inputs; an
 * input whose base name another input has too takes as many of its
 * directories as tell them apart (brotli's dec/static_init.c and
 * enc/static_init.c: OUT/dec/static_init.lev.c, stem dec_static_init).
 * The stem names the input in generated identifiers (NAME__STEM,
 * lev__fill_STEM), so stems that only differ in characters an identifier
 * cannot hold get a number. Returns 0, or 1 after an error (one file
 * given twice). */
static int pp_name_outputs(const pp_options *o)
{
    unsigned nin = o->nin, *np = pp_xrealloc(NULL, sizeof *np * nin),
             *depth = pp_xrealloc(NULL, sizeof *depth * nin);
    char ***parts = pp_xrealloc(NULL, sizeof *parts * nin),
         **tail = pp_xrealloc(NULL, sizeof *tail * nin);
    for (unsigned i = 0; i < nin; i++) {
        parts[i] = pp_path_parts(o->inputs[i], &np[i]);
        depth[i] = 1;
    }
    int rc = 0;
    for (int changed = 1; changed && !rc;) {
        changed = 0;
        for (unsigned i = 0; i < nin; i++)
            tail[i] = pp_path_tail(parts[i], np[i], depth[i]);
        unsigned char *grow = pp_xrealloc(NULL, nin);
        memset(grow, 0, nin);
        for (unsigned i = 0; i < nin; i++)
            for (unsigned j = i + 1; j < nin; j++)
                if (!strcmp(tail[i], tail[j]))
                    grow[i] = grow[j] = 1;
        for (unsigned i = 0; i < nin && !rc; i++) {
            if (!grow[i])
                continue;
            if (depth[i] == np[i]) {
                pp_error_noloc(NULL, "%s is given twice as an input", o->inputs[i]);
                rc = 1;
            }
            depth[i]++;
            changed = 1;
        }
        free(grow);
        for (unsigned i = 0; changed && i < nin; i++)
            free(tail[i]);
    }
    for (unsigned i = 0; i < nin; i++) {
        pp_file *f = &ctx.files[i];
        f->path = o->inputs[i];
        f->stem = pp_ident(rc ? "" : tail[i]);
        for (unsigned j = 0; j < i; j++)
            if (!strcmp(ctx.files[j].stem, f->stem)) {
                char *num = pp_fmt("%s__%u", f->stem, i);
                free(f->stem);
                f->stem = num;
                break;
            }
        f->outname = nin > 1 ? pp_fmt("%s/%s.lev.c", o->out, rc ? "" : tail[i]) : pp_strdup(o->out);
        f->outsub = nin > 1 ? (unsigned)strlen(o->out) + 1 : 0;
        if (!rc)
            free(tail[i]);
        for (unsigned k = 0; k < np[i]; k++)
            free(parts[i][k]);
        free(parts[i]);
    }
    free(parts);
    free(tail);
    free(np);
    free(depth);
    return rc;
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
    int rc = pp_name_outputs(o);
    for (unsigned i = 0; i < nin && !rc; i++) {
        unsigned na;
        const char **args = pp_clang_args(o, db, i, &na);
        if (pp_parse(&ctx.files[i], idx, args, na))
            rc = 1;
        if (!rc && i == 0)
            pp_names_probe(idx, args, na); /* what the outputs include */
        free(args);
    }
    if (db)
        clang_CompilationDatabase_dispose(db);
    return rc;
}

int pp_main(int argc, char **argv)
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
        /* names of the program that would clash with the output's */
        pp_names_check();
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
