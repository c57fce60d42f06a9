/* pp_union.c - tagged unions: a union member of a struct that may hold a
 * pointer, whose live member a sibling integer field (the tag) selects.
 * Its tag table (LEV_K_TAGGED in lev_abi.h) comes from the user's
 * annotation (a comment or pragma `leverage tagged_union(S, u, tag: V =
 * member, ...)`) or is inferred from the inputs' assignments: a write of
 * a member `X.u.m = ...` pairs with the constants last assigned to `X.tag`
 * before it in straight-line code. Anything else is refused by name.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Annotations: `leverage tagged_union(S, u, tag: V = member, ...)` in a
 * comment or after #pragma, at file scope
 * =================================================================== */

typedef struct pp_tu_note {
    char *rec, *un, *tag; /* S (a tag or typedef name), u, the tag field */
    char **vals, **members;
    unsigned n;
    int file;
    unsigned off;
} pp_tu_note;

static struct {
    pp_tu_note *v;
    unsigned n, cap;
    int built;
} pp_notes;

static char *pp_trim(const char *b, const char *e)
{
    while (b < e && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    char *r = pp_xrealloc(NULL, (size_t)(e - b) + 1);
    memcpy(r, b, (size_t)(e - b));
    r[e - b] = 0;
    return r;
}

/* Parses the argument list at p (after the parenthesis) into note nt;
 * 0 if it is well formed. */
static int pp_note_parse(pp_tu_note *nt, const char *p, const char *end)
{
    const char *close = p;
    for (int depth = 0; close < end && (*close != ')' || depth); close++)
        depth += *close == '(' ? 1 : *close == ')' ? -1 : 0;
    if (close == end)
        return -1;
    unsigned field = 0;
    int ok = 1;
    for (const char *a = p; ok && a <= close;) {
        const char *c = a;
        for (int depth = 0; c < close && (*c != ',' || depth); c++)
            depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
        char *arg = pp_trim(a, c);
        if (field == 0)
            nt->rec = arg;
        else if (field == 1)
            nt->un = arg;
        else {
            char *eq = strrchr(arg, '='), *colon = field == 2 ? strchr(arg, ':') : NULL;
            if (field == 2 && colon) {
                nt->tag = pp_trim(arg, colon);
            } else if (field == 2) {
                ok = 0;
            }
            if (ok && eq) {
                const char *vb = colon ? colon + 1 : arg;
                nt->vals = pp_xrealloc(nt->vals, (size_t)(nt->n + 1) * sizeof(char *));
                nt->members = pp_xrealloc(nt->members, (size_t)(nt->n + 1) * sizeof(char *));
                nt->vals[nt->n] = pp_trim(vb, eq);
                nt->members[nt->n++] = pp_trim(eq + 1, arg + strlen(arg));
            } else {
                ok = 0;
            }
            free(arg);
        }
        field++;
        a = c + 1;
    }
    for (unsigned i = 0; i < nt->n; i++)
        ok = ok && *nt->vals[i] && *nt->members[i];
    return ok && nt->rec && *nt->rec && nt->un && *nt->un && nt->tag && *nt->tag && nt->n ? 0 : -1;
}

static void pp_notes_build(void)
{
    static const char key[] = "leverage tagged_union(";
    pp_notes.built = 1;
    for (unsigned fi = 0; fi < ctx.nfiles; fi++) {
        const pp_file *f = &ctx.files[fi];
        for (const char *p = f->text; p && (p = strstr(p, key)); p += sizeof key - 1) {
            const char *q = p;
            while (q > f->text && (q[-1] == ' ' || q[-1] == '\t'))
                q--;
            int lead = (q - f->text >= 2 && (!memcmp(q - 2, "/*", 2) || !memcmp(q - 2, "//", 2))) ||
                       (q - f->text >= 7 && !memcmp(q - 7, "#pragma", 7));
            if (!lead)
                continue;
            PP_PUSH(pp_notes.v, pp_notes.n, pp_notes.cap);
            pp_tu_note *nt = &pp_notes.v[pp_notes.n++];
            memset(nt, 0, sizeof *nt);
            nt->file = (int)fi;
            nt->off = (unsigned)(p - f->text);
            const char *eol = strchr(p, '\n');
            if (pp_note_parse(nt, p + sizeof key - 1, eol ? eol : f->text + f->len)) {
                pp_error(clang_getLocationForOffset(f->tu, f->cxf, nt->off),
                         "a tagged union annotation is written `leverage tagged_union(S, u, tag: "
                         "VALUE = member, VALUE = member, ...)` on one line");
                nt->n = 0;
            }
        }
    }
}

typedef struct pp_name_q {
    unsigned magic; /* PP_MAGIC_UNION */
    const char *name;
    CXType rec;
    int found;
} pp_name_q;

static enum CXChildVisitResult pp_typedef_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_name_q *q = pp_visit_state(d, PP_MAGIC_UNION);
    if (pp_kind(c) == CXCursor_TypedefDecl) {
        char *sp = pp_cxstring(clang_getCursorSpelling(c));
        if (!strcmp(sp, q->name) &&
            clang_equalTypes(clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c)), q->rec))
            q->found = 1;
        free(sp);
    }
    return q->found ? CXChildVisit_Break : CXChildVisit_Continue;
}

/* Whether `name` names record rec: its tag (with or without the keyword)
 * or a typedef of it in its translation unit. */
static int pp_names_record(const char *name, CXCursor rec)
{
    char *tag = pp_cxstring(clang_getCursorSpelling(rec));
    const char *n = !strncmp(name, "struct ", 7) ? name + 7 : name;
    int r = *tag && !strcmp(tag, n);
    free(tag);
    if (!r) {
        pp_name_q q = {PP_MAGIC_UNION, name, clang_getCanonicalType(clang_getCursorType(rec)), 0};
        clang_visitChildren(clang_getTranslationUnitCursor(clang_Cursor_getTranslationUnit(rec)),
                            pp_typedef_cb, &q);
        r = q.found;
    }
    return r;
}

/* ===================================================================
 * The union, its members and the candidate tags
 * =================================================================== */

enum { PP_TU_MAXCAND = 32 };

/* The kind of union member m (LEV_K_PTR, LEV_K_FNPTR, LEV_K_B1 for no
 * pointer), or NULL if it holds pointers but is no single pointer. */
static const char *pp_member_kind(CXCursor m)
{
    CXType t = clang_getCanonicalType(clang_getCursorType(m));
    if (!pp_has_pointer(t))
        return "LEV_K_B1";
    if (t.kind != CXType_Pointer)
        return NULL;
    enum CXTypeKind pk = clang_getCanonicalType(clang_getPointeeType(t)).kind;
    return pk == CXType_FunctionProto || pk == CXType_FunctionNoProto ? "LEV_K_FNPTR" : "LEV_K_PTR";
}

static enum CXVisitorResult pp_union_field_cb(CXCursor c, CXClientData d)
{
    pp_kids *k = pp_visit_state(d, PP_MAGIC_KIDS);
    PP_PUSH(k->v, k->n, k->cap);
    k->v[k->n++] = c;
    return CXVisit_Continue;
}

static int pp_is_int_kind(enum CXTypeKind k)
{
    return (k >= CXType_Bool && k <= CXType_Int128 && k != CXType_Char16 && k != CXType_Char32) ||
           k == CXType_Enum;
}

typedef struct pp_tu_ctx {
    unsigned magic; /* PP_MAGIC_UNION */
    CXCursor field, rec;
    CXCursor cand[PP_TU_MAXCAND];
    unsigned ncand;
    /* writes of a member of the union: its kind, and per candidate tag
     * the values that reach it (unknown: one is no constant) */
    struct pp_tu_write {
        const char *kind;
        char *member;
        CXCursor at;
        long long *vals[PP_TU_MAXCAND];
        unsigned nv[PP_TU_MAXCAND];
        int unknown[PP_TU_MAXCAND];
    } * w;
    unsigned nw, capw;
    /* the walk: the enclosing compound statements and their children */
    struct pp_tu_level {
        pp_kids kids;
        unsigned idx;
        enum CXCursorKind parent;
    } lv[256];
    unsigned depth;
    /* pp_tag_sets_cb */
    const char *key;
    unsigned ci, wi;
    int found;
} pp_tu_ctx;

/* The text of member access c without its member name: `a[i].` for
 * `a[i].u`, `p->` for `p->u`. */
static char *pp_base_key(CXCursor c)
{
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
    CXToken *toks;
    unsigned n;
    clang_tokenize(tu, clang_getCursorExtent(c), &toks, &n);
    pp_buf b = {0};
    pp_puts(&b, "");
    for (unsigned i = 0; i + 1 < n; i++) {
        char *s = pp_cxstring(clang_getTokenSpelling(tu, toks[i]));
        pp_puts(&b, s);
        pp_puts(&b, " ");
        free(s);
    }
    clang_disposeTokens(tu, toks, n);
    return b.p;
}

/* The assignment c (`A = B`): its left side with casts and parentheses
 * stripped, and its right side; 0 if c is none. */
static int pp_assign(CXCursor c, CXCursor *lhs, CXCursor *rhs)
{
    if (pp_kind(c) != CXCursor_BinaryOperator ||
        clang_getCursorBinaryOperatorKind(c) != CXBinaryOperator_Assign)
        return 0;
    pp_kids k = pp_children(c);
    int ok = k.n == 2;
    if (ok) {
        *lhs = pp_strip(k.v[0]);
        *rhs = k.v[1];
    }
    free(k.v);
    return ok && pp_kind(*lhs) == CXCursor_MemberRefExpr;
}

/* The object c (a member access) is a member of. */
static CXCursor pp_member_base(CXCursor c)
{
    pp_kids k = pp_children(c);
    CXCursor r = k.n ? pp_strip(k.v[0]) : clang_getNullCursor();
    free(k.v);
    return r;
}

/* Whether a and b declare the same field (or record), also when they
 * come from the translation units of different inputs. */
static int pp_same_field(CXCursor a, CXCursor b)
{
    if (clang_equalCursors(clang_getCanonicalCursor(a), clang_getCanonicalCursor(b)))
        return 1;
    if (clang_Cursor_isNull(a) || clang_Cursor_isNull(b) || pp_kind(a) != pp_kind(b))
        return 0;
    char *x = pp_cxstring(clang_getCursorUSR(a)), *y = pp_cxstring(clang_getCursorUSR(b));
    int r = *x && !strcmp(x, y);
    free(x);
    free(y);
    return r;
}

/* Appends the constant rhs evaluates to to the values of write wi for
 * candidate tag ci; 0 when rhs is no integer constant. */
static int pp_tag_value(pp_tu_ctx *t, CXCursor rhs)
{
    struct pp_tu_write *w = &t->w[t->wi];
    CXEvalResult ev = clang_Cursor_Evaluate(rhs);
    int ok = ev && clang_EvalResult_getKind(ev) == CXEval_Int;
    if (ok) {
        w->vals[t->ci] = pp_xrealloc(w->vals[t->ci], (w->nv[t->ci] + 1) * sizeof(long long));
        w->vals[t->ci][w->nv[t->ci]++] = clang_EvalResult_getAsLongLong(ev);
    }
    if (ev)
        clang_EvalResult_dispose(ev);
    return ok;
}

/* Collects into write wi the constants assigned to candidate tag ci of
 * the object with base key `key`. */
static enum CXChildVisitResult pp_tag_sets_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_tu_ctx *t = pp_visit_state(d, PP_MAGIC_UNION);
    CXCursor lhs, rhs;
    if (!pp_assign(c, &lhs, &rhs) || !pp_same_field(clang_getCursorReferenced(lhs), t->cand[t->ci]))
        return CXChildVisit_Recurse;
    char *key = pp_base_key(lhs);
    if (!strcmp(key, t->key)) {
        t->found = 1;
        if (!pp_tag_value(t, rhs))
            t->w[t->wi].unknown[t->ci] = 1;
    }
    free(key);
    return CXChildVisit_Recurse;
}

/* Every constant assigned to candidate ci anywhere (on any object), into
 * write wi's values. */
static enum CXChildVisitResult pp_tag_all_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_tu_ctx *t = pp_visit_state(d, PP_MAGIC_UNION);
    CXCursor lhs, rhs;
    if (pp_assign(c, &lhs, &rhs) && pp_same_field(clang_getCursorReferenced(lhs), t->cand[t->ci]))
        (void)pp_tag_value(t, rhs);
    return CXChildVisit_Recurse;
}

/* Whether the union t->field, or a member of it, has its address taken
 * (sets t->found). */
static enum CXChildVisitResult pp_union_addr_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_tu_ctx *t = pp_visit_state(d, PP_MAGIC_UNION);
    if (pp_kind(c) != CXCursor_UnaryOperator ||
        clang_getCursorUnaryOperatorKind(c) != CXUnaryOperator_AddrOf)
        return CXChildVisit_Recurse;
    pp_kids k = pp_children(c);
    CXCursor op = k.n == 1 ? pp_strip(k.v[0]) : clang_getNullCursor();
    free(k.v);
    if (pp_kind(op) == CXCursor_MemberRefExpr) {
        CXCursor f = clang_getCursorReferenced(op);
        CXCursor un =
            clang_getTypeDeclaration(clang_getCanonicalType(clang_getCursorType(t->field)));
        if (pp_same_field(f, t->field) || pp_same_field(clang_getCursorSemanticParent(f), un)) {
            t->found = 1;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

static int pp_is_jump_target(CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    return k == CXCursor_CaseStmt || k == CXCursor_DefaultStmt || k == CXCursor_LabelStmt;
}

/* Whether statement s assigns candidate ci of the current write. */
static int pp_stmt_sets(pp_tu_ctx *t, CXCursor s)
{
    t->found = 0;
    if (pp_tag_sets_cb(s, s, t) == CXChildVisit_Recurse)
        clang_visitChildren(s, pp_tag_sets_cb, t);
    return t->found;
}

/* The tag values that reach write wi, for each candidate: walking back
 * from it through the statements before it in its block, then in the
 * blocks around it, up to the first statement that assigns that tag of
 * the same object; never across a case label or a label (control comes
 * in there from elsewhere), nor out of a switch's body. */
static void pp_reaching_tags(pp_tu_ctx *t, unsigned wi)
{
    for (unsigned ci = 0; ci < t->ncand; ci++) {
        t->ci = ci;
        t->wi = wi;
        int done = 0;
        for (unsigned l = t->depth; l-- > 0 && !done;) {
            struct pp_tu_level *lv = &t->lv[l];
            if (pp_is_jump_target(lv->kids.v[lv->idx]))
                break;
            for (unsigned j = lv->idx; j-- > 0 && !done;)
                done = pp_stmt_sets(t, lv->kids.v[j]) || pp_is_jump_target(lv->kids.v[j]);
            if (lv->parent == CXCursor_SwitchStmt)
                break;
        }
    }
}

static void pp_tu_walk(pp_tu_ctx *t, CXCursor c, enum CXCursorKind parent);

/* A write of a member of the union: `X.u.m = ...` with u this field. */
static void pp_tu_check(pp_tu_ctx *t, CXCursor c)
{
    CXCursor lhs, rhs;
    if (!pp_assign(c, &lhs, &rhs))
        return;
    CXCursor base = pp_member_base(lhs);
    if (pp_kind(base) != CXCursor_MemberRefExpr ||
        !pp_same_field(clang_getCursorReferenced(base), t->field))
        return;
    CXCursor m = clang_getCursorReferenced(lhs);
    PP_PUSH(t->w, t->nw, t->capw);
    struct pp_tu_write *w = &t->w[t->nw++];
    memset(w, 0, sizeof *w);
    w->kind = pp_member_kind(m);
    w->member = pp_cxstring(clang_getCursorSpelling(m));
    w->at = c;
    char *key = pp_base_key(base);
    t->key = key;
    pp_reaching_tags(t, t->nw - 1);
    free(key);
}

static void pp_tu_walk(pp_tu_ctx *t, CXCursor c, enum CXCursorKind parent)
{
    pp_tu_check(t, c);
    pp_kids k = pp_children(c);
    int block = pp_kind(c) == CXCursor_CompoundStmt && t->depth < 256;
    if (block)
        t->lv[t->depth++] = (struct pp_tu_level){k, 0, parent};
    for (unsigned i = 0; i < k.n; i++) {
        if (block)
            t->lv[t->depth - 1].idx = i;
        pp_tu_walk(t, k.v[i], pp_kind(c));
    }
    if (block)
        t->depth--;
    free(k.v);
}

static enum CXChildVisitResult pp_tu_fn_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_tu_ctx *t = pp_visit_state(d, PP_MAGIC_UNION);
    if (pp_kind(c) == CXCursor_FunctionDecl && clang_isCursorDefinition(c)) {
        t->depth = 0;
        pp_tu_walk(t, c, CXCursor_TranslationUnit);
    }
    return CXChildVisit_Continue;
}

static enum CXVisitorResult pp_cand_cb(CXCursor c, CXClientData d)
{
    pp_tu_ctx *t = pp_visit_state(d, PP_MAGIC_UNION);
    CXType ct = clang_getCanonicalType(clang_getCursorType(c));
    long long sz = clang_Type_getSizeOf(ct);
    if (!clang_Cursor_isBitField(c) && pp_is_int_kind(ct.kind) &&
        (sz == 1 || sz == 2 || sz == 4 || sz == 8) && t->ncand < PP_TU_MAXCAND)
        t->cand[t->ncand++] = c;
    return CXVisit_Continue;
}

/* ===================================================================
 * The tag table
 * =================================================================== */

typedef struct pp_tu_done {
    char *usr;
    const char *id; /* NULL: refused */
} pp_tu_done;

static struct {
    pp_tu_done *v;
    unsigned n, cap;
} pp_tu_cache;

/* Registers the tag table type of field (tag `tag`) with rows `rows`. */
static const char *pp_tag_table(CXCursor field, CXCursor tag, const char *rows, unsigned nrows)
{
    PP_PUSH(ctx.types, ctx.ntypes, ctx.captypes);
    pp_type *ty = &ctx.types[ctx.ntypes++];
    memset(ty, 0, sizeof *ty);
    char *rec = pp_cxstring(clang_getTypeSpelling(
        clang_getCanonicalType(clang_getCursorType(clang_getCursorSemanticParent(field)))));
    char *fname = pp_cxstring(clang_getCursorSpelling(field));
    char *tname = pp_cxstring(clang_getCursorSpelling(tag));
    ty->key = pp_fmt("tag table of %s.%s", pp_bad_spelling(rec) ? "(unnamed)" : rec, fname);
    ty->idname = pp_fmt("LEV__T_tagged_%u", ctx.ntypes);
    CXType ut = clang_getCanonicalType(clang_getCursorType(field));
    ty->spell = pp_fmt("char[%lld]", clang_Type_getSizeOf(ut));
    ty->type = ut;
    ty->fn = -1;
    ty->owner = ctx.cur_file;
    ty->where = field;
    long long delta =
        (clang_Cursor_getOffsetOfField(tag) - clang_Cursor_getOffsetOfField(field)) / 8;
    pp_printf(&ty->fields, "    {\"%s\", (uint32_t)(%lld), LEV_K_TAG, %lld, 0},\n%s", tname, delta,
              clang_Type_getSizeOf(clang_getCanonicalType(clang_getCursorType(tag))), rows);
    ty->nfields = 1 + nrows;
    free(rec);
    free(fname);
    free(tname);
    return ty->idname;
}

static void pp_arm_row(pp_buf *b, const char *member, const char *val, const char *kind)
{
    pp_printf(b,
              "    {\"%s\", (uint32_t)(long long)(%s), %s, 1, "
              "(uint32_t)((unsigned long long)(long long)(%s) >> 32)},\n",
              member, val, kind, val);
}

static const char pp_how[] = "name the tag and the member each of its values selects in a "
                             "comment `/* leverage tagged_union(S, u, tag: VALUE = member, ...) "
                             "*/` at file scope";

/* The table from an annotation of field (union type ut) in record rec. */
static const char *pp_tu_from_note(const pp_tu_note *nt, CXCursor field, CXCursor rec)
{
    const pp_file *f = &ctx.files[nt->file];
    CXSourceLocation loc = clang_getLocationForOffset(f->tu, f->cxf, nt->off);
    pp_tu_ctx t = {.magic = PP_MAGIC_UNION};
    clang_Type_visitFields(clang_getCursorType(rec), pp_cand_cb, &t);
    CXCursor tag = clang_getNullCursor();
    for (unsigned i = 0; i < t.ncand; i++) {
        char *sp = pp_cxstring(clang_getCursorSpelling(t.cand[i]));
        if (!strcmp(sp, nt->tag))
            tag = t.cand[i];
        free(sp);
    }
    if (clang_Cursor_isNull(tag)) {
        pp_error(loc,
                 "tagged union '%s.%s': '%s' is no integer field of '%s' (a bit-field cannot "
                 "be a tag)",
                 nt->rec, nt->un, nt->tag, nt->rec);
        return NULL;
    }
    pp_kids k = {.magic = PP_MAGIC_KIDS};
    CXType ut = clang_getCanonicalType(clang_getCursorType(field));
    clang_Type_visitFields(ut, pp_union_field_cb, &k);
    pp_buf rows = {0};
    pp_puts(&rows, "");
    int ok = 1;
    for (unsigned i = 0; i < nt->n && ok; i++) {
        const char *kind = NULL;
        int seen = 0;
        for (unsigned j = 0; j < k.n; j++) {
            char *sp = pp_cxstring(clang_getCursorSpelling(k.v[j]));
            if (!strcmp(sp, nt->members[i])) {
                seen = 1;
                kind = pp_member_kind(k.v[j]);
            }
            free(sp);
        }
        if (!seen || !kind) {
            pp_error(loc, "tagged union '%s.%s': '%s' is %s", nt->rec, nt->un, nt->members[i],
                     seen ? "a member that holds pointers but is no single pointer"
                          : "no member of the union");
            ok = 0;
        } else {
            pp_arm_row(&rows, nt->members[i], nt->vals[i], kind);
        }
    }
    free(k.v);
    const char *id = ok ? pp_tag_table(field, tag, rows.p, nt->n) : NULL;
    free(rows.p);
    return id;
}

/* Whether some value of candidate ci is paired with a member that holds
 * a pointer and with one of another kind: then a description of it. */
static char *pp_tu_conflict(const pp_tu_ctx *t, unsigned ci)
{
    for (unsigned a = 0; a < t->nw; a++)
        for (unsigned b = 0; b < t->nw; b++) {
            const struct pp_tu_write *x = &t->w[a], *y = &t->w[b];
            if (!x->kind || !y->kind || !strcmp(x->kind, y->kind) || x->unknown[ci] ||
                y->unknown[ci])
                continue;
            for (unsigned i = 0; i < x->nv[ci]; i++)
                for (unsigned j = 0; j < y->nv[ci]; j++)
                    if (x->vals[ci][i] == y->vals[ci][j]) {
                        char *tag = pp_cxstring(clang_getCursorSpelling(t->cand[ci]));
                        char *r = pp_fmt("the value %lld of '%s' is paired with member '%s' and "
                                         "with member '%s'",
                                         x->vals[ci][i], tag, x->member, y->member);
                        free(tag);
                        return r;
                    }
        }
    return NULL;
}

/* The inferred table of field (a union member of rec), or NULL with the
 * reason in *why. */
static const char *pp_tu_infer(CXCursor field, CXCursor rec, char **why)
{
    pp_tu_ctx t = {.magic = PP_MAGIC_UNION, .field = field, .rec = rec};
    clang_Type_visitFields(clang_getCursorType(rec), pp_cand_cb, &t);
    if (!t.ncand) {
        *why = pp_strdup("its struct has no integer field that could be its tag");
        return NULL;
    }
    for (unsigned i = 0; i < ctx.nfiles; i++)
        if (ctx.files[i].tu)
            clang_visitChildren(clang_getTranslationUnitCursor(ctx.files[i].tu), pp_tu_fn_cb, &t);
    const char *id = NULL;
    int nvalid = 0, best = -1, any_ptr = 0;
    char *bad = NULL;      /* a member that is no single pointer */
    char *untagged = NULL; /* a pointer write no constant tag reaches */
    char *conflict = NULL;
    for (unsigned ci = 0; ci < t.ncand; ci++) {
        int ok = 1;
        for (unsigned wi = 0; wi < t.nw; wi++) {
            struct pp_tu_write *w = &t.w[wi];
            if (!w->kind) {
                ok = 0;
                if (!bad)
                    bad = pp_fmt("member '%s' holds pointers but is no single pointer", w->member);
            } else if (strcmp(w->kind, "LEV_K_B1")) {
                any_ptr = 1;
                if (!w->nv[ci] || w->unknown[ci]) {
                    ok = 0;
                    if (!untagged && ci == t.ncand - 1) {
                        unsigned line;
                        clang_getSpellingLocation(PP_LOC(w->at), NULL, &line, NULL, NULL);
                        untagged = pp_fmt("its member '%s' is assigned (line %u) where no "
                                          "constant was assigned to an integer field of the "
                                          "same object before",
                                          w->member, line);
                    }
                }
            }
        }
        char *cf = ok && any_ptr ? pp_tu_conflict(&t, ci) : NULL;
        if (cf) {
            ok = 0;
            if (!conflict)
                conflict = cf;
            else
                free(cf);
        }
        if (ok && any_ptr) {
            nvalid++;
            best = (int)ci;
        }
    }
    if (nvalid == 1) {
        /* the other values the program gives the tag select no pointer,
         * unless the union or a member has its address taken (a pointer
         * may be stored through it, out of sight): then they select
         * nothing, and the capture checks their bytes */
        PP_PUSH(t.w, t.nw, t.capw);
        struct pp_tu_write *all = &t.w[t.nw++];
        memset(all, 0, sizeof *all);
        all->kind = "LEV_K_B1";
        all->member = pp_strdup("(no pointer)");
        t.ci = (unsigned)best;
        t.wi = t.nw - 1;
        t.found = 0;
        for (unsigned i = 0; i < ctx.nfiles && !t.found; i++)
            if (ctx.files[i].tu)
                clang_visitChildren(clang_getTranslationUnitCursor(ctx.files[i].tu),
                                    pp_union_addr_cb, &t);
        for (unsigned i = 0; i < ctx.nfiles && !t.found; i++)
            if (ctx.files[i].tu)
                clang_visitChildren(clang_getTranslationUnitCursor(ctx.files[i].tu), pp_tag_all_cb,
                                    &t);
        pp_buf rows = {0};
        unsigned nrows = 0;
        pp_puts(&rows, "");
        for (unsigned wi = 0; wi < t.nw; wi++) {
            struct pp_tu_write *w = &t.w[wi];
            if (w->unknown[best])
                continue;
            for (unsigned x = 0; x < w->nv[best]; x++) {
                int dup = 0; /* a value seen before (with the same kind) */
                for (unsigned a = 0; a <= wi && !dup; a++)
                    for (unsigned y = 0; y < (a < wi ? t.w[a].nv[best] : x) && !dup; y++)
                        dup = !t.w[a].unknown[best] && t.w[a].vals[best][y] == w->vals[best][x];
                if (dup)
                    continue;
                char *v = pp_fmt("%lldLL", w->vals[best][x]);
                pp_arm_row(&rows, w->member, v, w->kind);
                nrows++;
                free(v);
            }
        }
        id = pp_tag_table(field, t.cand[best], rows.p, nrows);
        free(rows.p);
    } else if (nvalid > 1) {
        *why = pp_strdup("more than one of its struct's integer fields is assigned a constant "
                         "before each of its pointer members is, so which is its tag is unclear");
    } else if (bad) {
        *why = bad;
        bad = NULL;
    } else if (!any_ptr) {
        *why = pp_strdup("no assignment of its pointer member was found, so no tag value "
                         "that selects it");
    } else if (conflict) {
        *why = conflict;
        conflict = NULL;
    } else {
        *why = untagged;
        untagged = NULL;
    }
    free(bad);
    free(untagged);
    free(conflict);
    for (unsigned wi = 0; wi < t.nw; wi++) {
        for (unsigned ci = 0; ci < t.ncand; ci++)
            free(t.w[wi].vals[ci]);
        free(t.w[wi].member);
    }
    free(t.w);
    return id;
}

const char *pp_tagged_union(CXCursor field)
{
    char *usr = pp_cxstring(clang_getCursorUSR(field));
    for (unsigned i = 0; i < pp_tu_cache.n; i++)
        if (!strcmp(pp_tu_cache.v[i].usr, usr)) {
            free(usr);
            return pp_tu_cache.v[i].id;
        }
    if (!pp_notes.built)
        pp_notes_build();
    CXCursor rec = clang_getCursorSemanticParent(field);
    char *un = pp_cxstring(clang_getCursorSpelling(field));
    char *recsp = pp_cxstring(clang_getTypeSpelling(clang_getCursorType(rec)));
    const char *id = NULL;
    int noted = 0;
    for (unsigned i = 0; i < pp_notes.n && !noted; i++) {
        const pp_tu_note *nt = &pp_notes.v[i];
        if (nt->n && !strcmp(nt->un, un) && pp_names_record(nt->rec, rec)) {
            noted = 1;
            id = pp_tu_from_note(nt, field, rec);
        }
    }
    CXType ut = clang_getCanonicalType(clang_getCursorType(field));
    if (!noted && clang_Type_getSizeOf(ut) > 8) {
        pp_error(PP_LOC(field),
                 "'%s.%s' is a union that may hold a pointer, and of more than 8 bytes: it "
                 "cannot be captured (only a tagged union of at most 8 bytes, a pointer and "
                 "numbers, can)",
                 recsp, un);
        noted = 1;
    }
    if (!noted) {
        char *why = NULL;
        id = pp_tu_infer(field, rec, &why);
        if (!id)
            pp_error(PP_LOC(field),
                     "'%s.%s' is a union that may hold a pointer and levpp cannot tell which "
                     "member is live: %s; %s",
                     recsp, un, why, pp_how);
        free(why);
    }
    PP_PUSH(pp_tu_cache.v, pp_tu_cache.n, pp_tu_cache.cap);
    pp_tu_cache.v[pp_tu_cache.n++] = (pp_tu_done){usr, id};
    free(un);
    free(recsp);
    return id;
}
