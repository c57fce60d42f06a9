/* pp_expand.c - function bodies as the compiler sees them. Before the
 * passes look at an input, every function body (and file-scope
 * initializer) in it that uses a macro or holds a preprocessor directive
 * is replaced by what the C preprocessor makes of it, line for line: the passes then rewrite the
 * code the compiler compiles, whatever the macros hid (a local named in
 * a macro's body, a type spelled by a macro, a `return` or a `malloc`
 * behind one, an `#ifdef` inside a statement). So is the head of a
 * definition whose name a macro writes (`long BZ_API(f)(...)`), and a
 * whole definition whose body a macro writes (`DEFINE_FN(name)`), and a
 * file-scope variable whose name a macro writes: the passes then find the
 * definition in the input's text by its real name.
 *
 * How. The input is copied with a marker identifier after the `{` and
 * before the `}` of each body, and the copy goes through the C compiler's
 * own preprocessor (`cc -E -dD`, the input's flags) in one run, so every
 * macro has the definition it has at that point of the file. The text
 * between a body's markers is that body expanded. Each piece goes back on
 * the line its linemarkers give, so the input keeps its line numbers
 * (diagnostics and #line name the user's lines); `#pragma` lines become
 * `_Pragma` operators in place; `#define` and `#undef` inside a body stay
 * on their lines, so the code after the body still sees them.
 *
 * An expanded body is kept only when running the preprocessor again over
 * it gives it back unchanged: the output is compiled by a compiler that
 * preprocesses it again, and a self-referential macro (`#define x (x+1)`)
 * would expand twice. A body that cannot be expanded exactly (one whose
 * lines would move, or that fails that test) keeps its source text, and
 * the passes deal with its macros as before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "levpp.h"

/* A region of the input that is expanded: a body (the text between its
 * braces), a file-scope initializer, the head of a definition whose name
 * a macro writes (from its first token to its body's `{`), or a whole
 * definition whose body a macro writes (the macro invocations). */
typedef struct pp_region {
    unsigned b, e;
    unsigned line_b, line_e; /* lines of the `{` and the `}` */
    char *exp;               /* expanded text, or NULL */
    size_t nexp;
    char *dropped; /* #define/#undef lines of headers the expansion leaves out */
} pp_region;

typedef struct pp_regions {
    unsigned magic;
    pp_file *f;
    pp_region *v;
    unsigned n, cap;
} pp_regions;

/* Length of the comment or literal at s[0, n), or 0. */
static size_t pp_skip_comment(const char *s, size_t n)
{
    if (n >= 2 && s[0] == '/' && s[1] == '*') {
        for (size_t j = 2; j + 1 < n; j++)
            if (s[j] == '*' && s[j + 1] == '/')
                return j + 2;
        return n;
    }
    if (n >= 2 && s[0] == '/' && s[1] == '/') {
        const char *nl = memchr(s, '\n', n);
        return nl ? (size_t)(nl - s) : n;
    }
    if (s[0] == '"' || s[0] == '\'') {
        size_t j = 1;
        while (j < n && s[j] != s[0] && s[j] != '\n')
            j += s[j] == '\\' ? 2 : 1;
        return j < n ? j + 1 : n;
    }
    return 0;
}

/* End of the macro invocation whose name begins at text[off]: after the
 * `)` that closes its arguments, or after the name (object-like). */
static unsigned pp_text_inv_end(const char *s, unsigned n, unsigned off)
{
    unsigned i = off;
    while (i < n && (s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
                     ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z')))
        i++;
    unsigned name_end = i;
    for (;;) { /* blanks, line splices and comments before a `(` */
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ||
                         (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n')))
            i++;
        size_t c = i + 1 < n && s[i] == '/' && (s[i + 1] == '*' || s[i + 1] == '/')
                       ? pp_skip_comment(s + i, n - i)
                       : 0;
        if (!c)
            break;
        i += (unsigned)c;
    }
    if (i >= n || s[i] != '(')
        return name_end;
    int par = 0;
    while (i < n) {
        size_t c = pp_skip_comment(s + i, n - i);
        if (c) {
            i += (unsigned)c;
            continue;
        }
        if (s[i] == '(')
            par++;
        else if (s[i] == ')' && --par == 0)
            return i + 1;
        i++;
    }
    return name_end;
}

/* Adds region [b, e); one that overlaps the last one (two definitions
 * one macro invocation writes) joins it. */
static void pp_region_add(pp_regions *rs, unsigned b, unsigned e)
{
    if (rs->n && b < rs->v[rs->n - 1].e) {
        pp_region *last = &rs->v[rs->n - 1];
        if (e > last->e)
            last->e = e;
        return;
    }
    PP_PUSH(rs->v, rs->n, rs->cap);
    rs->v[rs->n++] = (pp_region){.b = b, .e = e};
}

static enum CXChildVisitResult pp_region_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_regions *rs = pp_visit_state(d, PP_MAGIC_REGIONS);
    const pp_file *f = rs->f;
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_VarDecl && pp_in_input(c)) {
        /* a file-scope initializer: its string literals and pointers are
         * registered as written, so it is expanded too (a table of
         * strings made by a macro); a variable whose name a macro writes
         * (`DECLARE(name, "text")`), with its whole declaration */
        CXCursor init = clang_Cursor_getVarDeclInitializer(c);
        if (clang_Cursor_isNull(init))
            return CXChildVisit_Continue;
        unsigned b = pp_begin(init), e = pp_end(init);
        if (pp_loc_in_macro(PP_LOC(c))) {
            CXSourceLocation end = clang_getRangeEnd(clang_getCursorExtent(c));
            b = pp_begin(c);
            e = pp_off(end);
            if (pp_loc_in_macro(end)) /* a macro argument: its invocation's end */
                e = pp_text_inv_end(f->text, f->len, e);
            if (e > b && e <= f->len)
                pp_region_add(rs, b, e);
            return CXChildVisit_Continue;
        }
        if (pp_in_macro(c) || e <= b || e > f->len || (rs->n && b < rs->v[rs->n - 1].e))
            return CXChildVisit_Continue;
        int braces = f->text[b] == '{' && f->text[e - 1] == '}';
        pp_region_add(rs, braces ? b + 1 : b, braces ? e - 1 : e);
        return CXChildVisit_Continue;
    }
    if (k != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) || !pp_in_input(c))
        return CXChildVisit_Continue;
    pp_kids kids = pp_children(c);
    CXCursor body = kids.n ? kids.v[kids.n - 1] : clang_getNullCursor();
    free(kids.v);
    if (pp_kind(body) != CXCursor_CompoundStmt)
        return CXChildVisit_Continue;
    int body_macro = pp_in_macro(body);
    if (pp_loc_in_macro(PP_LOC(c)) || body_macro) {
        /* a name (or a whole definition) that a macro writes: the head,
         * or the whole definition, expanded too, so that the passes see
         * the function in the input's text as the compiler does */
        unsigned hb = pp_begin(c), he = pp_begin(body);
        if (body_macro) {
            CXSourceLocation end = clang_getRangeEnd(clang_getCursorExtent(c));
            he = pp_off(end);
            if (pp_loc_in_macro(end)) /* a macro argument: its invocation's end */
                he = pp_text_inv_end(f->text, f->len, he);
        }
        if (he > hb && he <= f->len)
            pp_region_add(rs, hb, he);
        if (body_macro)
            return CXChildVisit_Continue;
    }
    unsigned b = pp_begin(body), e = pp_end(body);
    if (e <= b + 1 || e > f->len || f->text[b] != '{' || f->text[e - 1] != '}')
        return CXChildVisit_Continue;
    pp_region_add(rs, b + 1, e - 1);
    return CXChildVisit_Continue;
}

/* ===================================================================
 * Text: comparing token streams, escaping
 * =================================================================== */

static int pp_wordch(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

/* Appends text[0, n) without whitespace, comments and line splices,
 * literals kept whole: two texts give the same string when they spell the
 * same tokens (for what this file compares, bodies and their expansions). */
static void pp_squash(pp_buf *out, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        char ch = s[i];
        if (ch == '\\' && i + 1 < n && s[i + 1] == '\n') {
            i += 2;
        } else if (ch == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *end = NULL;
            for (size_t j = i + 2; j + 1 < n; j++)
                if (s[j] == '*' && s[j + 1] == '/') {
                    end = s + j + 2;
                    break;
                }
            i = end ? (size_t)(end - s) : n;
        } else if (ch == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' ||
                   ch == '\v') {
            /* between two words, one space: `a b` is not `ab` */
            size_t j = i;
            while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r' ||
                             s[j] == '\f' || s[j] == '\v'))
                j++;
            if (out->n && pp_wordch(out->p[out->n - 1]) && j < n && pp_wordch(s[j]))
                pp_puts(out, " ");
            i = j;
        } else if (ch == '"' || ch == '\'') {
            size_t j = i + 1;
            while (j < n && s[j] != ch && s[j] != '\n')
                j += s[j] == '\\' ? 2 : 1;
            j = j < n ? j + 1 : n;
            pp_putn(out, s + i, j - i);
            i = j;
        } else {
            pp_putn(out, s + i, 1);
            i++;
        }
    }
}

static int pp_same_tokens(const char *a, size_t na, const char *b, size_t nb)
{
    pp_buf x = {0}, y = {0};
    pp_squash(&x, a, na);
    pp_squash(&y, b, nb);
    int same = x.n == y.n && (!x.n || !memcmp(x.p, y.p, x.n));
    free(x.p);
    free(y.p);
    return same;
}

/* A C string literal spelling s[0, n). */
static void pp_put_quoted(pp_buf *out, const char *s, size_t n)
{
    pp_puts(out, "\"");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            pp_puts(out, "\\");
        pp_putn(out, s + i, 1);
    }
    pp_puts(out, "\"");
}

/* ===================================================================
 * Running the preprocessor
 * =================================================================== */

/* Whether flag a (and the one after it, *two) matters to preprocessing. */
static int pp_cpp_flag(const char *a, int *two)
{
    static const char *const with_arg[] = {"-I",        "-D",       "-U",          "-include",
                                           "-imacros",  "-isystem", "-iquote",     "-idirafter",
                                           "-isysroot", "-iprefix", "-iwithprefix"};
    static const char *const exact[] = {"-ansi",  "-pthread",  "-fopenmp",        "-fPIC",
                                        "-fpic",  "-fPIE",     "-fpie",           "-ffast-math",
                                        "-m32",   "-m64",      "-funsigned-char", "-fsigned-char",
                                        "-undef", "-nostdinc", "-fshort-wchar",   "-fno-builtin"};
    *two = 0;
    for (size_t i = 0; i < sizeof with_arg / sizeof *with_arg; i++)
        if (!strcmp(a, with_arg[i])) {
            *two = 1;
            return 1;
        }
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        if (!strcmp(a, exact[i]))
            return 1;
    return !strncmp(a, "-I", 2) || !strncmp(a, "-D", 2) || !strncmp(a, "-U", 2) ||
           !strncmp(a, "-std=", 5) || !strncmp(a, "-O", 2) || !strncmp(a, "-march=", 7) ||
           !strncmp(a, "-isystem", 8) || !strncmp(a, "-iquote", 7);
}

/* The compiler whose preprocessor expands the bodies: --cc, $LEVPP_CC,
 * else cc. */
static const char *pp_cc(void)
{
    if (ctx.cc)
        return ctx.cc;
    const char *cc = getenv("LEVPP_CC");
    return cc && *cc ? cc : "cc";
}

/* The flag that makes libclang define the GNU C version the compiler
 * defines (`-fgnuc-version=6.5.0` for GCC 12.2; clang's own is 4.2.1),
 * so that `#if __GNUC__ * 100 + __GNUC_MINOR__ >= 403` selects the same
 * code in levpp's parse as in the compiler's preprocessor and build; NULL
 * when the compiler is clang, or does not say. Capped at 6.5: from 7 on,
 * the C library's headers take types and attributes of that GCC as given
 * (_Float128, __malloc__ with arguments) that libclang does not have.
 * Asked once. */
const char *pp_cc_gnuc_flag(void)
{
    static int done;
    static char flag[64];
    if (done)
        return *flag ? flag : NULL;
    done = 1;
    int fd[2];
    if (pipe(fd))
        return NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        if (dup2(fd[1], 1) < 0 || !freopen("/dev/null", "w", stderr) ||
            !freopen("/dev/null", "r", stdin))
            _exit(126);
        const char *argv[] = {pp_cc(), "-dM", "-E", "-x", "c", "/dev/null", NULL};
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    long v[3] = {-1, 0, 0};
    int clang = 0;
    FILE *in = pid > 0 ? fdopen(fd[0], "r") : NULL;
    char line[512];
    while (in && fgets(line, sizeof line, in)) {
        static const char *const names[] = {"#define __GNUC__ ", "#define __GNUC_MINOR__ ",
                                            "#define __GNUC_PATCHLEVEL__ "};
        for (int i = 0; i < 3; i++)
            if (!strncmp(line, names[i], strlen(names[i])))
                v[i] = strtol(line + strlen(names[i]), NULL, 10);
        clang |= !strncmp(line, "#define __clang__ ", 18);
    }
    if (in)
        fclose(in);
    else
        close(fd[0]);
    int st = 0;
    if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 && !clang &&
        v[0] > 0)
        snprintf(flag, sizeof flag, "-fgnuc-version=%ld.%ld.%ld", v[0] > 6 ? 6 : v[0],
                 v[0] > 6 ? 5 : v[1], v[0] > 6 ? 0 : v[2]);
    return *flag ? flag : NULL;
}

/* Runs `cc -E -dD` with the input's flags on `text`, written to a file of
 * a fresh directory; the output in *out. 0, or -1 with *why. */
static int pp_run_cpp(const pp_file *f, const char **args, unsigned nargs, const pp_buf *text,
                      pp_buf *out, char **why)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = pp_fmt("%s/levpp-cpp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        free(dir);
        *why = pp_fmt("cannot make a temporary directory: %s", strerror(errno));
        return -1;
    }
    char *in = pp_fmt("%s/in.c", dir), *res = pp_fmt("%s/out.i", dir),
         *err = pp_fmt("%s/err.txt", dir);
    int rc = -1;
    FILE *fp = fopen(in, "wb");
    if (!fp || fwrite(text->p, 1, text->n, fp) != text->n || fclose(fp)) {
        *why = pp_fmt("cannot write %s: %s", in, strerror(errno));
        goto out;
    }
    unsigned na = 0, cap = 16;
    const char **argv = pp_xrealloc(NULL, cap * sizeof *argv);
    char *srcdir = pp_strdup(f->path);
    char *slash = strrchr(srcdir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(srcdir, ".");
    const char *head[] = {pp_cc(), "-E", "-dD", "-x", "c", "-iquote", srcdir};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) {
        PP_PUSH(argv, na, cap);
        argv[na++] = head[i];
    }
    for (unsigned i = 0; i < nargs; i++) {
        int two;
        if (!pp_cpp_flag(args[i], &two))
            continue;
        PP_PUSH(argv, na, cap);
        argv[na++] = args[i];
        if (two && i + 1 < nargs) {
            PP_PUSH(argv, na, cap);
            argv[na++] = args[++i];
        }
    }
    const char *tail[] = {"-o", res, in, NULL};
    for (size_t i = 0; i < sizeof tail / sizeof *tail; i++) {
        PP_PUSH(argv, na, cap);
        argv[na++] = tail[i];
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(err, "w", stderr) || !freopen("/dev/null", "r", stdin))
            _exit(126);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st = 0;
    if (pid < 0) {
        *why = pp_fmt("cannot start %s: %s", pp_cc(), strerror(errno));
    } else if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char line[512] = "";
        FILE *ef = fopen(err, "r");
        while (ef && fgets(line, sizeof line, ef) && !strstr(line, "error"))
            ;
        if (ef)
            fclose(ef);
        line[strcspn(line, "\n")] = '\0';
        *why = pp_fmt("%s -E failed%s%s", pp_cc(), *line ? ": " : "", line);
    } else {
        FILE *rf = fopen(res, "rb");
        char tmp[65536];
        size_t n;
        while (rf && (n = fread(tmp, 1, sizeof tmp, rf)) > 0)
            pp_putn(out, tmp, n);
        if (rf)
            fclose(rf);
        rc = rf ? 0 : -1;
        if (!rf)
            *why = pp_fmt("cannot read %s: %s", res, strerror(errno));
    }
    free(argv);
    free(srcdir);
out:
    unlink(in);
    unlink(res);
    unlink(err);
    rmdir(dir);
    free(dir);
    free(in);
    free(res);
    free(err);
    return rc;
}

/* ===================================================================
 * Reading the expansion back
 * =================================================================== */

/* The input's text with the markers of regions set `on` around them. */
static void pp_marked(pp_buf *out, const pp_file *f, const char *text, unsigned len,
                      const pp_regions *rs, const int *on)
{
    pp_buf q = {0};
    pp_put_quoted(&q, f->path, strlen(f->path));
    pp_printf(out, "#line 1 %s\n", q.p);
    free(q.p);
    unsigned cur = 0;
    for (unsigned k = 0; k < rs->n; k++) {
        if (!on[k])
            continue;
        const pp_region *r = &rs->v[k];
        pp_putn(out, text + cur, r->b - cur);
        pp_printf(out, " __levpp_b%u__ ", k);
        pp_putn(out, text + r->b, r->e - r->b);
        pp_printf(out, " __levpp_e%u__ ", k);
        cur = r->e;
    }
    pp_putn(out, text + cur, len - cur);
}

/* A linemarker `# N "file" ...`: its line and whether it names the input. */
static int pp_linemarker(const char *s, size_t n, const char *qpath, unsigned *line, int *main_file)
{
    if (n < 3 || s[0] != '#' || s[1] != ' ' || s[2] < '0' || s[2] > '9')
        return 0;
    char *end;
    unsigned long l = strtoul(s + 2, &end, 10);
    *line = (unsigned)l;
    size_t ql = strlen(qpath);
    *main_file = (size_t)(s + n - end) > ql && end[0] == ' ' && !strncmp(end + 1, qpath, ql) &&
                 (end + 1 + ql == s + n || end[1 + ql] == ' ');
    return 1;
}

/* Where a region's expansion is being written: its text so far, the line
 * its last line stands for, the line of the `#include` whose header is
 * being read, and the `#define`s and `#undef`s of such headers that wait
 * for a line of their own (each ending with a newline). */
typedef struct pp_place_st {
    pp_buf o;
    unsigned at, inc;
    pp_buf pend;
    size_t pend_at; /* pend's first directive still to place */
    int ok;
} pp_place_st;

/* Whether the line being written holds something already. */
static int pp_line_used(const pp_place_st *st) { return st->o.n && st->o.p[st->o.n - 1] != '\n'; }

/* Ends lines until the one being written stands for `line`; a line left
 * empty takes the next directive of an included header that waits. The
 * code after it is expanded already, so a directive that moves down to a
 * free line changes nothing but what the code after the body sees, and
 * that is what it saw. */
static void pp_pad_to(pp_place_st *st, unsigned line)
{
    for (; st->at < line; st->at++) {
        if (st->pend_at < st->pend.n && !pp_line_used(st)) {
            const char *d = st->pend.p + st->pend_at;
            size_t n = (size_t)((char *)memchr(d, '\n', st->pend.n - st->pend_at) - d);
            pp_putn(&st->o, d, n);
            st->pend_at += n + 1;
        }
        pp_puts(&st->o, "\n");
    }
}

/* Places s[0, n) (an output line, or the part of one inside a region),
 * from line `line` of the input (or of a header it includes, !main_file:
 * then on the line of its `#include`), in st; clears st->ok when it cannot
 * go there without moving a line. */
static void pp_place(pp_place_st *st, unsigned line, int main_file, const char *s, size_t n)
{
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    if (!n || !st->ok)
        return;
    int directive = s[0] == '#';
    pp_pad_to(st, main_file ? line : st->inc);
    if (directive && n > 8 && !strncmp(s, "#pragma ", 8)) {
        if (pp_line_used(st))
            pp_puts(&st->o, " ");
        pp_puts(&st->o, "_Pragma(");
        pp_put_quoted(&st->o, s + 8, n - 8);
        pp_puts(&st->o, ")");
        return;
    }
    int def = !strncmp(s, "#define ", 8) || !strncmp(s, "#undef ", 7);
    if (directive && !main_file && def) {
        /* a header's: on the next free line of the body */
        pp_putn(&st->pend, s, n);
        pp_puts(&st->pend, "\n");
        return;
    }
    if (directive) {
        /* #define and #undef keep a line of their own, on their line, and
         * after those of headers included before them */
        if (!main_file || line != st->at || pp_line_used(st) || !def || st->pend_at < st->pend.n) {
            st->ok = 0;
            return;
        }
        pp_putn(&st->o, s, n);
        pp_puts(&st->o, "\n");
        st->at++;
        return;
    }
    if (pp_line_used(st))
        pp_puts(&st->o, " ");
    pp_putn(&st->o, s, n);
}

/* The marker `__levpp_Wk__` (W: b or e) at or after s, before end: where
 * it starts (NULL: none) and *k, *after. */
static const char *pp_find_marker(const char *s, const char *end, char which, unsigned *k,
                                  const char **after)
{
    for (const char *t = s; t + 12 <= end; t++) {
        t = memchr(t, '_', (size_t)(end - t));
        if (!t || t + 12 > end)
            return NULL;
        if (strncmp(t, "__levpp_", 8) || t[8] != which || t[9] < '0' || t[9] > '9')
            continue;
        if (t > s && (t[-1] == '_' || (t[-1] >= '0' && t[-1] <= '9') ||
                      ((t[-1] | 32) >= 'a' && (t[-1] | 32) <= 'z')))
            continue;
        char *num_end;
        unsigned long v = strtoul(t + 9, &num_end, 10);
        if (num_end + 2 > end || num_end[0] != '_' || num_end[1] != '_')
            continue;
        *k = (unsigned)v;
        *after = num_end + 2;
        return t;
    }
    return NULL;
}

/* Reads each region's expansion out of `cpp` (the preprocessed marked
 * text) into r->exp; a region that cannot be placed line for line gets
 * none. */
static void pp_read_back(const pp_file *f, pp_regions *rs, const int *on, const pp_buf *cpp)
{
    pp_buf q = {0};
    pp_put_quoted(&q, f->path, strlen(f->path));
    unsigned line = 1, in = 0;
    int main_file = 1, reading = 0;
    pp_place_st st = {{0}, 0, 0, {0}, 0, 0};
    const char *s = cpp->p, *end = cpp->p + cpp->n;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *lend = nl ? nl : end;
        unsigned ml;
        int mf;
        if (pp_linemarker(s, (size_t)(lend - s), q.p, &ml, &mf)) {
            if (main_file && !mf)
                st.inc = line; /* the line of the #include */
            line = ml;
            main_file = mf;
            s = nl ? nl + 1 : end;
            continue;
        }
        const char *p = s;
        while (p < lend) {
            unsigned k;
            const char *after;
            if (!reading) {
                const char *m = pp_find_marker(p, lend, 'b', &k, &after);
                if (!m)
                    break;
                p = after;
                if (k >= rs->n || !on[k])
                    continue;
                reading = 1;
                in = k;
                st.o.n = 0;
                st.pend.n = st.pend_at = 0;
                st.at = rs->v[k].line_b;
                st.ok = line == st.at && main_file;
                continue;
            }
            const char *m = pp_find_marker(p, lend, 'e', &k, &after);
            pp_place(&st, line, main_file, p, (size_t)((m ? m : lend) - p));
            if (!m)
                break;
            pp_region *r = &rs->v[in];
            if (k == in && st.ok && main_file && line == r->line_e && st.at <= r->line_e)
                pp_pad_to(&st, r->line_e);
            if (k == in && st.ok && main_file && line == r->line_e && st.at == r->line_e) {
                free(r->exp);
                r->nexp = st.o.n;
                r->exp = st.o.p ? st.o.p : pp_strdup("");
                st.o = (pp_buf){0};
                /* directives of a header with no free line left: they go,
                 * if nothing after the body needs them (pp_dropped_used) */
                free(r->dropped);
                r->dropped = st.pend_at < st.pend.n ? pp_fmt("%.*s", (int)(st.pend.n - st.pend_at),
                                                             st.pend.p + st.pend_at)
                                                    : NULL;
            }
            reading = 0;
            p = after;
        }
        line++;
        s = nl ? nl + 1 : end;
    }
    free(st.o.p);
    free(st.pend.p);
    free(q.p);
}

/* End of the group of lines that starts at s[i]: its last line ends
 * outside a comment and without a line splice. */
static size_t pp_group_end(const char *s, size_t n, size_t i)
{
    int comment = 0;
    char quote = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '\n') {
            if (!comment && !(i > 0 && s[i - 1] == '\\'))
                return i + 1;
            quote = 0;
        } else if (comment) {
            if (c == '*' && i + 1 < n && s[i + 1] == '/') {
                comment = 0;
                i++;
            }
        } else if (quote) {
            if (c == '\\')
                i++;
            else if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            comment = 1;
            i++;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i + 1 < n && s[i + 1] != '\n')
                i++;
        }
    }
    return n;
}

/* Offset after the line-th newline of s (or n). */
static size_t pp_after_lines(const char *s, size_t n, size_t from, unsigned lines)
{
    size_t i = from;
    for (; i < n && lines; i++)
        lines -= s[i] == '\n';
    return i;
}

/* Appends the lines of exp[0, ne), each indented as the line of
 * src[0, ns) it stands for. */
static void pp_put_indented(pp_buf *out, const char *src, size_t ns, const char *exp, size_t ne)
{
    size_t i = 0, j = 0;
    while (j < ne) {
        size_t ind = 0;
        while (i + ind < ns && (src[i + ind] == ' ' || src[i + ind] == '\t'))
            ind++;
        const char *nl = memchr(exp + j, '\n', ne - j);
        size_t ej = nl ? (size_t)(nl - exp) + 1 : ne;
        if (ej - j > 1 && exp[j] != ' ' && exp[j] != '#')
            pp_putn(out, src + i, ind);
        pp_putn(out, exp + j, ej - j);
        j = ej;
        const char *snl = i < ns ? memchr(src + i, '\n', ns - i) : NULL;
        i = snl ? (size_t)(snl - src) + 1 : ns;
    }
}

/* The region's text, its expansion taken only where the tokens differ:
 * a group of lines (joined by comments or splices) the preprocessor left
 * alone keeps its source text, with its spacing and comments. */
static void pp_merge(pp_buf *out, const char *src, size_t ns, const char *exp, size_t ne)
{
    size_t i = 0, j = 0;
    while (i < ns || j < ne) {
        size_t gi = pp_group_end(src, ns, i);
        unsigned nl = 0;
        for (size_t k = i; k < gi; k++)
            nl += src[k] == '\n';
        size_t gj = gi < ns ? pp_after_lines(exp, ne, j, nl) : ne;
        if (pp_same_tokens(src + i, gi - i, exp + j, gj - j))
            pp_putn(out, src + i, gi - i);
        else
            pp_put_indented(out, src + i, gi - i, exp + j, gj - j);
        i = gi;
        j = gj;
    }
}

/* Whether a macro that region k's dropped directives name is named in
 * the text after it, outside the regions after it that are expanded
 * (their macros are expanded already, with the definitions the dropped
 * directives gave): the code there would see another definition. */
static int pp_dropped_used(const pp_file *f, const pp_regions *rs, const int *use, unsigned k)
{
    for (const char *d = rs->v[k].dropped; d && *d; d = strchr(d, '\n') + 1) {
        const char *name = d + (d[1] == 'd' ? 8 : 7);
        size_t len = 0;
        while (pp_wordch(name[len]))
            len++;
        unsigned j = k + 1;
        for (unsigned i = rs->v[k].e; len && i + len <= f->len; i++) {
            while (j < rs->n && (!use[j] || rs->v[j].e <= i))
                j++;
            if (j < rs->n && i >= rs->v[j].b) {
                i = rs->v[j].e;
                continue;
            }
            size_t skip = pp_skip_comment(f->text + i, f->len - i);
            if (skip) {
                i += (unsigned)skip - 1;
                continue;
            }
            if (!memcmp(f->text + i, name, len) && (i == 0 || !pp_wordch(f->text[i - 1])) &&
                (i + len == f->len || !pp_wordch(f->text[i + len])))
                return 1;
        }
    }
    return 0;
}

/* ===================================================================
 * The pass
 * =================================================================== */

/* The text of f with region k's body replaced by its expansion where
 * use[k]. */
static void pp_substitute(pp_buf *out, const pp_file *f, const pp_regions *rs, const int *use)
{
    unsigned cur = 0;
    for (unsigned k = 0; k < rs->n; k++) {
        if (!use[k])
            continue;
        const pp_region *r = &rs->v[k];
        pp_putn(out, f->text + cur, r->b - cur);
        pp_putn(out, r->exp, r->nexp);
        cur = r->e;
    }
    pp_putn(out, f->text + cur, f->len - cur);
}

int pp_expand_bodies(pp_file *f, const char **args, unsigned nargs, char **text, unsigned *len)
{
    pp_regions rs = {.magic = PP_MAGIC_REGIONS, .f = f};
    clang_visitChildren(clang_getTranslationUnitCursor(f->tu), pp_region_cb, &rs);
    if (!rs.n)
        return 0;
    /* the regions come in the order of the text: one pass counts lines */
    unsigned line = 1, at = 0;
    for (unsigned k = 0; k < rs.n; k++) {
        pp_region *r = &rs.v[k];
        assert(r->b >= at);
        for (; at < r->b; at++)
            line += f->text[at] == '\n';
        r->line_b = line;
        for (; at < r->e; at++)
            line += f->text[at] == '\n';
        r->line_e = line;
    }
    int *on = pp_xrealloc(NULL, sizeof *on * rs.n), *use = pp_xrealloc(NULL, sizeof *use * rs.n);
    for (unsigned k = 0; k < rs.n; k++)
        on[k] = 1;
    pp_buf marked = {0}, cpp = {0};
    char *why = NULL;
    int changed = 0;
    pp_marked(&marked, f, f->text, f->len, &rs, on);
    if (pp_run_cpp(f, args, nargs, &marked, &cpp, &why)) {
        pp_error_noloc(f->path, "cannot expand the macros of its function bodies: %s", why);
        changed = -1;
        goto done;
    }
    pp_read_back(f, &rs, on, &cpp);
    unsigned nuse = 0;
    for (unsigned k = 0; k < rs.n; k++) {
        pp_region *r = &rs.v[k];
        if (r->exp) {
            pp_buf m = {0};
            pp_merge(&m, f->text + r->b, r->e - r->b, r->exp, r->nexp);
            free(r->exp);
            r->exp = m.p ? m.p : pp_strdup("");
            r->nexp = m.n;
        }
        use[k] = r->exp && !pp_same_tokens(r->exp, r->nexp, f->text + r->b, r->e - r->b);
    }
    for (unsigned k = rs.n; k-- > 0;) {
        if (use[k] && rs.v[k].dropped && pp_dropped_used(f, &rs, use, k))
            use[k] = 0;
        nuse += use[k];
    }
    if (!nuse)
        goto done;
    /* Again over the expanded text: a body whose expansion expands further
     * would be expanded twice by the compiler of the output. */
    pp_buf once = {0};
    pp_substitute(&once, f, &rs, use);
    pp_regions rs2 = rs;
    rs2.v = pp_xrealloc(NULL, sizeof *rs2.v * rs.n);
    unsigned shift = 0;
    for (unsigned k = 0; k < rs.n; k++) {
        rs2.v[k] = rs.v[k];
        rs2.v[k].b += shift;
        if (use[k])
            shift += (unsigned)rs.v[k].nexp - (rs.v[k].e - rs.v[k].b);
        rs2.v[k].e += shift;
        rs2.v[k].exp = NULL;
        rs2.v[k].dropped = NULL;
        on[k] = use[k];
    }
    marked.n = 0;
    cpp.n = 0;
    pp_marked(&marked, f, once.p, (unsigned)once.n, &rs2, on);
    if (pp_run_cpp(f, args, nargs, &marked, &cpp, &why) == 0) {
        pp_read_back(f, &rs2, on, &cpp);
        for (unsigned k = 0; k < rs.n; k++) {
            if (!use[k])
                continue;
            const pp_region *r = &rs.v[k], *r2 = &rs2.v[k];
            use[k] = r2->exp && pp_same_tokens(r->exp, r->nexp, r2->exp, r2->nexp);
            free(r2->exp);
            free(r2->dropped);
        }
        for (unsigned k = rs.n; k-- > 0;) {
            if (use[k] && rs.v[k].dropped && pp_dropped_used(f, &rs, use, k))
                use[k] = 0;
            changed |= use[k];
        }
        if (changed) {
            pp_buf res = {0};
            pp_substitute(&res, f, &rs, use);
            *text = res.p;
            *len = (unsigned)res.n;
        }
    }
    free(rs2.v);
    free(once.p);
done:
    for (unsigned k = 0; k < rs.n; k++) {
        free(rs.v[k].exp);
        free(rs.v[k].dropped);
    }
    free(rs.v);
    free(on);
    free(use);
    free(marked.p);
    free(cpp.p);
    free(why);
    return changed;
}
