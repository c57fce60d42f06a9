/* pp_source.c - the inputs as text: source locations and offsets, a
 * cursor's children, tokens, and the edits that rewrite an input, with
 * the renderer that applies them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "levpp.h"

unsigned pp_off(CXSourceLocation l)
{
    unsigned o;
    clang_getExpansionLocation(l, NULL, NULL, NULL, &o);
    return o;
}

unsigned pp_begin(CXCursor c) { return pp_off(clang_getRangeStart(clang_getCursorExtent(c))); }
unsigned pp_end(CXCursor c) { return pp_off(clang_getRangeEnd(clang_getCursorExtent(c))); }

/* Whether location l comes from a macro expansion (a macro's body, or
 * an argument of a macro). */
int pp_loc_in_macro(CXSourceLocation l)
{
    CXFile f1, f2;
    unsigned o1, o2;
    clang_getExpansionLocation(l, &f1, NULL, NULL, &o1);
    clang_getSpellingLocation(l, &f2, NULL, NULL, &o2);
    return o1 != o2 || !clang_File_isEqual(f1, f2);
}

/* Whether declaration c belongs to the input: written in its text, or
 * written by a macro that its text expands (`long API(f)(...)`), where
 * clang_Location_isFromMainFile sees only the former. */
int pp_in_input(CXCursor c)
{
    CXFile f;
    unsigned off;
    clang_getExpansionLocation(PP_LOC(c), &f, NULL, NULL, &off);
    return f && clang_Location_isFromMainFile(
                    clang_getLocationForOffset(clang_Cursor_getTranslationUnit(c), f, off));
}

/* Whether any end of c's extent comes from a macro expansion. */
int pp_in_macro(CXCursor c)
{
    CXSourceRange r = clang_getCursorExtent(c);
    return pp_loc_in_macro(clang_getRangeStart(r)) || pp_loc_in_macro(clang_getRangeEnd(r));
}

static enum CXChildVisitResult pp_kid_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_kids *k = pp_visit_state(d, PP_MAGIC_KIDS);
    PP_PUSH(k->v, k->n, k->cap);
    k->v[k->n++] = c;
    return CXChildVisit_Continue;
}

pp_kids pp_children(CXCursor c)
{
    pp_kids k = {.magic = PP_MAGIC_KIDS};
    clang_visitChildren(c, pp_kid_cb, &k);
    return k;
}

enum CXCursorKind pp_kind(CXCursor c) { return clang_getCursorKind(c); }

CXCursor pp_strip(CXCursor c)
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

unsigned pp_line_of(const pp_file *f, unsigned off)
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
unsigned pp_tok_from(const pp_file *f, unsigned off)
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

int pp_tok_is(const pp_file *f, unsigned i, const char *s)
{
    if (i >= f->ntoks)
        return 0;
    size_t n = strlen(s);
    return f->toks[i].e - f->toks[i].b == n && !memcmp(f->text + f->toks[i].b, s, n);
}

/* Whether statement c, whose last token is a `}`, ends with a block (or
 * another construct that takes no `;`, such as a nested function), not
 * with an expression whose compound literal or initializer list closes
 * there and whose `;` follows: an expression statement, a `return`, or
 * either as the last statement of an unbraced for, while, if, switch,
 * label or case (`for (...) if (x) a[i] = (T){...};`). */
static int s_ends_in_block(CXCursor c)
{
    for (int depth = 0; depth < 1024; depth++) {
        enum CXCursorKind k = pp_kind(c);
        if (clang_isExpression(k) || k == CXCursor_ReturnStmt)
            return 0;
        if (k != CXCursor_ForStmt && k != CXCursor_WhileStmt && k != CXCursor_IfStmt &&
            k != CXCursor_SwitchStmt && k != CXCursor_LabelStmt && k != CXCursor_CaseStmt &&
            k != CXCursor_DefaultStmt)
            return 1;
        pp_kids kids = pp_children(c);
        if (!kids.n) {
            free(kids.v);
            return 1;
        }
        c = kids.v[kids.n - 1]; /* the body, the else branch, the sub-statement */
        free(kids.v);
    }
    return 1;
}

/* End offset of a statement, including its ';'. */
unsigned pp_stmt_end(const pp_file *f, CXCursor c)
{
    unsigned e = pp_end(c);
    unsigned i = pp_tok_from(f, e);
    /* a block ends at its `}`; a statement ending in a compound literal's
     * `}` goes on to its `;` */
    if (i > 0 && f->toks[i - 1].e == e &&
        (pp_tok_is(f, i - 1, ";") || (pp_tok_is(f, i - 1, "}") && s_ends_in_block(c))))
        return e;
    if (pp_tok_is(f, i, ";"))
        return f->toks[i].e;
    return e;
}

/* Whether statement c begins with attributes (an attributed statement). */
int pp_attributed(const pp_file *f, CXCursor c)
{
    unsigned i = pp_tok_from(f, pp_begin(c));
    return pp_tok_is(f, i, "__attribute__") || pp_tok_is(f, i, "__attribute") ||
           (pp_tok_is(f, i, "[") && pp_tok_is(f, i + 1, "["));
}

void pp_edit_add(pp_file *f, unsigned b, unsigned e, int cls, int depth, int run, char *text)
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

/* Appends input range [b, e) with the edits inside it applied (run: also
 * those of resumable bodies), as `how` says (R_*). */
void pp_render(pp_buf *out, pp_file *f, unsigned b, unsigned e, int run, int how)
{
    pp_edit **v = NULL;
    unsigned n = 0, cap = 0;
    int sync = how & R_SYNC;
    for (unsigned i = 0; i < f->nedits; i++) {
        pp_edit *ed = &f->edits[i];
        if ((how & R_EXPR) && ed->b == ed->e && (ed->b == b || ed->b == e))
            continue;
        if ((how & R_HEAD) && ed->b == ed->e && ed->b == e)
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
int pp_span(const pp_file *f, CXCursor c, unsigned *b, unsigned *e)
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
void pp_written_at(const pp_file *f, CXCursor c, unsigned *b, unsigned *e)
{
    if (pp_span(f, c, b, e))
        return;
    CXSourceRange r = clang_getCursorExtent(c);
    clang_getExpansionLocation(clang_getRangeStart(r), NULL, NULL, NULL, b);
    clang_getExpansionLocation(clang_getRangeEnd(r), NULL, NULL, NULL, e);
}

/* The text of c with the edits inside it applied (run: also those of
 * resumable bodies); a macro argument's own text when c is one. */
char *pp_render_str(pp_file *f, CXCursor c, int run)
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

/* Renames `name`, referenced at c, to `to` where it is spelled, if that is
 * in f's own text (code, a macro's argument, or the body of a macro that f
 * defines), once however often a macro writes it. 0: done; -1: it is
 * spelled elsewhere (in a macro of another file). */
int pp_rename_spelled(pp_file *f, CXCursor c, const char *name, const char *to)
{
    CXFile sf;
    unsigned b;
    clang_getSpellingLocation(PP_LOC(c), &sf, NULL, NULL, &b);
    size_t n = strlen(name);
    if (!sf || !clang_File_isEqual(sf, f->cxf) || b + n > f->len || memcmp(f->text + b, name, n))
        return -1;
    unsigned e = b + (unsigned)n;
    for (unsigned k = 0; k < f->nedits; k++)
        if (f->edits[k].b == b && f->edits[k].e == e && f->edits[k].cls == E_REPL)
            return 0; /* a macro expanded again */
    pp_edit_add(f, b, e, E_REPL, 0, 0, pp_strdup(to));
    return 0;
}

/* ===================================================================
 * Quoted includes found beside the input
 * =================================================================== */

/* The input's `#include "NAME"` lines whose header is beside the input
 * (in its directory, which the compiler searches first) name it by its
 * full path in the output, which lives elsewhere: from there the compiler
 * would look for it beside the output, or find another header of that
 * name on the include path (brotli's dec/ and enc/ both have a
 * static_init.h). Headers that header includes are still found beside
 * it. */
void pp_include_edits(pp_file *f)
{
    const char *slash = strrchr(f->path, '/');
    int dirlen = slash ? (int)(slash - f->path) + 1 : 0;
    char *cwd = f->path[0] == '/' ? NULL : getcwd(NULL, 0);
    if (f->path[0] != '/' && !cwd)
        return;
    for (unsigned i = 0; i + 2 < f->ntoks; i++) {
        if (!pp_tok_is(f, i, "#") || !pp_tok_is(f, i + 1, "include") ||
            (i > 0 && pp_line_of(f, f->toks[i - 1].b) == pp_line_of(f, f->toks[i].b)))
            continue;
        unsigned b = f->toks[i + 2].b, e = f->toks[i + 2].e;
        if (e - b < 3 || f->text[b] != '"' || f->text[e - 1] != '"' || f->text[b + 1] == '/' ||
            memchr(f->text + b, '\\', e - b))
            continue;
        char *beside = pp_fmt("%.*s%.*s", dirlen, f->path, (int)(e - b - 2), f->text + b + 1);
        struct stat st;
        if (stat(beside, &st) == 0 && S_ISREG(st.st_mode))
            pp_edit_add(f, b, e, E_REPL, 0, 0,
                        pp_fmt("\"%s%s%s\"", cwd ? cwd : "", cwd ? "/" : "", beside));
        free(beside);
    }
    free(cwd);
}
