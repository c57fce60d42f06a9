/* pp_filelit.c - compound literals at file scope whose address a file-scope
 * initializer takes (`static Scope *scope = &(Scope){0};`, `int *p =
 * (int[]){1, 2};`) become named statics before the passes run, so that
 * they are registered and travel like any static; as unnamed objects, a
 * capture found a pointer to memory the runtime does not own.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

typedef struct pp_filelit {
    unsigned at;             /* where the declaration that holds it begins */
    unsigned b, e;           /* the literal */
    unsigned type_b, type_e; /* its type name, between the parentheses */
    unsigned init_b;         /* its braces */
} pp_filelit;

typedef struct pp_filelits {
    unsigned magic; /* PP_MAGIC_FILELITS */
    const pp_file *f;
    unsigned decl_at; /* the file-scope declaration being visited */
    pp_filelit *v;
    unsigned n, cap;
} pp_filelits;

/* Whether compound literal c (child of parent) is used as an address: its
 * address taken, or an array literal that decays to a pointer. */
static int pp_filelit_addressed(CXCursor c, CXCursor parent)
{
    enum CXCursorKind pk = pp_kind(parent);
    if (pk == CXCursor_UnaryOperator)
        return clang_getCursorUnaryOperatorKind(parent) == CXUnaryOperator_AddrOf;
    enum CXTypeKind t = clang_getCanonicalType(clang_getCursorType(c)).kind;
    return pk == CXCursor_UnexposedExpr &&
           (t == CXType_ConstantArray || t == CXType_IncompleteArray);
}

static enum CXChildVisitResult pp_filelit_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    pp_filelits *fl = pp_visit_state(d, PP_MAGIC_FILELITS);
    if (pp_kind(c) != CXCursor_CompoundLiteralExpr)
        return CXChildVisit_Recurse;
    if (pp_in_macro(c) || !pp_filelit_addressed(c, parent))
        return CXChildVisit_Continue;
    const char *t = fl->f->text;
    unsigned b = pp_begin(c), e = pp_end(c);
    if (e > fl->f->len || b >= e || t[b] != '(' || t[e - 1] != '}')
        return CXChildVisit_Continue;
    /* the type name: up to the parenthesis that closes the first */
    unsigned depth = 0, i = b;
    for (; i < e; i++) {
        depth += t[i] == '(';
        depth -= t[i] == ')';
        if (!depth)
            break;
    }
    unsigned brace = i + 1;
    while (brace < e && strchr(" \t\r\n", t[brace]))
        brace++;
    if (i >= e || brace >= e || t[brace] != '{')
        return CXChildVisit_Continue;
    PP_PUSH(fl->v, fl->n, fl->cap);
    fl->v[fl->n++] = (pp_filelit){fl->decl_at, b, e, b + 1, i, brace};
    return CXChildVisit_Continue; /* one inside another stays in its text */
}

/* Appends text[b, e) with its line breaks as spaces. */
static void pp_filelit_flat(pp_buf *o, const char *text, unsigned b, unsigned e)
{
    for (unsigned i = b; i < e; i++)
        pp_putn(o, text[i] == '\n' ? " " : text + i, 1);
}

/* f's text with every compound literal that a file-scope initializer uses
 * as an address replaced by a static of its own, `lev__litF_N` (F: the
 * input's index), declared just before that declaration on the same line
 * (`static __typeof__(T) lev__litF_N = {...}; `), in *text (malloc'd; 1),
 * or 0 when there is none.
 * Both have static storage and the same type and value, so nothing else
 * changes; lines stay where they were. */
int pp_hoist_file_literals(const pp_file *f, char **text, unsigned *len)
{
    pp_filelits fl = {.magic = PP_MAGIC_FILELITS, .f = f};
    unsigned fi = (unsigned)(f - ctx.files); /* names unique across inputs */
    pp_kids k = pp_children(clang_getTranslationUnitCursor(f->tu));
    for (unsigned i = 0; i < k.n; i++) {
        CXFile file;
        clang_getExpansionLocation(PP_LOC(k.v[i]), &file, NULL, NULL, NULL);
        if (pp_kind(k.v[i]) != CXCursor_VarDecl || !file || !clang_File_isEqual(file, f->cxf) ||
            pp_in_macro(k.v[i]))
            continue;
        fl.decl_at = pp_begin(k.v[i]);
        clang_visitChildren(k.v[i], pp_filelit_cb, &fl);
    }
    free(k.v);
    if (!fl.n)
        return 0;
    pp_buf o = {0};
    unsigned cur = 0;
    for (unsigned i = 0; i < fl.n;) {
        /* the declarations of every literal of one declaration, before it */
        unsigned at = fl.v[i].at, j = i;
        pp_putn(&o, f->text + cur, at - cur);
        for (; j < fl.n && fl.v[j].at == at; j++) {
            const pp_filelit *l = &fl.v[j];
            pp_puts(&o, "static __typeof__(");
            pp_filelit_flat(&o, f->text, l->type_b, l->type_e);
            char *name = pp_fmt(") lev__lit%u_%u = ", fi, j);
            pp_puts(&o, name);
            free(name);
            pp_filelit_flat(&o, f->text, l->init_b, l->e);
            pp_puts(&o, "; ");
        }
        cur = at;
        for (; i < j; i++) {
            const pp_filelit *l = &fl.v[i];
            pp_putn(&o, f->text + cur, l->b - cur);
            char *name = pp_fmt("lev__lit%u_%u", fi, i);
            pp_puts(&o, name);
            free(name);
            for (unsigned c = l->b; c < l->e; c++)
                if (f->text[c] == '\n')
                    pp_puts(&o, "\n");
            cur = l->e;
        }
    }
    pp_putn(&o, f->text + cur, f->len - cur);
    free(fl.v);
    *text = o.p;
    *len = (unsigned)o.n;
    return 1;
}
