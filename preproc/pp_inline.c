/* pp_inline.c - attributes of a function's declarations, and `inline`
 * hints for small static helpers: levpp writes the body of a
 * checkpointable function more than once (the native entry, __run,
 * __resume), so a static function it calls has more call sites than
 * natively, and gcc -O1, which inlines a function not declared inline
 * mostly where that removes its out-of-line copy (called once) or does
 * not grow the code, then leaves small helpers out of line (lz4's
 * LZ4_read32, LZ4_isLittleEndian, which lz4hc.c gets by including lz4.c).
 * After an input's text, each small static helper whose calls levpp
 * multiplies is redeclared `static inline __typeof__(f) f;`: C allows
 * `inline` on any declaration of a function with internal linkage, the
 * definition is unchanged, and the compiler still weighs the hint.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* At most this many statements, expressions and declarations (the
 * parameters too): a helper of a few lines (a load, a store, a hash, a
 * test of the byte order and a load of each order: lz4's LZ4_readLE16 has
 * 39), which the C compiler would inline at each call at little cost. */
#define PP_INLINE_MAX_NODES 48

typedef struct pp_attr_scan {
    unsigned magic;           /* PP_MAGIC_ATTRS */
    const char *const *names; /* NULL-terminated */
    int found;
} pp_attr_scan;

static enum CXChildVisitResult pp_attr_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_attr_scan *a = pp_visit_state(d, PP_MAGIC_ATTRS);
    if (!clang_isAttribute(pp_kind(c)))
        return CXChildVisit_Continue;
    CXFile file;
    unsigned off;
    clang_getSpellingLocation(clang_getRangeStart(clang_getCursorExtent(c)), &file, NULL, NULL,
                              &off);
    size_t size = 0;
    const char *text =
        file ? clang_getFileContents(clang_Cursor_getTranslationUnit(c), file, &size) : NULL;
    for (int i = 0; text && a->names[i]; i++) {
        size_t n = strlen(a->names[i]);
        if (off + n <= size && !memcmp(text + off, a->names[i], n) &&
            (off + n == size || !(text[off + n] == '_' || (text[off + n] | 32) >= 'a')))
            a->found = 1;
    }
    return CXChildVisit_Continue;
}

/* Whether function `def` has one of the attributes `names` (as spelled,
 * also through a macro) on its definition or its first declaration. */
int pp_has_attr(CXCursor def, const char *const *names)
{
    pp_attr_scan a = {PP_MAGIC_ATTRS, names, 0};
    CXCursor decls[2] = {def, clang_getCanonicalCursor(def)};
    for (int i = 0; i < 2 && !a.found; i++)
        clang_visitChildren(decls[i], pp_attr_cb, &a);
    return a.found;
}

static enum CXChildVisitResult pp_count_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    int *n = pp_visit_flag(d);
    enum CXCursorKind k = pp_kind(c);
    if (clang_isStatement(k) || clang_isExpression(k) || clang_isDeclaration(k))
        ++*n;
    return *n > PP_INLINE_MAX_NODES ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* Whether the function defined at `def` is a small static helper that an
 * inline hint may be given: internal linkage, not declared inline,
 * noinline or the like, not variadic, not in a system header, and a body
 * of at most PP_INLINE_MAX_NODES cursors. */
static int pp_small_helper(CXCursor def)
{
    static const char *const attrs[] = {"noinline",      "__noinline__",      "noipa", "__noipa__",
                                        "always_inline", "__always_inline__", NULL};
    if (clang_Cursor_isNull(def) || clang_getCursorLinkage(def) != CXLinkage_Internal ||
        clang_Cursor_isFunctionInlined(def) ||
        clang_isFunctionTypeVariadic(clang_getCursorType(def)) == 1 ||
        clang_Location_isInSystemHeader(PP_LOC(def)) || pp_has_attr(def, attrs))
        return 0;
    int n = 0;
    clang_visitChildren(def, pp_count_cb, &n);
    return n <= PP_INLINE_MAX_NODES;
}

/* A set of functions by USR (few: a linear search). */
typedef struct pp_usrs {
    unsigned magic; /* PP_MAGIC_USRS */
    char **v;
    unsigned n, cap;
} pp_usrs;

static int pp_usrs_has(const pp_usrs *s, const char *usr)
{
    for (unsigned i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], usr))
            return 1;
    return 0;
}

static void pp_usrs_add(pp_usrs *s, const char *usr)
{
    if (pp_usrs_has(s, usr))
        return;
    PP_PUSH(s->v, s->n, s->cap);
    s->v[s->n++] = pp_strdup(usr);
}

/* Adds the functions called directly under a cursor to the set. */
static enum CXChildVisitResult pp_callees_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_usrs *s = pp_visit_state(d, PP_MAGIC_USRS);
    if (pp_kind(c) == CXCursor_CallExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        if (pp_kind(ref) == CXCursor_FunctionDecl) {
            char *usr = pp_fn_usr(ref);
            pp_usrs_add(s, usr);
            free(usr);
        }
    }
    return CXChildVisit_Recurse;
}

/* The inline hints of input fi: each small static helper that its
 * translation unit defines (in the input or in a file it includes) and
 * whose calls levpp's bodies multiply: one that a checkpointable function
 * calls, or that such a helper calls (closure within the unit). Written
 * after the input's text. */
void pp_emit_inline_hints(pp_buf *o, unsigned fi)
{
    pp_usrs called = {.magic = PP_MAGIC_USRS};
    for (unsigned i = 0; i < ctx.nfns; i++)
        for (unsigned c = 0; ctx.fns[i].cp && ctx.fns[i].file >= 0 && c < ctx.fns[i].ncallees; c++)
            pp_usrs_add(&called, ctx.fns[ctx.fns[i].callees[c]].usr);
    pp_kids k = pp_children(clang_getTranslationUnitCursor(ctx.files[fi].tu));
    /* [i]: 0 not (yet) a hinted helper, 1 one, 2 never one */
    unsigned char *st = pp_xrealloc(NULL, k.n + 1);
    memset(st, 0, k.n + 1);
    for (int changed = 1; changed;) {
        changed = 0;
        for (unsigned i = 0; i < k.n; i++) {
            CXCursor c = k.v[i];
            if (st[i] || pp_kind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c))
                continue;
            char *usr = pp_fn_usr(c);
            if (pp_usrs_has(&called, usr)) {
                int g = pp_fn_find(usr);
                st[i] = (g < 0 || !ctx.fns[g].cp) && pp_small_helper(c) ? 1 : 2;
                if (st[i] == 1) {
                    clang_visitChildren(c, pp_callees_cb, &called);
                    changed = 1;
                }
            }
            free(usr);
        }
    }
    int any = 0;
    for (unsigned i = 0; i < k.n; i++) {
        if (st[i] != 1)
            continue;
        if (!any++)
            pp_puts(o, "\n/* small static helpers whose calls levpp's bodies multiply */\n");
        char *name = pp_cxstring(clang_getCursorSpelling(k.v[i]));
        pp_printf(o, "static inline __typeof__(%s) %s;\n", name, name);
        free(name);
    }
    free(st);
    free(k.v);
    for (unsigned i = 0; i < called.n; i++)
        free(called.v[i]);
    free(called.v);
}
