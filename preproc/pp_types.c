/* pp_types.c - C types as levpp sees them: declarators, classification
 * (pointers, variably modified types), the field descriptors of every
 * type a frame holds (overlay unions included), and the tags given to
 * local struct and union types before the passes run (unnamed ones, and
 * ones whose tag clashes once moved to file scope).
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Types: declarators, classification, descriptors
 * =================================================================== */

CXType pp_desugar(CXType t)
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

int pp_bad_spelling(const char *s) { return strstr(s, "(unnamed") || strstr(s, "(anonymous"); }

/* Spelling sp (taken) with the record type behind va_list, which clang
 * spells `struct __va_list_tag` but no declaration can name (a va_list
 * parameter decays to a pointer to it), written as the element of
 * __builtin_va_list instead. */
static char *pp_spell_builtins(char *sp)
{
    static const char tag[] = "struct __va_list_tag";
    char *at = strstr(sp, tag);
    if (!at)
        return sp;
    char *r = pp_fmt("%.*s__typeof__((*(__builtin_va_list *)0)[0])%s", (int)(at - sp), sp,
                     at + sizeof tag - 1);
    free(sp);
    return pp_spell_builtins(r);
}

static char *pp_decl_q(CXType t, const char *name, int unqual, const char *pre);

/* A declaration of `name` with type t (top-level qualifiers dropped). */
char *pp_decl(CXType t, const char *name) { return pp_decl_q(t, name, 1, ""); }

/* pre with the qualifiers of array type t (`const int[3]` may carry
 * them on the array, not on its element) that it does not hold yet. */
static char *pp_array_quals(CXType t, const char *pre)
{
    int c = clang_isConstQualifiedType(t) && !strstr(pre, "const ");
    int v = clang_isVolatileQualifiedType(t) && !strstr(pre, "volatile ");
    return pp_fmt("%s%s%s", pre, c ? "const " : "", v ? "volatile " : "");
}

/* unqual: drop t's own qualifiers (and an array's elements'); a
 * pointer's target keeps them. */
static char *pp_decl_q(CXType t, const char *name, int unqual, const char *pre)
{
    CXType qual = t;
    if (unqual)
        t = clang_getUnqualifiedType(t);
    CXType d = pp_desugar(t);
    switch (d.kind) {
    case CXType_ConstantArray: {
        char *inner = name[0] == '*' ? pp_fmt("(%s)[%lld]", name, clang_getArraySize(d))
                                     : pp_fmt("%s[%lld]", name, clang_getArraySize(d));
        char *q = unqual ? pp_strdup(pre) : pp_array_quals(t, pre);
        char *r = pp_decl_q(clang_getArrayElementType(d), inner, unqual, q);
        free(q);
        free(inner);
        return r;
    }
    case CXType_IncompleteArray:
    case CXType_VariableArray: { /* [] is compatible with any first dimension */
        char *inner = name[0] == '*' ? pp_fmt("(%s)[]", name) : pp_fmt("%s[]", name);
        char *q = unqual ? pp_strdup(pre) : pp_array_quals(t, pre);
        char *r = pp_decl_q(clang_getArrayElementType(d), inner, unqual, q);
        free(q);
        free(inner);
        return r;
    }
    case CXType_Pointer: {
        CXType p = pp_desugar(clang_getPointeeType(d));
        if (p.kind == CXType_FunctionProto || p.kind == CXType_FunctionNoProto ||
            p.kind == CXType_ConstantArray || p.kind == CXType_IncompleteArray ||
            p.kind == CXType_VariableArray) {
            char *inner = pp_fmt("(*%s)", name);
            char *r = pp_decl_q(clang_getPointeeType(d), inner, 0, "");
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
            char *a = pp_spell_builtins(
                pp_cxstring(clang_getTypeSpelling(clang_getArgType(d, (unsigned)i))));
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
    char *sp = pp_spell_builtins(pp_cxstring(clang_getTypeSpelling(t)));
    if (pp_bad_spelling(sp)) {
        /* a typedef of a qualified unnamed type (`typedef const struct
         * {...} T;`), which dropping the qualifiers desugared: T keeps
         * them, and a copy of such a type goes through memcpy
         * (pp_copy_into) */
        char *qs = pp_spell_builtins(pp_cxstring(clang_getTypeSpelling(qual)));
        if (!pp_bad_spelling(qs)) {
            free(sp);
            sp = qs;
        } else {
            free(qs);
        }
    }
    if (strstr(sp, "typeof") && !strstr(sp, "__builtin_va_list")) {
        /* __typeof__(expr) may name locals that are not where this goes */
        CXType c = clang_getCanonicalType(t);
        char *cs = pp_cxstring(clang_getTypeSpelling(c));
        if (!pp_bad_spelling(cs)) {
            free(sp);
            sp = cs;
        } else {
            free(cs);
        }
    }
    if (*pre) { /* an array's qualifiers, those the element lacks */
        char *q =
            pp_fmt("%s%s%s", strstr(pre, "const ") && !strstr(sp, "const") ? "const " : "",
                   strstr(pre, "volatile ") && !strstr(sp, "volatile") ? "volatile " : "", sp);
        free(sp);
        sp = q;
    }
    char *r = pp_fmt("%s%s%s", sp, name[0] == '*' || sp[strlen(sp) - 1] == '*' ? "" : " ", name);
    if (name[0] == '*' && sp[strlen(sp) - 1] != '*') {
        free(r);
        r = pp_fmt("%s %s", sp, name);
    }
    free(sp);
    return r;
}

static int pp_ident_char(char c) { return c == '_' || isalnum((unsigned char)c); }

/* The end of the group that opens at s[i] ('('), string and character
 * literals skipped: the index after its ')', or i if it does not close. */
static size_t pp_group_end(const char *s, size_t i)
{
    int depth = 0;
    for (size_t j = i; s[j]; j++) {
        char c = s[j];
        if (c == '"' || c == '\'') {
            for (j++; s[j] && s[j] != c; j++)
                if (s[j] == '\\' && s[j + 1])
                    j++;
            if (!s[j])
                return i;
        } else if (c == '(') {
            depth++;
        } else if (c == ')' && --depth == 0) {
            return j + 1;
        }
    }
    return i;
}

/* The alignment of one specifier, its operand s[b, e): that number, or
 * -1 when it is no number (an expression, a type). */
static long pp_align_number(const char *s, size_t b, size_t e)
{
    char *end;
    long n = strtol(s + b, &end, 0);
    while (end < s + e && *end == ' ')
        end++;
    return end == s + b || end != s + e || n <= 0 ? -1 : n;
}

char *pp_align_attrs(CXCursor decl, long *value)
{
    long v = 0;
    if (value)
        *value = 0;
    if (pp_kind(decl) != CXCursor_VarDecl && pp_kind(decl) != CXCursor_ParmDecl)
        return pp_strdup("");
    pp_kids k = pp_children(decl);
    int any = 0;
    for (unsigned i = 0; i < k.n; i++)
        any |= pp_kind(k.v[i]) == CXCursor_AlignedAttr;
    free(k.v);
    if (!any)
        return pp_strdup("");
    CXPrintingPolicy pol = clang_getCursorPrintingPolicy(decl);
    char *s = pp_cxstring(clang_getCursorPrettyPrinted(decl, pol));
    clang_PrintingPolicy_dispose(pol);
    pp_buf b = {0};
    int depth = 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        if (c == '"' || c == '\'') { /* a literal, skipped */
            for (i++; s[i] && s[i] != c; i++)
                if (s[i] == '\\' && s[i + 1])
                    i++;
            if (!s[i])
                break;
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if (c == ')' || c == ']' || c == '}')
            depth--;
        else if (c == '=' && depth == 0)
            break; /* the initializer */
        if (!pp_ident_char(c) || isdigit((unsigned char)c) || (i && pp_ident_char(s[i - 1])))
            continue;
        size_t n = 0;
        while (pp_ident_char(s[i + n]))
            n++;
        int spec =
            (n == 8 && !strncmp(s + i, "_Alignas", 8)) || (n == 7 && !strncmp(s + i, "alignas", 7));
        int attr = n == 13 && !strncmp(s + i, "__attribute__", 13);
        size_t g = i + n;
        while (s[g] == ' ')
            g++;
        size_t e = (spec || attr) && s[g] == '(' ? pp_group_end(s, g) : g;
        long al = 0;
        if (e > g && spec) {
            pp_printf(&b, "_Alignas%.*s ", (int)(e - g), s + g);
            al = pp_align_number(s, g + 1, e - 1);
        } else if (e > g &&
                   (!strncmp(s + g, "((aligned", 9) || !strncmp(s + g, "((__aligned__", 13))) {
            pp_printf(&b, "__attribute__%.*s ", (int)(e - g), s + g);
            size_t o = g + (s[g + 2] == 'a' ? 9 : 13), oe = s[o] == '(' ? pp_group_end(s, o) : o;
            /* `aligned` alone: the target's largest alignment */
            al = oe > o ? pp_align_number(s, o + 1, oe - 1) : -1;
        }
        if (al)
            v = v < 0 || al < 0 ? -1 : al > v ? al : v;
        i = (e > g ? e : i + n) - 1;
    }
    free(s);
    if (value)
        *value = v;
    return b.p ? b.p : pp_strdup("");
}

static int pp_is_fn_type(CXType t)
{
    t = clang_getCanonicalType(t);
    return t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto;
}

static enum CXVisitorResult pp_ptr_field_cb(CXCursor c, CXClientData d)
{
    int *found = pp_visit_flag(d);
    if (pp_has_pointer(clang_getCursorType(c))) {
        *found = 1;
        return CXVisit_Break;
    }
    return CXVisit_Continue;
}

int pp_has_pointer(CXType t)
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
int pp_is_vm(CXType t)
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
int pp_vm_typedef(CXCursor c)
{
    return pp_kind(c) == CXCursor_TypedefDecl && pp_is_vm(clang_getTypedefDeclUnderlyingType(c));
}

static enum CXVisitorResult pp_collect_field_cb(CXCursor c, CXClientData d);
static int pp_anon_member(CXCursor c);
static char *pp_member_path(const char *path, CXCursor c);

static void pp_flex_row(pp_type *ty, const char *owner, const char *path, CXType t, CXCursor where);
static const char *pp_member_record_id(CXType t, CXType elem, CXCursor where, const char *owner,
                                       const char *path);
static int pp_last_member(const pp_type *ty, CXCursor m);
static int pp_is_union(CXType t)
{
    t = clang_getCanonicalType(t);
    return t.kind == CXType_Record && pp_kind(clang_getTypeDeclaration(t)) == CXCursor_UnionDecl;
}

/* ===================================================================
 * Overlay unions: the opaque-state idiom, a union of one member that
 * holds pointers and others that only size or align it (`union { char
 * minStateSize[N]; struct state internal; }`)
 * =================================================================== */

/* The USRs of every field the inputs name (member accesses, designated
 * initialisers, offsetof), sorted; built on first use. */
static struct {
    char **v;
    unsigned n, cap;
    int built;
} pp_named_fields;

static enum CXChildVisitResult pp_named_field_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    (void)d;
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_MemberRefExpr || k == CXCursor_MemberRef) {
        CXCursor f = clang_getCursorReferenced(c);
        if (pp_kind(f) == CXCursor_FieldDecl) {
            PP_PUSH(pp_named_fields.v, pp_named_fields.n, pp_named_fields.cap);
            pp_named_fields.v[pp_named_fields.n++] = pp_cxstring(clang_getCursorUSR(f));
        }
    }
    return CXChildVisit_Recurse;
}

static int pp_strcmp_p(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int pp_field_named(CXCursor field)
{
    if (!pp_named_fields.built) {
        pp_named_fields.built = 1;
        for (unsigned i = 0; i < ctx.nfiles; i++)
            if (ctx.files[i].tu)
                clang_visitChildren(clang_getTranslationUnitCursor(ctx.files[i].tu),
                                    pp_named_field_cb, NULL);
        if (pp_named_fields.n)
            qsort(pp_named_fields.v, pp_named_fields.n, sizeof *pp_named_fields.v, pp_strcmp_p);
    }
    char *usr = pp_cxstring(clang_getCursorUSR(field));
    int r = pp_named_fields.n && bsearch(&usr, pp_named_fields.v, pp_named_fields.n,
                                         sizeof *pp_named_fields.v, pp_strcmp_p) != NULL;
    free(usr);
    return r;
}

/* Whether union un is an overlay: exactly one member holds pointers, it is
 * named, and no other member is named anywhere in the inputs (only its
 * size counts). Then *member is that one, which describes the union
 * exactly: every value the union holds was written through it. */
static int pp_overlay(CXType un, CXCursor *member)
{
    pp_kids k = {.magic = PP_MAGIC_KIDS};
    clang_Type_visitFields(clang_getCanonicalType(un), pp_collect_field_cb, &k);
    int nptr = 0, ok = 1;
    for (unsigned i = 0; i < k.n && ok; i++) {
        CXCursor f = k.v[i];
        if (pp_has_pointer(clang_getCursorType(f))) {
            nptr++;
            *member = f;
            ok = !clang_Cursor_isBitField(f) && !pp_anon_member(f);
        } else {
            ok = !pp_field_named(f);
        }
    }
    free(k.v);
    return ok && nptr == 1;
}

/* Registering a type (pp_record_id, pp_tagged_union...) may move
 * ctx.types: a describer keeps the index of the type it fills
 * (pp_type_index) and finds it again after such a call (pp_type_at).
 * Every row written asserts that its type is in the array as it is now
 * (every pp_type lives there), so a describer that kept a pointer across
 * a move stops levpp instead of losing rows. */
static long pp_type_index(const pp_type *ty)
{
    return ty >= ctx.types && ty < ctx.types + ctx.ntypes ? ty - ctx.types : -1;
}

static pp_type *pp_type_at(long ti, pp_type *ty) { return ti >= 0 ? &ctx.types[ti] : ty; }

/* The rows of overlay union un at member path `path` of owner (or the
 * owner itself): its pointer member, then the bytes after it. */
static void pp_overlay_rows(pp_type *ty, const char *owner, const char *path, CXType un,
                            CXCursor member)
{
    char *mp = pp_member_path(path, member);
    CXType mt = clang_getCursorType(member);
    long ti = pp_type_index(ty);
    pp_fields(ty, owner, mp, mt, member);
    ty = pp_type_at(ti, ty);
    free(mp);
    long long used = clang_Type_getSizeOf(clang_getCanonicalType(mt));
    long long tail = clang_Type_getSizeOf(clang_getCanonicalType(un)) - used;
    if (tail > 0) {
        char *at =
            *path ? pp_fmt("offsetof(%s, %s) + %lld", owner, path, used) : pp_fmt("%lld", used);
        assert(pp_type_index(ty) >= 0); /* not a copy that ctx.types left */
        pp_printf(&ty->fields, "    {\"%s%s(overlay)\", %s, LEV_K_B1, %lld, 0},\n", path,
                  *path ? "." : "", at, tail);
        ty->nfields++;
        free(at);
    }
}

char *pp_ident(const char *s)
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
    char *key = pp_cxstring(clang_getTypeSpelling(canon));
    char *spell = pp_cxstring(clang_getTypeSpelling(clang_getUnqualifiedType(pp_desugar(t))));
    if (pp_bad_spelling(spell)) {
        free(spell);
        spell = pp_cxstring(clang_getTypeSpelling(clang_getUnqualifiedType(t)));
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

/* How a capture carries a value of canonical type c that is no pointer,
 * record or array: as *n items of *width bytes (1, 2, 4 or 8), byte order
 * fixed on restore. A scalar is one item; long double and __int128 two of
 * 8 bytes; a vector or complex value the items of each of its elements
 * (a 32-byte vector of doubles, four of 8 bytes). 0 if no items can. */
static int pp_items(CXType c, long long *width, long long *n)
{
    if (c.kind == CXType_Vector || c.kind == CXType_ExtVector || c.kind == CXType_Complex) {
        long long per = c.kind == CXType_Complex ? 2 : clang_getNumElements(c);
        if (per <= 0 || !pp_items(clang_getCanonicalType(clang_getElementType(c)), width, n))
            return 0;
        *n *= per;
        return 1;
    }
    long long sz = clang_Type_getSizeOf(c);
    *width = sz == 16 ? 8 : sz;
    *n = sz == 16 ? 2 : 1;
    return sz == 1 || sz == 2 || sz == 4 || sz == 8 || sz == 16;
}

static const char *pp_width_kind(long long width)
{
    return width == 1 ? "LEV_K_B1" : width == 2 ? "LEV_K_B2" : width == 4 ? "LEV_K_B4" : "LEV_K_B8";
}

/* Element type of a static or heap array of t: id text and element size
 * text; *mult: how many elements one t is (arrays, long double). 0: ok. */
int pp_elem(CXType t, CXCursor where, const char **id, char **size, long long *mult)
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
    case CXType_Record: {
        CXCursor member;
        if (pp_is_union(c) && !(pp_has_pointer(c) && pp_overlay(c, &member))) {
            if (pp_has_pointer(c)) {
                char *sp = pp_cxstring(clang_getTypeSpelling(t));
                pp_error(PP_LOC(where),
                         "'%s' is a union that holds a pointer and cannot be described: only a "
                         "union whose one member with pointers is the only member the program "
                         "names (the others only size it) can; it must not live in the VT's "
                         "heap or statics",
                         sp);
                free(sp);
                return -1;
            }
            *id = "LEV_T_BYTES";
            *mult *= sz;
            *size = pp_strdup("1");
            return 0;
        }
        *id = pp_record_id(t, where);
        if (pp_is_flex(c)) {
            *size = pp_strdup("1"); /* a trailing array: counted in bytes */
            return 0;
        }
        char *sp = pp_cxstring(clang_getTypeSpelling(clang_getUnqualifiedType(pp_desugar(t))));
        *size = pp_fmt("sizeof(%s)", sp);
        free(sp);
        return 0;
    }
    default:
        break;
    }
    long long width, n;
    if (c.kind == CXType_Void || (pp_items(c, &width, &n) && width == 1)) {
        *id = "LEV_T_BYTES";
        *mult *= c.kind == CXType_Void ? 1 : n;
        *size = pp_strdup("1");
        return 0;
    }
    if (pp_items(c, &width, &n)) {
        *id = width == 2 ? "LEV_T_U16" : width == 4 ? "LEV_T_U32" : "LEV_T_U64";
        *mult *= n;
        *size = pp_fmt("%lld", width);
        return 0;
    }
    char *sp = pp_cxstring(clang_getTypeSpelling(t));
    pp_error(PP_LOC(where), "type '%s' cannot be described for the VT's heap or statics", sp);
    free(sp);
    return -1;
}

static enum CXVisitorResult pp_collect_field_cb(CXCursor c, CXClientData d)
{
    pp_kids *k = pp_visit_state(d, PP_MAGIC_KIDS);
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
    char *name = pp_cxstring(clang_getCursorSpelling(c));
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
static void pp_bitfield_run(pp_type *ty, const char *owner, const char *path, CXType rec, int anon,
                            CXCursor *v, unsigned n, unsigned b, unsigned e)
{
    CXCursor prev = b > 0 ? v[b - 1] : clang_getNullCursor();
    CXCursor next = e < n ? v[e] : clang_getNullCursor();
    char *first = pp_cxstring(clang_getCursorSpelling(v[b]));
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
        lo = clang_Cursor_getOffsetOfField(prev) / 8 +
             clang_Type_getSizeOf(clang_getCursorType(prev));
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
    char *last = pp_cxstring(clang_getCursorSpelling(v[e - 1]));
    assert(pp_type_index(ty) >= 0); /* not a copy that ctx.types left */
    pp_printf(&ty->fields, "    {\"%s%s%s%s%s\", %s, LEV_K_B1, (%s) - (%s), 0},\n", path,
              *path ? "." : "", *first ? first : "(bit-field)", e - b > 1 ? ".." : "",
              e - b > 1 ? (*last ? last : "(bit-field)") : "", start, end, start);
    ty->nfields++;
    free(first);
    free(last);
    free(start);
    free(end);
}

/* The member path, below `path`, of the first named field of record rec
 * (an anonymous member's type), descending through anonymous members: it
 * starts where rec starts, since a struct's first member and every member
 * of a union are at offset 0. NULL if that field is a bit-field, which
 * offsetof cannot name. */
static char *pp_first_named_path(const char *path, CXType rec)
{
    pp_kids k = {.magic = PP_MAGIC_KIDS};
    clang_Type_visitFields(rec, pp_collect_field_cb, &k);
    char *r = NULL;
    if (k.n && !clang_Cursor_isBitField(k.v[0])) {
        CXCursor c = k.v[0];
        CXType ct = clang_getCanonicalType(clang_getCursorType(c));
        if (pp_anon_member(c) && ct.kind == CXType_Record)
            r = pp_first_named_path(path, ct);
        else
            r = pp_member_path(path, c);
    }
    free(k.v);
    return r;
}

/* An anonymous union member of a record at member path `path` of owner:
 * one run of raw bytes as long as the union, from where its first named
 * member starts (the union has no name offsetof could take). */
static void pp_anon_union_row(pp_type *ty, const char *owner, const char *path, CXType un,
                              CXCursor where)
{
    const char *in = *path ? path : owner;
    if (pp_has_pointer(un)) {
        pp_error(PP_LOC(where),
                 "an anonymous union in '%s' may hold a pointer: it cannot be captured", in);
        return;
    }
    char *first = pp_first_named_path(path, un);
    if (!first) {
        pp_error(PP_LOC(where),
                 "an anonymous union in '%s' that begins with a bit-field cannot be described; "
                 "give the union a member name",
                 in);
        return;
    }
    assert(pp_type_index(ty) >= 0); /* not a copy that ctx.types left */
    pp_printf(&ty->fields,
              "    {\"%s%s(anonymous union)\", offsetof(%s, %s), LEV_K_B1, %lld, 0},\n", path,
              *path ? "." : "", owner, first, clang_Type_getSizeOf(un));
    ty->nfields++;
    free(first);
}

/* Appends the field descriptors of record type rec, at member path
 * `path` of owner (or the owner itself); anon: rec is an anonymous
 * member, its fields named as the enclosing record's. */
void pp_record_fields(pp_type *ty, const char *owner, const char *path, CXType rec, int anon)
{
    CXCursor member;
    if (!anon && pp_is_union(rec)) { /* an overlay (pp_fields, pp_elem) */
        if (pp_overlay(rec, &member))
            pp_overlay_rows(ty, owner, path, rec, member);
        return;
    }
    pp_kids k = {.magic = PP_MAGIC_KIDS};
    clang_Type_visitFields(rec, pp_collect_field_cb, &k);
    long ti = pp_type_index(ty);
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor c = k.v[i];
        ty = pp_type_at(ti, ty);
        if (clang_Cursor_isBitField(c)) {
            unsigned e = i + 1;
            while (e < k.n && clang_Cursor_isBitField(k.v[e]))
                e++;
            pp_bitfield_run(ty, owner, path, rec, anon, k.v, k.n, i, e);
            i = e - 1;
            continue;
        }
        CXType ct = clang_getCursorType(c);
        if (pp_anon_member(c) && clang_getCanonicalType(ct).kind == CXType_Record) {
            if (pp_is_union(ct))
                pp_anon_union_row(ty, owner, path, clang_getCanonicalType(ct), c);
            else
                pp_record_fields(ty, owner, path, clang_getCanonicalType(ct), 1);
            continue;
        }
        char *name = pp_cxstring(clang_getCursorSpelling(c));
        char *p = !*name || pp_anon_member(c) ? pp_strdup(path) : pp_member_path(path, c);
        pp_fields(ty, owner, p, ct, c);
        free(p);
        free(name);
    }
    free(k.v);
}

/* The id of record type elem, the element of member `path` (of type t)
 * of owner: an unnamed struct (`struct { ... } m[N];`) is spelled by the
 * type of the member's element, __typeof__(((OWNER *)0)->m[0]). */
static const char *pp_member_record_id(CXType t, CXType elem, CXCursor where, const char *owner,
                                       const char *path)
{
    if (ctx.typeof_hint || !*path)
        return pp_record_id(elem, where);
    pp_buf hint = {0};
    pp_printf(&hint, "__typeof__(((%s *)0)->%s", owner, path);
    for (CXType c = clang_getCanonicalType(t); c.kind == CXType_ConstantArray;
         c = clang_getCanonicalType(clang_getArrayElementType(c)))
        pp_puts(&hint, "[0]");
    pp_puts(&hint, ")");
    ctx.typeof_hint = hint.p;
    const char *id = pp_record_id(elem, where);
    ctx.typeof_hint = NULL;
    free(hint.p);
    return id;
}

/* ===================================================================
 * Flexible array members (`T m[]` last in a struct): the runtime's
 * trailing array, a field row of count 0; an object of such a type
 * counts its size in bytes (heap, statics)
 * =================================================================== */

int pp_is_flex(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record || pp_is_union(c))
        return 0;
    pp_kids k = {.magic = PP_MAGIC_KIDS};
    clang_Type_visitFields(c, pp_collect_field_cb, &k);
    int flex = k.n && clang_getCanonicalType(clang_getCursorType(k.v[k.n - 1])).kind ==
                          CXType_IncompleteArray;
    free(k.v);
    return flex;
}

static enum CXVisitorResult pp_last_member_cb(CXCursor c, CXClientData d)
{
    *(CXCursor *)d = c;
    return CXVisit_Continue;
}

/* Whether member m is the last of the struct ty describes. */
static int pp_last_member(const pp_type *ty, CXCursor m)
{
    CXType rec = clang_getCursorType(clang_getCursorSemanticParent(m));
    if (!clang_equalTypes(clang_getCanonicalType(rec), clang_getCanonicalType(ty->type)))
        return 0;
    CXCursor last = clang_getNullCursor();
    clang_Type_visitFields(rec, pp_last_member_cb, &last);
    return !clang_Cursor_isNull(last) && clang_equalCursors(last, m);
}

const char *pp_trailing_id(CXType t, CXCursor where)
{
    const char *base = pp_record_id(t, where);
    unsigned b = 0;
    while (strcmp(ctx.types[b].idname, base))
        b++;
    char *key = pp_fmt("%s (trailing)", ctx.types[b].key);
    for (unsigned i = 0; i < ctx.ntypes; i++)
        if (ctx.types[i].fn < 0 && !strcmp(ctx.types[i].key, key)) {
            free(key);
            return ctx.types[i].idname;
        }
    PP_PUSH(ctx.types, ctx.ntypes, ctx.captypes);
    pp_type *ty = &ctx.types[ctx.ntypes++];
    *ty = ctx.types[b];
    memset(&ty->fields, 0, sizeof ty->fields);
    ty->nfields = 0;
    ty->key = key;
    ty->spell = pp_strdup(ctx.types[b].spell);
    char *id = pp_ident(ty->key);
    ty->idname = pp_fmt("LEV__T_%s_%u", id, ctx.ntypes);
    free(id);
    ty->trailing = 1;
    return ty->idname;
}

/* The row of flexible array member `path` of type t (T m[]): of count 0,
 * its element's kind, in the description of its own struct type. A
 * local of that type in a frame has no room for elements: no row. In a
 * struct nested in another (GNU C), an error: the outer struct's objects
 * could hold elements that no row would describe. */
static void pp_flex_row(pp_type *ty, const char *owner, const char *path, CXType t, CXCursor where)
{
    if (ty->fn >= 0)
        return;
    if (strchr(path, '.')) {
        pp_error(PP_LOC(where),
                 "'%s': a flexible array member of a struct nested in another cannot be "
                 "described",
                 path);
        return;
    }
    CXType elem = clang_getArrayElementType(clang_getCanonicalType(t));
    while (clang_getCanonicalType(elem).kind == CXType_ConstantArray)
        elem = clang_getArrayElementType(clang_getCanonicalType(elem));
    CXType c = clang_getCanonicalType(elem);
    long long width, n;
    const char *kind = pp_items(c, &width, &n) ? pp_width_kind(width) : NULL, *id = "0";
    CXCursor member;
    if (c.kind == CXType_Pointer) {
        kind = pp_is_fn_type(clang_getPointeeType(c)) ? "LEV_K_FNPTR" : "LEV_K_PTR";
    } else if (c.kind == CXType_Record && pp_is_union(c) &&
               !(pp_has_pointer(c) && pp_overlay(c, &member))) {
        kind = pp_has_pointer(c) ? NULL : "LEV_K_B1";
    } else if (c.kind == CXType_Record) {
        kind = "LEV_K_REC";
        long ti = pp_type_index(ty);
        id = pp_record_id(elem, where);
        ty = pp_type_at(ti, ty);
    }
    if (!kind) {
        char *sp = pp_cxstring(clang_getTypeSpelling(elem));
        pp_error(PP_LOC(where), "'%s': elements of type '%s' cannot be described for capture", path,
                 sp);
        free(sp);
        return;
    }
    pp_field_row(ty, owner, path, kind, 0, id);
}

void pp_field_row(pp_type *ty, const char *owner, const char *path, const char *kind,
                  long long count, const char *type)
{
    assert(pp_type_index(ty) >= 0); /* not a copy that ctx.types left */
    pp_printf(&ty->fields, "    {\"%s\", offsetof(%s, %s), %s, %lld, %s},\n", path, owner, path,
              kind, count, type);
    ty->nfields++;
}

void pp_fields(pp_type *ty, const char *owner, const char *path, CXType t, CXCursor where)
{
    CXType c = clang_getCanonicalType(t);
    if (ty->trailing && c.kind == CXType_ConstantArray && pp_last_member(ty, where)) {
        pp_flex_row(ty, owner, path, t, where);
        return;
    }
    long long count = 1;
    CXType elem = t;
    int array = c.kind == CXType_ConstantArray; /* even of one element: no member path */
    while (c.kind == CXType_ConstantArray) {
        count *= clang_getArraySize(c);
        elem = clang_getArrayElementType(pp_desugar(elem));
        c = clang_getCanonicalType(elem);
    }
    if (c.kind == CXType_IncompleteArray) {
        pp_flex_row(ty, owner, path, t, where);
        return;
    }
    if (c.kind == CXType_VariableArray) {
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
        CXCursor member;
        if (pp_is_union(c) && pp_has_pointer(c) && pp_overlay(c, &member)) {
            if (count == 1 && !array && *path) {
                pp_overlay_rows(ty, owner, path, c, member);
                return;
            }
            long ti = pp_type_index(ty);
            const char *id = pp_record_id(elem, where);
            pp_field_row(pp_type_at(ti, ty), owner, path, "LEV_K_REC", count, id);
            return;
        }
        if (pp_is_union(c) && pp_has_pointer(c) && count == 1 && !array && *path &&
            pp_kind(where) == CXCursor_FieldDecl) {
            long ti = pp_type_index(ty);
            const char *id = pp_tagged_union(where);
            if (id)
                pp_field_row(pp_type_at(ti, ty), owner, path, "LEV_K_TAGGED", 1, id);
            return;
        }
        if (pp_is_union(c)) {
            if (pp_has_pointer(c)) {
                pp_error(PP_LOC(where),
                         "'%s' is a union that may hold a pointer: it cannot be captured (only "
                         "a union whose one member with pointers is the only member the program "
                         "names can)",
                         path);
                return;
            }
            pp_field_row(ty, owner, path, "LEV_K_B1", count * clang_Type_getSizeOf(c), "0");
            return;
        }
        if (count == 1 && !array && *path) {
            pp_record_fields(ty, owner, path, c, 0);
            return;
        }
        long ti = pp_type_index(ty);
        const char *id = pp_member_record_id(t, elem, where, owner, path);
        pp_field_row(pp_type_at(ti, ty), owner, path, "LEV_K_REC", count, id);
        return;
    }
    long long width, n;
    if (!pp_items(c, &width, &n)) {
        char *sp = pp_cxstring(clang_getTypeSpelling(t));
        pp_error(PP_LOC(where), "'%s' of type '%s' cannot be described for capture", path, sp);
        free(sp);
        return;
    }
    pp_field_row(ty, owner, path, pp_width_kind(width), count * n, "0");
}

/* ===================================================================
 * Struct and union types of locals, which move to file scope with their
 * frames (as `struct S {...} s;` does): unnamed ones get a tag, and a tag
 * that another definition of the input also uses gets another name
 * =================================================================== */

typedef struct pp_tag_edit {
    unsigned at, del; /* replace [at, at + del) */
    char *text;
} pp_tag_edit;

typedef struct pp_local_tags {
    unsigned magic; /* PP_MAGIC_UNNAMED */
    const pp_file *f;
    pp_tag_edit *v;
    unsigned n, cap;
    int in_body;
    CXCursor find; /* pp_tag_ref_cb: the local definition */
    char *name;
    int ok; /* every reference can be renamed */
    unsigned seq;
} pp_local_tags;

static void pp_tag_edit_add(pp_local_tags *lt, unsigned at, unsigned del, char *text)
{
    PP_PUSH(lt->v, lt->n, lt->cap);
    lt->v[lt->n++] = (pp_tag_edit){at, del, text};
}

static int pp_is_record_kind(enum CXCursorKind k)
{
    return k == CXCursor_StructDecl || k == CXCursor_UnionDecl;
}

/* Where `name` is written at the location of cursor c in f (not in a
 * macro), or UINT_MAX. */
static unsigned pp_name_at(const pp_file *f, CXCursor c, const char *name)
{
    CXFile sf;
    unsigned so;
    CXSourceLocation l = clang_getCursorLocation(c);
    clang_getSpellingLocation(l, &sf, NULL, NULL, &so);
    size_t n = strlen(name);
    if (!sf || !clang_File_isEqual(sf, f->cxf) || pp_off(l) != so || so + n > f->len ||
        memcmp(f->text + so, name, n))
        return UINT_MAX;
    return so;
}

/* The references to lt->find, renamed (lt->ok: all could be). */
static enum CXChildVisitResult pp_tag_ref_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_local_tags *lt = pp_visit_state(d, PP_MAGIC_UNNAMED);
    if (pp_kind(c) == CXCursor_TypeRef &&
        clang_equalCursors(clang_getCursorReferenced(c), lt->find)) {
        unsigned at = pp_name_at(lt->f, c, lt->name);
        if (at == UINT_MAX)
            lt->ok = 0;
        else
            pp_tag_edit_add(lt, at, (unsigned)strlen(lt->name), NULL);
    }
    return CXChildVisit_Recurse;
}

/* A local definition `rec` whose tag another definition uses: the tag and
 * every reference to it become NAME__localK (none if one cannot be). */
static void pp_rename_tag(pp_local_tags *lt, CXCursor rec, unsigned k)
{
    lt->find = rec;
    lt->name = pp_cxstring(clang_getCursorSpelling(rec));
    CXCursor tu = clang_getTranslationUnitCursor(lt->f->tu);
    int other = !clang_Cursor_isNull(pp_tag_namesake(lt->f->tu, rec));
    unsigned at = other ? pp_name_at(lt->f, rec, lt->name) : UINT_MAX;
    if (at != UINT_MAX) {
        unsigned first = lt->n;
        lt->ok = 1;
        pp_tag_edit_add(lt, at, (unsigned)strlen(lt->name), NULL);
        clang_visitChildren(tu, pp_tag_ref_cb, lt);
        for (unsigned i = first; i < lt->n; i++)
            lt->v[i].text = lt->ok ? pp_fmt("%s__local%u", lt->name, k) : NULL;
        if (!lt->ok)
            lt->n = first; /* refused by name later (pp_tag_clashes) */
    }
    free(lt->name);
}

static enum CXChildVisitResult pp_local_tags_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_local_tags *lt = pp_visit_state(d, PP_MAGIC_UNNAMED);
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_FunctionDecl) {
        if (clang_isCursorDefinition(c) && pp_in_input(c)) {
            lt->in_body = 1;
            clang_visitChildren(c, pp_local_tags_cb, lt);
            lt->in_body = 0;
        }
        return CXChildVisit_Continue;
    }
    if (!lt->in_body)
        return CXChildVisit_Continue;
    if (pp_is_record_kind(k) && clang_isCursorDefinition(c) && !pp_in_macro(c) &&
        pp_kind(parent) == CXCursor_DeclStmt) {
        char *sp = pp_cxstring(clang_getTypeSpelling(clang_getCursorType(c)));
        int unnamed = pp_bad_spelling(sp);
        free(sp);
        const char *kw = k == CXCursor_StructDecl ? "struct" : "union";
        size_t n = strlen(kw);
        unsigned b = pp_begin(c);
        if (!unnamed)
            pp_rename_tag(lt, c, lt->seq++);
        else if (b + n <= lt->f->len && !memcmp(lt->f->text + b, kw, n))
            pp_tag_edit_add(lt, b + (unsigned)n, 0, pp_fmt(" lev__unnamed%u", lt->seq++));
    }
    return CXChildVisit_Recurse;
}

static int pp_tag_edit_cmp(const void *a, const void *b)
{
    const pp_tag_edit *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* f's text with a tag (lev__unnamedN) given to every unnamed struct or
 * union type defined in a declaration of a function body (`struct { int
 * a; char *p; } x;`), and every such local type whose tag another
 * definition of the input uses renamed (S__localN, with its references),
 * in *text (malloc'd; 1), or 0 when there is nothing to change. Neither
 * changes a meaning: a type no other declaration names is compatible
 * with nothing else, and a renamed tag has the same references; with
 * them, the types move to file scope with the frames without colliding. */
int pp_name_local_tags(const pp_file *f, char **text, unsigned *len)
{
    pp_local_tags lt = {.magic = PP_MAGIC_UNNAMED, .f = f};
    clang_visitChildren(clang_getTranslationUnitCursor(f->tu), pp_local_tags_cb, &lt);
    if (!lt.n)
        return 0;
    qsort(lt.v, lt.n, sizeof *lt.v, pp_tag_edit_cmp);
    pp_buf o = {0};
    unsigned cur = 0;
    for (unsigned i = 0; i < lt.n; i++) {
        if (lt.v[i].at < cur) { /* the same place twice: once */
            free(lt.v[i].text);
            continue;
        }
        pp_putn(&o, f->text + cur, lt.v[i].at - cur);
        pp_puts(&o, lt.v[i].text);
        cur = lt.v[i].at + lt.v[i].del;
        free(lt.v[i].text);
    }
    pp_putn(&o, f->text + cur, f->len - cur);
    free(lt.v);
    *text = o.p;
    *len = (unsigned)o.n;
    return 1;
}
