/* pp_libc.c - the common pass over every input: heap calls onto the VT
 * heap, hoisted string literals, statics (moved static locals, a header's
 * variables), label tables, the standard streams; the renamed C library
 * calls are pp_libcstate.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * The common pass: heap calls, string literals, statics
 * =================================================================== */

const char *const pp_std_names[3] = {"stdin", "stdout", "stderr"};

static int pp_defined_here(CXCursor fndecl)
{
    char *usr = pp_fn_usr(fndecl);
    int i = pp_fn_find(usr);
    free(usr);
    return i >= 0 && ctx.fns[i].file >= 0;
}

/* The type operand or expression type of a sizeof; 0: found. */
int pp_sizeof_type(pp_file *f, CXCursor c, CXType *t, const char **special)
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

typedef struct pp_heap_info {
    const char *id;
    char *size;   /* element size text */
    CXCursor fac; /* n of n * sizeof(T), or null */
    int sizeof_only, by_dest;
} pp_heap_info;

static enum CXVisitorResult pp_last_field_cb(CXCursor c, CXClientData d)
{
    *(CXCursor *)d = c;
    return CXVisit_Continue;
}

/* Whether t is a struct whose last member is an array of 0 or 1 element
 * (the idioms of flexible array members before C99). */
static int pp_is_old_flex(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record || pp_kind(clang_getTypeDeclaration(c)) != CXCursor_StructDecl)
        return 0;
    CXCursor last = clang_getNullCursor();
    clang_Type_visitFields(c, pp_last_field_cb, &last);
    CXType lt = clang_getCanonicalType(clang_getCursorType(last));
    return !clang_Cursor_isNull(last) && lt.kind == CXType_ConstantArray &&
           clang_getArraySize(lt) <= 1;
}

/* An allocation of a struct with a flexible array member counts its
 * bytes: the whole size written (`sizeof(T) + n * sizeof(E)`). So does
 * one of a struct ending in `T m[0]` or `T m[1]` whose size is neither
 * sizeof(T) nor n * sizeof(T): its type is then the struct with that
 * member as a trailing array (pp_trailing_id), as its elements follow
 * and no structs do. */
static void pp_heap_flex(pp_heap_info *hi, CXType t, CXCursor call)
{
    if (!hi->sizeof_only && clang_Cursor_isNull(hi->fac) && pp_is_old_flex(t)) {
        hi->id = pp_trailing_id(t, call);
        free(hi->size);
        hi->size = pp_strdup("1");
        return;
    }
    if (!pp_is_flex(t))
        return;
    hi->sizeof_only = 0;
    hi->fac = clang_getNullCursor();
}

/* Infers the element type of an allocation of E bytes. */
static int pp_heap_infer(pp_file *f, CXCursor call, CXCursor E, CXCursor *parents, int np,
                         pp_heap_info *hi)
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
        if (pp_elem(t, call, &hi->id, &hi->size, &mult) || mult != 1)
            return -1;
        pp_heap_flex(hi, t, call);
        return 0;
    }
    hi->sizeof_only = 0;
    hi->fac = clang_getNullCursor();
    CXType dest;
    if (pp_alloc_dest(call, parents, np, &dest) &&
        clang_getCanonicalType(dest).kind == CXType_Pointer) {
        CXType pt = clang_getPointeeType(clang_getCanonicalType(dest));
        if (pt.kind != CXType_Void) {
            long long mult;
            hi->by_dest = 1;
            /* the sugared pointee keeps typedef names */
            CXType sp = clang_getPointeeType(pp_desugar(dest));
            if (sp.kind == CXType_Invalid)
                sp = pt;
            if (pp_elem(sp, call, &hi->id, &hi->size, &mult) || mult != 1)
                return -1;
            pp_heap_flex(hi, sp, call);
            return 0;
        }
    }
    return -1;
}

/* Count edits for an allocation whose byte-size argument is written at
 * [eb, ee), with the text before it (from hb) replaced by prefix. */
static void pp_heap_count(pp_file *f, pp_heap_info *hi, const char *prefix, unsigned hb,
                          unsigned eb, unsigned ee, unsigned ce)
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

static const char *const pp_heap_names[] = {"malloc", "calloc", "realloc", "strdup", NULL};

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
    pp_heap_info hi = {0};
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
        if (!is_alloca && (!strcmp(name, "malloc") ? n == 1 : n == 2) &&
            pp_alloc_tail(c, parents, np)) {
            /* what the wrapper returns: typed by its caller's hint */
            pp_edit_add(f, cb, pp_begin(a0), E_REPL, 0, 0,
                        pp_fmt("%s(", pp_alloc_hinted_name(name)));
            return;
        }
        if (!strcmp(name, "malloc") ? n == 1 : n == 2) {
            /* no type at hand: an untyped object, carried as bytes by an
             * image that finds no pointer in it (runtime/image_capture.c) */
            pp_edit_add(f, cb, pp_begin(a0), E_REPL, 0, 0, pp_fmt("lev_%s_untyped(", name));
            return;
        }
        pp_error(PP_LOC(c), "%s with %d arguments", is_alloca ? "alloca" : name, n);
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

/* Whether a literal passed to external function `name` may be kept: not
 * for a function that returns a pointer into it, nor for a blocking
 * Leverage call, whose arguments its frame keeps across its safe point. */
static int pp_lit_keep_for(const char *name)
{
    if (pp_safepoint_kind(name))
        return 0;
    static const char *const keep[] = {"strchr", "strrchr", "strstr",    "strpbrk",   "memchr",
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
            char *name = pp_cxstring(clang_getCursorSpelling(ref));
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
static void pp_included_decl(CXCursor c);
static void pp_common(pp_file *f, CXCursor c, CXCursor *parents, int np);

/* Looking for another definition of a tag: the tag's cursor, then the
 * clash found. */
typedef struct pp_tag_scan {
    unsigned magic;
    CXCursor tag, clash;
    char *name;
} pp_tag_scan;

static int pp_is_tag_kind(enum CXCursorKind k)
{
    return k == CXCursor_StructDecl || k == CXCursor_UnionDecl || k == CXCursor_EnumDecl;
}

static enum CXChildVisitResult pp_tag_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_tag_scan *ts = pp_visit_state(d, PP_MAGIC_TAGS);
    if (pp_is_tag_kind(pp_kind(c)) && clang_isCursorDefinition(c) &&
        !clang_equalCursors(c, ts->tag)) {
        char *n = pp_cxstring(clang_getCursorSpelling(c));
        int same = !strcmp(n, ts->name);
        free(n);
        if (same) {
            ts->clash = c;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

/* Another definition in tu of the tag that `tag` (a struct, union or enum
 * definition) defines: any kind, since the three share one name space
 * (a null cursor if none, or if the tag has no name). */
CXCursor pp_tag_namesake(CXTranslationUnit tu, CXCursor tag)
{
    pp_tag_scan ts = {PP_MAGIC_TAGS, tag, clang_getNullCursor(),
                      pp_cxstring(clang_getCursorSpelling(tag))};
    if (*ts.name && !clang_Cursor_isAnonymous(tag))
        clang_visitChildren(clang_getTranslationUnitCursor(tu), pp_tag_cb, &ts);
    free(ts.name);
    return ts.clash;
}

/* Whether the tagged type that c defines (a local struct, union or enum
 * that moves to file scope) has a namesake defined elsewhere in the
 * input (at file scope, in an outer block, in another function): moved,
 * the two would collide. Says so. */
static int pp_tag_clashes(pp_file *f, CXCursor c)
{
    CXCursor clash = pp_tag_namesake(f->tu, c);
    if (clang_Cursor_isNull(clash))
        return 0;
    CXFile cf;
    unsigned line;
    clang_getExpansionLocation(PP_LOC(clash), &cf, &line, NULL, NULL);
    char *where = pp_cxstring(clang_getFileName(cf));
    char *name = pp_cxstring(clang_getCursorSpelling(c));
    const char *kw = pp_kind(c) == CXCursor_StructDecl  ? "struct"
                     : pp_kind(c) == CXCursor_UnionDecl ? "union"
                                                        : "enum";
    const char *kw2 = pp_kind(clash) == CXCursor_StructDecl  ? "struct"
                      : pp_kind(clash) == CXCursor_UnionDecl ? "union"
                                                             : "enum";
    pp_error(PP_LOC(c),
             "local %s %s moves to file scope, where it would collide with the %s %s "
             "defined at %s:%u; give one of them another tag",
             kw, name, kw2, name, where, line);
    free(where);
    free(name);
    return 1;
}

/* Whether k (the children of DeclStmt c) are tag definitions followed by
 * the variables they declare (`struct S { int x; } s, *p;`), each tag
 * named. */
int pp_tags_with_vars(CXCursor c)
{
    pp_kids k = pp_children(c);
    int tags = 0, vars = 0, ok = !pp_in_macro(c);
    for (unsigned i = 0; i < k.n && ok; i++) {
        enum CXCursorKind kk = pp_kind(k.v[i]);
        if (kk == CXCursor_StructDecl || kk == CXCursor_UnionDecl || kk == CXCursor_EnumDecl) {
            ok = !vars && !clang_Cursor_isAnonymous(k.v[i]) && clang_isCursorDefinition(k.v[i]);
            tags++;
        } else if (kk == CXCursor_VarDecl && clang_Cursor_getStorageClass(k.v[i]) != CX_SC_Static)
            vars++;
        else
            ok = 0;
    }
    free(k.v);
    return ok && tags && vars;
}

/* `struct S { ... } s;` in a function: the definition moves before the
 * function like a local type of its own, and `struct S s;` stays. 1: done. */
static int pp_split_tags(pp_file *f, CXCursor c, const pp_kids *k, CXCursor fn)
{
    if (!pp_tags_with_vars(c))
        return 0;
    pp_buf b = {0};
    for (unsigned i = 0; i < k->n; i++) {
        CXCursor t = k->v[i];
        enum CXCursorKind kk = pp_kind(t);
        if (kk != CXCursor_StructDecl && kk != CXCursor_UnionDecl && kk != CXCursor_EnumDecl)
            continue;
        pp_tag_clashes(f, t);
        pp_putn(&b, f->text + pp_begin(t), pp_end(t) - pp_begin(t));
        pp_puts(&b, ";\n");
        char *name = pp_cxstring(clang_getCursorSpelling(t));
        const char *kw = kk == CXCursor_StructDecl  ? "struct"
                         : kk == CXCursor_UnionDecl ? "union"
                                                    : "enum";
        /* a space after: the declarator may follow the `}` with none
         * (`struct { int a; }s[4];`) */
        pp_edit_add(f, pp_begin(t), pp_end(t), E_REPL, 0, 0, pp_fmt("%s %s ", kw, name));
        free(name);
    }
    pp_puts(&b, "\n");
    pp_edit_add(f, pp_begin(fn), pp_begin(fn), E_PRE, 0, 0, b.p);
    return 1;
}

/* A DeclStmt of a function: local types and static locals move before
 * the function, so that both copies of its body share them. 1: done. */
static int pp_move_decl(pp_file *f, CXCursor c, CXCursor fn)
{
    pp_kids k = pp_children(c);
    int types = 0, statics = 0, others = 0, anon = 0;
    for (unsigned i = 0; i < k.n; i++) {
        enum CXCursorKind kk = pp_kind(k.v[i]);
        /* An enum without a tag declares only constants, which nothing at
         * file scope needs: it stays, and each copy of the body declares
         * them. Moved, two functions' `enum { K = 3 };` would collide.
         * With static variables of its type, they move (of the enum's
         * integer type) and it stays. */
        if (kk == CXCursor_EnumDecl && clang_Cursor_isAnonymous(k.v[i]))
            anon++;
        else if (kk == CXCursor_StructDecl || kk == CXCursor_UnionDecl || kk == CXCursor_EnumDecl ||
                 (kk == CXCursor_TypedefDecl && !pp_vm_typedef(k.v[i])))
            types++;
        else if (kk == CXCursor_VarDecl && clang_Cursor_getStorageClass(k.v[i]) == CX_SC_Static)
            statics++;
        else
            others++;
    }
    if (anon && !statics)
        others += anon;
    int done = 0;
    if ((types || statics) && !others && !clang_Location_isFromMainFile(PP_LOC(c))) {
        /* written in a header included in the body, which stayed as
         * written (pp_expand.c): its text is not the input's to move */
        pp_error(PP_LOC(c),
                 "a static local or type declared in a header included inside a function body "
                 "cannot be moved out of the function: the #include could not be expanded in "
                 "place (its #define and #undef lines need free lines of the body, or nothing "
                 "after the body may name their macros)");
        free(k.v);
        return 1;
    }
    if (types && !statics && pp_split_tags(f, c, &k, fn)) {
        free(k.v);
        return 0;
    }
    if ((types || statics) && !others && !pp_in_macro(c)) {
        unsigned at = pp_begin(fn);
        pp_buf b = {0}, keep = {0}; /* keep: what stays in the function */
        if (types && !statics) {
            for (unsigned i = 0; i < k.n; i++) {
                enum CXCursorKind kk = pp_kind(k.v[i]);
                if (kk == CXCursor_StructDecl || kk == CXCursor_UnionDecl ||
                    kk == CXCursor_EnumDecl)
                    pp_tag_clashes(f, k.v[i]);
            }
            pp_putn(&b, f->text + pp_begin(c), pp_stmt_end(f, c) - pp_begin(c));
        } else {
            /* static locals, and the types their declaration defines
             * (`static struct { int n; } seen;`, its tag given by
             * pp_local_tags): the types move as written, each static is
             * renamed and registered */
            char *fname = pp_cxstring(clang_getCursorSpelling(fn));
            for (unsigned i = 0; i < k.n; i++) {
                CXCursor v = k.v[i];
                if (pp_kind(v) == CXCursor_EnumDecl && clang_Cursor_isAnonymous(v)) {
                    pp_putn(&keep, f->text + pp_begin(v), pp_end(v) - pp_begin(v));
                    pp_puts(&keep, ";");
                    continue;
                }
                if (pp_kind(v) != CXCursor_VarDecl) {
                    pp_tag_clashes(f, v);
                    pp_putn(&b, f->text + pp_begin(v), pp_end(v) - pp_begin(v));
                    pp_puts(&b, ";\n");
                    continue;
                }
                char *vn = pp_cxstring(clang_getCursorSpelling(v));
                char *nn = pp_fmt("%s__%s", fname, vn);
                PP_PUSH(ctx.moved, ctx.nmoved, ctx.capmoved);
                ctx.moved[ctx.nmoved++] = (pp_moved){v, nn};
                CXType vt = clang_getCursorType(v), ct = clang_getCanonicalType(vt);
                char *sp = pp_cxstring(clang_getTypeSpelling(vt));
                int anon_enum = ct.kind == CXType_Enum && pp_bad_spelling(sp);
                if (anon_enum)
                    vt = clang_getEnumDeclIntegerType(clang_getTypeDeclaration(ct));
                free(sp);
                char *d = pp_decl(vt, nn);
                pp_printf(&b, "static %s", d);
                free(d);
                CXCursor init = clang_Cursor_getVarDeclInitializer(v);
                CXEvalResult ev =
                    anon_enum && !clang_Cursor_isNull(init) ? clang_Cursor_Evaluate(init) : NULL;
                if (ev && clang_EvalResult_getKind(ev) == CXEval_Int) {
                    /* its constants stay in the function: their value */
                    pp_printf(&b, " = %lld", clang_EvalResult_getAsLongLong(ev));
                } else if (!clang_Cursor_isNull(init)) {
                    /* its string literals, as a file-scope variable's */
                    pp_common(f, init, &v, 1);
                    char *it = pp_render_str(f, init, 0);
                    pp_printf(&b, " = %s", it);
                    free(it);
                }
                if (ev)
                    clang_EvalResult_dispose(ev);
                pp_puts(&b, ";\n");
                pp_static_var(v);
                free(vn);
            }
            free(fname);
        }
        pp_puts(&b, "\n");
        pp_edit_add(f, at, at, E_PRE, 0, 0, b.p);
        pp_puts(&keep, ";");
        pp_edit_add(f, pp_begin(c), pp_stmt_end(f, c), E_REPL, 0, 0, keep.p);
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
            char *name = pp_cxstring(clang_getCursorSpelling(ref));
            for (int i = 0; pp_heap_names[i]; i++)
                if (!strcmp(name, pp_heap_names[i])) {
                    pp_heap(f, c, name, parents, np);
                    skip_callee = 1;
                }
            if ((!strcmp(name, "alloca") || !strcmp(name, "__builtin_alloca")) && np >= 1 &&
                pp_kind(parents[0]) == CXCursor_FunctionDecl) {
                /* a checkpointable function's stack is its frame: the
                 * buffer moves to the VT heap like malloc's */
                char *usr = pp_fn_usr(parents[0]);
                int g = pp_fn_find(usr);
                free(usr);
                if (g >= 0 && ctx.fns[g].cp) {
                    pp_heap(f, c, "alloca", parents, np);
                    skip_callee = 1;
                }
            }
            free(name);
        } else {
            pp_alloc_call(f, c, parents, np);
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
        char *name = pp_cxstring(clang_getCursorSpelling(ref));
        if (pp_kind(ref) == CXCursor_FunctionDecl && !pp_defined_here(ref)) {
            /* the callee of a call, or a value (an allocator hook) */
            int up = np - 1;
            while (up > 0 && pp_kind(parents[up]) == CXCursor_UnexposedExpr)
                up--;
            int callee = np > 0 && pp_kind(parents[up]) == CXCursor_CallExpr &&
                         pp_begin(parents[up]) == pp_begin(c);
            int in_macro = pp_in_macro(c);
            /* a hook named in the body of a macro of this input: renamed there */
            int renamed = in_macro && !callee &&
                          (pp_alloc_hinted_name(name) || !strcmp(name, "free")) &&
                          !pp_alloc_value_in_macro(f, c, name);
            if (renamed) {
                /* done */
            } else if (!strcmp(name, "free")) {
                if (in_macro)
                    pp_error(PP_LOC(c), "free inside a macro expansion cannot be rewritten; "
                                        "call it outside the macro");
                else
                    pp_edit_add(f, pp_begin(c), pp_end(c), E_REPL, 0, 0,
                                pp_strdup(callee ? "lev_free" : pp_alloc_value(name)));
            }
            const char *hinted = strcmp(name, "free") ? pp_alloc_hinted_name(name) : NULL;
            if (renamed)
                ; /* done */
            else if (hinted && !in_macro)
                pp_edit_add(f, pp_begin(c), pp_end(c), E_REPL, 0, 0,
                            pp_strdup(pp_alloc_value(name)));
            else
                for (int i = 0; pp_heap_names[i]; i++)
                    if (!strcmp(name, pp_heap_names[i]))
                        pp_error(PP_LOC(c),
                                 "%s used as a value %scannot be rewritten to the VT heap", name,
                                 hinted ? "inside a macro expansion " : "");
            pp_libc_call(f, c, name);
            pp_setjmp_ref(f, c, name);
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

/* The size in bytes of static `name` (v) of a struct type with a flexible
 * array member, as C text: GNU C lets its initializer give the array N
 * elements, which sizeof does not count (the symbol holds them). */
static char *pp_flex_static_bytes(CXCursor v, const char *name)
{
    CXCursor last = clang_getNullCursor(), init = clang_Cursor_getVarDeclInitializer(v);
    clang_Type_visitFields(clang_getCanonicalType(clang_getCursorType(v)), pp_last_field_cb, &last);
    long long n = 0;
    if (!clang_Cursor_isNull(init) && pp_kind(init) == CXCursor_InitListExpr) {
        pp_kids k = pp_children(init);
        CXType lt = k.n ? clang_getCanonicalType(clang_getCursorType(k.v[k.n - 1])) : (CXType){0};
        if (k.n && lt.kind == CXType_ConstantArray)
            n = clang_getArraySize(lt);
        free(k.v);
    }
    char *m = pp_cxstring(clang_getCursorSpelling(last));
    char *end =
        pp_fmt("offsetof(__typeof__(%s), %s) + %lld * sizeof(%s.%s[0])", name, m, n, name, m);
    char *r = pp_fmt("(%s > sizeof(%s) ? %s : sizeof(%s))", end, name, end, name);
    free(m);
    free(end);
    return r;
}

/* Whether an object of type t never changes: t, or the element type of
 * an array t, at any depth, is const. */
static int pp_const_object(CXType t)
{
    for (CXType c = t;; c = clang_getArrayElementType(c)) {
        if (clang_isConstQualifiedType(c) || clang_isConstQualifiedType(clang_getCanonicalType(c)))
            return 1;
        c = clang_getCanonicalType(c);
        if (c.kind != CXType_ConstantArray && c.kind != CXType_IncompleteArray)
            return 0;
    }
}

/* Registers file-scope variable v as a static. */
static void pp_static_var(CXCursor v)
{
    if (clang_getCursorTLSKind(v) != CXTLS_None) {
        /* A thread-local has no address fixed at load time. In a task
         * module it is the worker thread's, shared by the VTs that thread
         * runs, and not registered: it does not travel, and a pointer to
         * it kept across a safe point fails the capture. With
         * --main-task the output makes it the program's own (pp_tls_*):
         * a plain static from here on. */
        if (!ctx.main_task)
            return;
        if (!ctx.tls_seen++)
            ctx.tls_first = v;
    }
    CXType t = clang_getCursorType(v);
    const char *moved = pp_moved_name(v);
    if (clang_getCanonicalType(t).kind == CXType_IncompleteArray)
        return;
    const char *id;
    char *size;
    long long mult;
    char *name = moved ? pp_strdup(moved) : pp_cxstring(clang_getCursorSpelling(v));
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
    /* A tentative definition seen again, or a variable with external
     * linkage that another input defines too: one object. A static of
     * another input with the same name is another object. */
    int external = clang_getCursorLinkage(v) == CXLinkage_External;
    for (unsigned i = 0; i < ctx.nstatics; i++)
        if (!strcmp(ctx.statics[i].name, name) &&
            (external || ctx.statics[i].owner == ctx.cur_file)) {
            free(name);
            return;
        }
    int is_const = pp_const_object(t);
    PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
    ctx.statics[ctx.nstatics++] =
        (pp_static){name,
                    pp_fmt("(void *)&%s", name),
                    pp_strdup(id),
                    pp_is_flex(t) ? pp_flex_static_bytes(v, name) : pp_fmt("%lld", mult),
                    ctx.main_task && !is_const ? "LEV_S_TRAVELS" : "0",
                    0,
                    ctx.cur_file};
}

/* ===================================================================
 * Label addresses (GNU `&&L` and `goto *p`) in checkpointable functions:
 * a label's address is code, which no image can carry. Each `&&L` becomes
 * the address of byte K of a static of the function's own (lev__lbl_F,
 * registered, so pointers to it travel), and each `goto *E` a switch on
 * E's offset in it, in both copies of the body (a table of label
 * addresses in a static local is shared by them).
 * =================================================================== */

typedef struct pp_lbl_scan {
    unsigned magic; /* PP_MAGIC_LABELS */
    pp_file *f;
    const char *cname;
    CXCursor *labels, *gotos;
    unsigned nlabels, caplabels, ngotos, capgotos;
    int bad;
} pp_lbl_scan;

static enum CXChildVisitResult pp_lbl_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_lbl_scan *ls = pp_visit_state(d, PP_MAGIC_LABELS);
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_AddrLabelExpr) {
        CXCursor label = clang_getCursorReferenced(c);
        if (pp_kind(label) != CXCursor_LabelStmt) { /* through its LabelRef */
            pp_kids lk = pp_children(c);
            label = lk.n ? clang_getCursorReferenced(lk.v[0]) : clang_getNullCursor();
            free(lk.v);
        }
        if (pp_in_macro(c) || pp_kind(label) != CXCursor_LabelStmt) {
            ls->bad = 1;
            return CXChildVisit_Continue;
        }
        unsigned i = 0;
        while (i < ls->nlabels && !clang_equalCursors(ls->labels[i], label))
            i++;
        if (i == ls->nlabels) {
            PP_PUSH(ls->labels, ls->nlabels, ls->caplabels);
            ls->labels[ls->nlabels++] = label;
        }
        pp_edit_add(ls->f, pp_begin(c), pp_end(c), E_REPL, 0, 0,
                    pp_fmt("((void *)&lev__lbl_%s[%u])", ls->cname, i + 1));
        return CXChildVisit_Continue;
    }
    if (k == CXCursor_IndirectGotoStmt) {
        if (pp_in_macro(c))
            ls->bad = 1;
        PP_PUSH(ls->gotos, ls->ngotos, ls->capgotos);
        ls->gotos[ls->ngotos++] = c;
    }
    return CXChildVisit_Recurse;
}

/* Rewrites the label addresses of checkpointable function c (pp_lbl_cb);
 * fn->label_table is set when it has any and all could be rewritten. */
static void pp_label_table(pp_file *f, CXCursor c)
{
    char *usr = pp_fn_usr(c);
    int g = pp_fn_find(usr);
    free(usr);
    if (g < 0 || !ctx.fns[g].cp)
        return;
    pp_fn *fn = &ctx.fns[g];
    pp_lbl_scan ls = {.magic = PP_MAGIC_LABELS, .f = f, .cname = fn->cname};
    /* the edits go in only when nothing is refused: scan first */
    unsigned first = f->nedits;
    clang_visitChildren(c, pp_lbl_cb, &ls);
    if (!ls.nlabels || ls.bad) {
        for (unsigned i = first; i < f->nedits; i++)
            free(f->edits[i].text);
        f->nedits = first; /* left to the walk, which refuses it by name */
    } else {
        for (unsigned i = 0; i < ls.ngotos; i++) {
            CXCursor gs = ls.gotos[i];
            pp_kids kk = pp_children(gs);
            if (kk.n == 1) {
                pp_buf sw = {0};
                pp_printf(&sw, ") - lev__lbl_%s) {", fn->cname);
                for (unsigned j = 0; j < ls.nlabels; j++) {
                    char *name = pp_cxstring(clang_getCursorSpelling(ls.labels[j]));
                    pp_printf(&sw, " case %u: goto %s;", j + 1, name);
                    free(name);
                }
                pp_puts(&sw, " default: __builtin_trap(); }");
                pp_edit_add(f, pp_begin(gs), pp_begin(kk.v[0]), E_REPL, 0, 0,
                            pp_strdup("switch ((char *)("));
                pp_edit_add(f, pp_end(kk.v[0]), pp_end(gs), E_REPL, 0, 0, sw.p);
            }
            free(kk.v);
        }
        fn->label_table = 1;
        pp_printf(&f->lits, "static char lev__lbl_%s[%u];\n", fn->cname, ls.nlabels + 1);
        PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
        ctx.statics[ctx.nstatics++] = (pp_static){pp_fmt("lev__lbl_%s", fn->cname),
                                                  pp_fmt("lev__lbl_%s", fn->cname),
                                                  pp_strdup("LEV_T_BYTES"),
                                                  pp_fmt("%u", ls.nlabels + 1),
                                                  "0",
                                                  0,
                                                  ctx.cur_file};
    }
    free(ls.labels);
    free(ls.gotos);
}

typedef struct pp_hdr_scan {
    unsigned magic; /* PP_MAGIC_HDR_STATICS */
    CXCursor fn;    /* a function that an included file defines */
} pp_hdr_scan;

/* Refuses a static local of hs->fn that can change. */
static enum CXChildVisitResult pp_header_static_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    CXCursor fn = ((pp_hdr_scan *)pp_visit_state(d, PP_MAGIC_HDR_STATICS))->fn;
    if (pp_kind(c) != CXCursor_VarDecl || clang_Cursor_getStorageClass(c) != CX_SC_Static)
        return CXChildVisit_Recurse;
    if (pp_const_object(clang_getCursorType(c)))
        return CXChildVisit_Continue; /* never changes: a new process has the same */
    CXFile file;
    clang_getExpansionLocation(PP_LOC(fn), &file, NULL, NULL, NULL);
    char *fname = pp_cxstring(clang_getCursorSpelling(fn)),
         *vname = pp_cxstring(clang_getCursorSpelling(c)),
         *where = pp_cxstring(clang_getFileName(file));
    pp_error(PP_LOC(c),
             "static local '%s' of function '%s', which header %s defines, would not travel "
             "with the program's state (levpp rewrites only its inputs' own text, and a "
             "resumed process would start it again): declare it at file scope in the header, "
             "where a static travels, or give the header's functions to levpp in an input",
             vname, fname, where);
    free(fname);
    free(vname);
    free(where);
    return CXChildVisit_Continue;
}

/* A declaration at file scope of an input's translation unit that a file
 * it includes wrote (not a system header): a variable it defines is
 * registered as the input's own (a static of a header is one object per
 * input that includes it), so that it travels; a function it defines
 * that is not an input's keeps any static local that can change where no
 * image reaches it, which is refused. */
static void pp_included_decl(CXCursor c)
{
    if (clang_Location_isInSystemHeader(PP_LOC(c)))
        return;
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_VarDecl && clang_Cursor_getStorageClass(c) != CX_SC_Extern) {
        pp_static_var(c); /* (a tentative definition is no definition to libclang) */
    } else if (k == CXCursor_FunctionDecl && clang_isCursorDefinition(c)) {
        char *usr = pp_fn_usr(c);
        int g = pp_fn_find(usr);
        free(usr);
        pp_hdr_scan hs = {PP_MAGIC_HDR_STATICS, c};
        if (g < 0 || ctx.fns[g].file < 0)
            clang_visitChildren(c, pp_header_static_cb, &hs);
    }
}

static void pp_common_file(unsigned fi)
{
    pp_file *f = &ctx.files[fi];
    ctx.cur_file = (int)fi;
    pp_include_edits(f);
    pp_kids k = pp_children(clang_getTranslationUnitCursor(f->tu));
    f->insert_at = f->len;
    int first = 1;
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor c = k.v[i];
        if (!pp_in_input(c)) {
            pp_included_decl(c);
            continue;
        }
        if (first || pp_begin(c) < f->insert_at) {
            /* a declaration may begin before the type it defines */
            f->insert_at = f->lines[pp_line_of(f, pp_begin(c)) - 1];
            first = 0;
        }
        if (pp_kind(c) == CXCursor_VarDecl && clang_Cursor_getStorageClass(c) != CX_SC_Extern)
            pp_static_var(c);
        if (pp_kind(c) == CXCursor_FunctionDecl && clang_isCursorDefinition(c))
            pp_label_table(f, c);
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
    pp_alloc_prepare();
    for (unsigned i = 0; i < ctx.nfiles; i++)
        pp_common_file(i);
    pp_libc_statics();
    pp_alloc_register();
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
