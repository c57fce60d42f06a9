/* pp_intptr.c - the integer-pointer analysis: refuses integers that may
 * hold a pointer across a safe point, pointers converted to integers that
 * are stored in memory, and numbers computed from an address (a hash or
 * a bucket of a pointer) that outlive the moment they were computed,
 * following conversions passed to parameters into the callees and
 * returned from them back to the callers, through every function of the
 * inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Integers that hold pointers: a capture relocates pointers, which it
 * finds by type; a pointer converted to an integer and kept there across
 * a safe point would come back pointing into the old process
 * =================================================================== */

/* Whether UnexposedExpr children k are those of GNU `a ?: b`: a, the two
 * opaque copies of a that clang keeps (same extent), b. */
int pp_is_elvis(const pp_kids *k)
{
    if (k->n != 4)
        return 0;
    CXSourceRange r = clang_getCursorExtent(k->v[0]);
    return clang_equalRanges(r, clang_getCursorExtent(k->v[1])) &&
           clang_equalRanges(r, clang_getCursorExtent(k->v[2]));
}

/* How much of an address an integer may keep (pp_addr_level): nothing;
 * its low bits (`& mask`, `% n`: an alignment, or a bucket); another
 * number computed from it (a hash); its bits. */
enum { PP_ADDR_NONE, PP_ADDR_LOW, PP_ADDR_DERIVED, PP_ADDR_BITS };

/* Whether t is an integer type (not _Bool, not an enum). */
static int pp_int_type(CXType t)
{
    enum CXTypeKind k = clang_getCanonicalType(t).kind;
    return (k >= CXType_Char_U && k <= CXType_UInt128) ||
           (k >= CXType_Char_S && k <= CXType_Int128);
}

/* Whether t is an integer type wide enough for a pointer's bits. */
static int pp_wide_int(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    return pp_int_type(c) && clang_Type_getSizeOf(c) >= (long long)sizeof(void *);
}

static int pp_holds_int(CXType t);

static enum CXVisitorResult pp_int_field_cb(CXCursor c, CXClientData d)
{
    int *level = pp_visit_flag(d), l = pp_holds_int(clang_getCursorType(c));
    if (l > *level)
        *level = l;
    return *level == PP_ADDR_BITS ? CXVisit_Break : CXVisit_Continue;
}

/* How much of an address a variable of type t may keep in an integer:
 * PP_ADDR_BITS for a wide integer, or an array or struct holding one;
 * PP_ADDR_DERIVED for a narrower one (a number computed from an
 * address); else PP_ADDR_NONE. */
static int pp_holds_int(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind == CXType_ConstantArray)
        return pp_holds_int(clang_getArrayElementType(c));
    if (c.kind == CXType_Record) {
        int level = PP_ADDR_NONE;
        clang_Type_visitFields(c, pp_int_field_cb, &level);
        return level;
    }
    return pp_wide_int(c) ? PP_ADDR_BITS : pp_int_type(c) ? PP_ADDR_DERIVED : PP_ADDR_NONE;
}

/* What may hold a pointer's bits at one point of a body, per variable of
 * the function: hold (the level of pp_addr_level, and the conversion it
 * came from), crossed (held at a resume point since it was last written,
 * and which). */
typedef struct pp_held_bits {
    unsigned char *hold, *crossed;
    CXCursor *conv, *at;
} pp_held_bits;

typedef struct pp_intptr_state {
    pp_fn *fn;
    int fi; /* index of fn */
    int cp; /* fn is checkpointable: it has resume points */
    unsigned n;
    CXCursor *decls;        /* the variables: parameters first, then locals */
    unsigned char *tracked; /* the most of an address it may hold (pp_holds_int) */
    unsigned char *taken, *done;
    pp_held_bits *sw; /* state entering the innermost switch */
    int report, changed;
} pp_intptr_state;

/* The parameters each function's definition declares ([fn]), for the
 * slots of pp_ip_params (the return value after them). */
static unsigned *pp_ip_nparams;

/* What the values passed to a parameter, or returned, may keep of an
 * address: the level (pp_addr_level) and the conversion seen. */
typedef struct pp_ip_slot {
    int level;
    CXCursor conv;
} pp_ip_slot;

/* [fn][i]: parameter i of fn; [fn][nparams]: what fn returns. */
static pp_ip_slot **pp_ip_params;

/* Raises slot *s to level l from conversion conv; 1: it rose. */
static int pp_ip_raise(pp_ip_slot *s, int l, CXCursor conv)
{
    if (l <= s->level)
        return 0;
    s->level = l;
    s->conv = conv;
    return 1;
}

static void pp_ip_index(void)
{
    pp_ip_nparams = pp_xrealloc(NULL, (ctx.nfns + 1) * sizeof *pp_ip_nparams);
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        int na = fn->file >= 0 && !clang_Cursor_isNull(fn->def)
                     ? clang_Cursor_getNumArguments(fn->def)
                     : 0;
        pp_ip_nparams[i] = na > 0 ? (unsigned)na : 0;
    }
}

static pp_held_bits pp_held_bits_new(unsigned n)
{
    pp_held_bits s = {pp_xrealloc(NULL, n + 1), pp_xrealloc(NULL, n + 1),
                      pp_xrealloc(NULL, (n + 1) * sizeof(CXCursor)),
                      pp_xrealloc(NULL, (n + 1) * sizeof(CXCursor))};
    memset(s.hold, 0, n + 1);
    memset(s.crossed, 0, n + 1);
    for (unsigned i = 0; i <= n; i++)
        s.conv[i] = s.at[i] = clang_getNullCursor();
    return s;
}

static void pp_held_bits_copy(pp_held_bits *d, const pp_held_bits *s, unsigned n)
{
    memcpy(d->hold, s->hold, n);
    memcpy(d->crossed, s->crossed, n);
    memcpy(d->conv, s->conv, n * sizeof(CXCursor));
    memcpy(d->at, s->at, n * sizeof(CXCursor));
}

/* d = d joined with s (what holds on either path); 1: d changed. */
static int pp_held_bits_join(pp_held_bits *d, const pp_held_bits *s, unsigned n)
{
    int changed = 0;
    for (unsigned i = 0; i < n; i++) {
        if (s->hold[i] > d->hold[i]) {
            d->hold[i] = s->hold[i];
            d->conv[i] = s->conv[i];
            changed = 1;
        }
        if (s->crossed[i] && !d->crossed[i]) {
            d->crossed[i] = 1;
            d->at[i] = s->at[i];
            changed = 1;
        }
    }
    return changed;
}

static void pp_held_bits_free(pp_held_bits *s)
{
    free(s->hold);
    free(s->crossed);
    free(s->conv);
    free(s->at);
}

/* The index of variable decl in a's function, or -1. */
static int pp_ip_var(const pp_intptr_state *a, CXCursor decl)
{
    for (unsigned i = 0; i < a->n; i++)
        if (clang_equalCursors(a->decls[i], decl))
            return (int)i;
    return -1;
}

/* The tracked variable e (stripped) names, or -1. */
static int pp_intptr_var(pp_intptr_state *a, CXCursor e)
{
    e = pp_strip(e);
    if (pp_kind(e) != CXCursor_DeclRefExpr)
        return -1;
    int vi = pp_ip_var(a, clang_getCursorReferenced(e));
    return vi >= 0 && a->tracked[vi] ? vi : -1;
}

/* Whether integer constant e keeps bits of a pointer above its low 12
 * (a mask such as ~7 does; 0xfff, a hash table's size, do not). */
static int pp_high_mask(CXCursor e)
{
    unsigned long long v;
    return pp_const_value(e, &v) && (v >> 12) != 0;
}

/* Whether `x & e` or `x % e` keeps only bits of x below the alignment
 * every moved object keeps (LEV_FRAME_ALIGN, 16: frames, heap objects
 * and slab strides are aligned so; statics keep their page offset), so
 * that it is the same wherever the object is: alignment tests, and
 * alignments of at most 16 bytes. e is a constant, or an expression whose
 * every value is known (pp_values.c: `align - 1` where every call passes
 * `align` 4 or 8). */
static int pp_align_bits(const pp_intptr_state *a, CXCursor e, int rem)
{
    pp_vals vals;
    if (!pp_values(a->fi, e, &vals))
        return 0;
    for (unsigned i = 0; i < vals.n; i++)
        if (rem ? !vals.v[i] || vals.v[i] > 16 || 16 % vals.v[i] : vals.v[i] >= 16)
            return 0;
    return 1;
}

/* Whether e, a mask (rem: a modulus), is one of an alignment: every value
 * it may take is a power of two less one (a power of two), or they are not
 * known (`align - 1`, a parameter). */
static int pp_align_shape(const pp_intptr_state *a, CXCursor e, int rem)
{
    pp_vals vals;
    if (!pp_values(a->fi, e, &vals))
        return !rem;
    for (unsigned i = 0; i < vals.n; i++) {
        unsigned long long v = vals.v[i] + (rem ? 0 : 1);
        if (!v || (v & (v - 1)))
            return 0;
    }
    return 1;
}

/* The level of x joined with one of y. */
static int pp_level_max(int x, int y) { return x > y ? x : y; }

static int pp_addr_level(pp_intptr_state *a, pp_held_bits *st, CXCursor e, CXCursor *conv);

/* The level of binary operator e (kids kk) of kind op; see pp_addr_level. */
static int pp_addr_binop(pp_intptr_state *a, pp_held_bits *st, const pp_kids *kk,
                         enum CXBinaryOperatorKind op, CXCursor *conv)
{
    CXCursor c2 = clang_getNullCursor();
    if (op == CXBinaryOperator_Assign || op == CXBinaryOperator_Comma)
        return pp_addr_level(a, st, kk->v[1], conv);
    int and = op == CXBinaryOperator_And || op == CXBinaryOperator_AndAssign;
    int rem = op == CXBinaryOperator_Rem || op == CXBinaryOperator_RemAssign;
    int l0 = pp_addr_level(a, st, kk->v[0], conv);
    int l1 = pp_addr_level(a, st, kk->v[1], l0 ? &c2 : conv);
    int r = pp_level_max(l0, l1);
    if (r && ((and&&(pp_align_bits(a, kk->v[1], 0) || pp_align_bits(a, kk->v[0], 0))) ||
              (rem && pp_align_bits(a, kk->v[1], 1))))
        return PP_ADDR_NONE;
    switch (op) {
    case CXBinaryOperator_Add:
    case CXBinaryOperator_AddAssign:
    case CXBinaryOperator_Or:
    case CXBinaryOperator_OrAssign:
    case CXBinaryOperator_Xor:
    case CXBinaryOperator_XorAssign:
        return r;
    case CXBinaryOperator_Sub:
    case CXBinaryOperator_SubAssign:
        if (l0 == PP_ADDR_BITS && l1 == PP_ADDR_BITS)
            return PP_ADDR_NONE; /* p - q: an offset */
        if (l0 == PP_ADDR_BITS && l1 == PP_ADDR_LOW)
            return PP_ADDR_BITS; /* p - (p & 63): p aligned down */
        return r == PP_ADDR_BITS && l0 && l1 ? PP_ADDR_DERIVED : r;
    case CXBinaryOperator_And:
    case CXBinaryOperator_AndAssign:
        if (r == PP_ADDR_BITS && !pp_high_mask(l0 == PP_ADDR_BITS ? kk->v[1] : kk->v[0]))
            /* low bits only: an alignment (or a bucket), else a hash */
            return pp_align_shape(a, l0 == PP_ADDR_BITS ? kk->v[1] : kk->v[0], 0) ? PP_ADDR_LOW
                                                                                  : PP_ADDR_DERIVED;
        return r;
    case CXBinaryOperator_Rem:
    case CXBinaryOperator_RemAssign:
        if (r == PP_ADDR_DERIVED || !l0 || !pp_align_shape(a, kk->v[1], 1))
            return r ? PP_ADDR_DERIVED : PP_ADDR_NONE;
        return r ? PP_ADDR_LOW : PP_ADDR_NONE;
    case CXBinaryOperator_Mul:
    case CXBinaryOperator_MulAssign:
    case CXBinaryOperator_Div:
    case CXBinaryOperator_DivAssign:
    case CXBinaryOperator_Shl:
    case CXBinaryOperator_ShlAssign:
    case CXBinaryOperator_Shr:
    case CXBinaryOperator_ShrAssign:
        return r ? PP_ADDR_DERIVED : PP_ADDR_NONE;
    default: /* comparisons and logical operators: a truth value */
        return PP_ADDR_NONE;
    }
}

/* How much of an address the value of integer expression e may keep (see
 * preproc/README.md): PP_ADDR_BITS for a pointer's bits (a cast of a
 * pointer to a wide integer, a variable that holds one, and what keeps
 * them: + and - of one such operand, |, ^, ~, unary -, & with a constant
 * that keeps the high bits, ?:, comma and assignment); PP_ADDR_LOW for its
 * low bits (a low mask, %: an alignment or a bucket) and what + - & | ^
 * make of them; PP_ADDR_DERIVED for another number computed from them
 * that is not the address (a narrowing cast, *, /, shifts: a hash); both
 * change when the object moves; PP_ADDR_NONE for the rest, alignment
 * tests and alignments (& or % by 16 or less) and truth values included.
 * *conv: the conversion. */
static int pp_addr_level(pp_intptr_state *a, pp_held_bits *st, CXCursor e, CXCursor *conv)
{
    e = pp_strip(e);
    CXType type = clang_getCanonicalType(clang_getCursorType(e));
    if (!pp_int_type(type))
        return PP_ADDR_NONE;
    int cap = pp_wide_int(type) ? PP_ADDR_BITS : PP_ADDR_DERIVED;
    enum CXCursorKind k = pp_kind(e);
    pp_kids kk = pp_children(e);
    int r = PP_ADDR_NONE;
    if (k == CXCursor_CStyleCastExpr && kk.n) {
        CXCursor op = kk.v[kk.n - 1];
        if (clang_getCanonicalType(clang_getCursorType(op)).kind == CXType_Pointer) {
            *conv = e;
            r = PP_ADDR_BITS;
        } else {
            r = pp_addr_level(a, st, op, conv);
        }
    } else if (k == CXCursor_DeclRefExpr) {
        int vi = pp_intptr_var(a, e);
        if (vi >= 0 && st->hold[vi]) {
            *conv = st->conv[vi];
            r = st->hold[vi];
        }
    } else if ((k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) &&
               kk.n == 2) {
        r = pp_addr_binop(a, st, &kk, clang_getCursorBinaryOperatorKind(e), conv);
    } else if (k == CXCursor_UnaryOperator && kk.n == 1) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(e);
        if (op == CXUnaryOperator_Plus || op == CXUnaryOperator_Minus ||
            op == CXUnaryOperator_Not || op == CXUnaryOperator_PostInc ||
            op == CXUnaryOperator_PostDec || op == CXUnaryOperator_PreInc ||
            op == CXUnaryOperator_PreDec)
            r = pp_addr_level(a, st, kk.v[0], conv);
    } else if (k == CXCursor_CallExpr) {
        int g = pp_fn_called(e);
        const pp_ip_slot *ret = g >= 0 ? &pp_ip_params[g][pp_ip_nparams[g]] : NULL;
        if (ret && ret->level) {
            *conv = ret->conv;
            r = ret->level;
        }
    } else if (k == CXCursor_ConditionalOperator && kk.n == 3) {
        CXCursor c2 = clang_getNullCursor();
        int l1 = pp_addr_level(a, st, kk.v[1], conv);
        r = pp_level_max(l1, pp_addr_level(a, st, kk.v[2], l1 ? &c2 : conv));
    } else if (k == CXCursor_UnexposedExpr && pp_is_elvis(&kk)) {
        CXCursor c2 = clang_getNullCursor();
        int l0 = pp_addr_level(a, st, kk.v[0], conv);
        r = pp_level_max(l0, pp_addr_level(a, st, kk.v[3], l0 ? &c2 : conv));
    }
    free(kk.v);
    return r < cap ? r : cap;
}

/* The line of cursor c, for messages. */
static unsigned pp_line(CXCursor c)
{
    unsigned line = 0;
    clang_getExpansionLocation(PP_LOC(c), NULL, &line, NULL, NULL);
    return line;
}

/* The places already reported (a loop's body is walked more than once). */
typedef struct pp_ip_place {
    CXFile file;
    unsigned offset;
} pp_ip_place;
static struct {
    pp_ip_place *v;
    unsigned n, cap;
} pp_ip_seen;

/* 1 the first time it is asked for the place of cursor e, else 0. */
static int pp_ip_once(CXCursor e)
{
    CXFile file;
    unsigned offset;
    clang_getExpansionLocation(PP_LOC(e), &file, NULL, NULL, &offset);
    for (unsigned i = 0; i < pp_ip_seen.n; i++)
        if (pp_ip_seen.v[i].offset == offset && clang_File_isEqual(pp_ip_seen.v[i].file, file))
            return 0;
    PP_PUSH(pp_ip_seen.v, pp_ip_seen.n, pp_ip_seen.cap);
    pp_ip_seen.v[pp_ip_seen.n].file = file;
    pp_ip_seen.v[pp_ip_seen.n++].offset = offset;
    return 1;
}

/* What happens to a number computed from an address of level `level`
 * (pp_addr_level) after a move, and what to do instead: the tail of the
 * messages that refuse one. index: it selects an element. */
static const char *pp_addr_why(int level, int index)
{
    if (level == PP_ADDR_LOW && !index)
        return "a VT's objects keep only their address modulo 16 when it moves, so an "
               "alignment to more than 16 bytes computed from it (the bytes to the next "
               "multiple of a power of two, as a workspace is aligned) may not hold after a "
               "move, nor a bucket chosen by it; align to at most 16 bytes (a mask below 16 or "
               "a modulus dividing 16: a constant, or a parameter that every call passes such "
               "a constant), or count from the start of the object";
    return "a VT's objects keep only their address modulo 16 when it moves, so a table hashed "
           "or ordered by address would no longer match its contents; hash or order by "
           "something the program stores in the object instead";
}

/* Reports at e a number computed from the address converted at conv that
 * outlives its computation (what: "is stored in memory"...), whose level
 * is `level`. */
static void pp_addr_derived_error(pp_intptr_state *a, CXCursor e, CXCursor conv, const char *what,
                                  int level)
{
    if (!pp_ip_once(e))
        return;
    int index = !strcmp(what, "selects an element");
    pp_error(PP_LOC(e),
             "%s (converted on line %u) %s in function '%s': it depends on where the object is: "
             "%s",
             level == PP_ADDR_LOW ? "a number computed from the low bits of an address"
                                  : "a number computed from an address",
             pp_line(conv), what, a->fn->name, pp_addr_why(level, index));
}

/* Whether variable v is a file-scope variable or a static local that is
 * not const. */
static int pp_static_var(CXCursor v)
{
    int file_scope = pp_kind(clang_getCursorSemanticParent(v)) == CXCursor_TranslationUnit;
    return (file_scope || clang_Cursor_getStorageClass(v) == CX_SC_Static) &&
           !clang_isConstQualifiedType(clang_getCursorType(v));
}

static void pp_intptr_report(pp_intptr_state *a, int vi, int level, CXCursor conv, const char *why,
                             unsigned line)
{
    if (!a->report || a->done[vi])
        return;
    a->done[vi] = 1;
    char *name = pp_cxstring(clang_getCursorSpelling(a->decls[vi]));
    if (level == PP_ADDR_BITS)
        pp_error(PP_LOC(conv),
                 "'%s' of checkpointable function '%s' may hold this pointer converted to an "
                 "integer at the safe point, checkpointable call or loop poll of line %u, %s: "
                 "an image cannot relocate a pointer hidden in an integer; keep it as a pointer",
                 name, a->fn->name, line, why);
    else
        pp_error(PP_LOC(conv),
                 "'%s' of checkpointable function '%s' may hold a number computed from this "
                 "address at the safe point, checkpointable call or loop poll of line %u, %s: "
                 "the object may be elsewhere after it (a VT moves), so the number would no "
                 "longer match its address: %s",
                 name, a->fn->name, line, why, pp_addr_why(level, 0));
    free(name);
}

/* A resume point (safe point, call site, poll) at cursor c. */
static void pp_intptr_resume(pp_intptr_state *a, pp_held_bits *st, CXCursor c)
{
    if (!a->cp)
        return;
    for (unsigned i = 0; i < a->n; i++)
        if (st->hold[i]) {
            if (!st->crossed[i])
                st->at[i] = c;
            st->crossed[i] = 1;
            if (a->taken[i])
                pp_intptr_report(a, (int)i, st->hold[i], st->conv[i], "and its address is taken",
                                 pp_line(c));
        }
}

/* Callee index of a site call c (a safe point: -2), else -1. */
static int pp_intptr_site(CXCursor c)
{
    if (pp_kind(c) != CXCursor_CallExpr)
        return -1;
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) != CXCursor_FunctionDecl)
        return -1;
    char *name = pp_cxstring(clang_getCursorSpelling(ref));
    char *usr = pp_fn_usr(ref);
    int g = pp_fn_find(usr);
    int r = pp_safepoint_kind(name) ? -2 : g >= 0 && ctx.fns[g].cp ? g : -1;
    free(name);
    free(usr);
    return r;
}

static void pp_intptr_stmt(pp_intptr_state *a, pp_held_bits *st, CXCursor c);
static void pp_intptr_expr(pp_intptr_state *a, pp_held_bits *st, CXCursor e);

/* Refuses a number computed from an address that selects an element of
 * an array or offsets a pointer (e, with kids kk): where an object is
 * placed then depends on an address (a hash table keyed by pointers). */
static void pp_addr_index(pp_intptr_state *a, pp_held_bits *st, CXCursor e, const pp_kids *kk)
{
    enum CXCursorKind k = pp_kind(e);
    int offsets = k == CXCursor_ArraySubscriptExpr;
    if ((k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) && kk->n == 2) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(e);
        offsets = (op == CXBinaryOperator_Add || op == CXBinaryOperator_Sub ||
                   op == CXBinaryOperator_AddAssign || op == CXBinaryOperator_SubAssign) &&
                  clang_getCanonicalType(clang_getCursorType(e)).kind == CXType_Pointer;
    }
    if (!offsets || kk->n != 2)
        return;
    for (unsigned i = 0; i < 2; i++) {
        CXCursor conv = clang_getNullCursor();
        int level = pp_addr_level(a, st, kk->v[i], &conv);
        if (level != PP_ADDR_NONE) {
            pp_addr_derived_error(a, e, conv,
                                  k == CXCursor_ArraySubscriptExpr ? "selects an element"
                                                                   : "offsets a pointer",
                                  level);
            return;
        }
    }
}

/* Reads of expression e outside its sites (which pp_intptr_expr handles): a
 * read of a variable that crossed a resume point holding a pointer is
 * the error. skip: a variable written, not read, by an assignment. */
static void pp_intptr_reads(pp_intptr_state *a, pp_held_bits *st, CXCursor e, CXCursor skip)
{
    enum CXCursorKind k = pp_kind(e);
    if (k == CXCursor_UnaryExpr || k == CXCursor_StmtExpr || pp_intptr_site(e) != -1)
        return;
    if (k == CXCursor_DeclRefExpr) {
        int vi = pp_intptr_var(a, e);
        if (vi >= 0 && st->crossed[vi] &&
            (clang_Cursor_isNull(skip) || !clang_equalCursors(skip, a->decls[vi])))
            pp_intptr_report(a, vi, st->hold[vi], st->conv[vi], "and is used after it",
                             pp_line(st->at[vi]));
        return;
    }
    pp_kids kk = pp_children(e);
    if (a->report)
        pp_addr_index(a, st, e, &kk);
    if (k == CXCursor_BinaryOperator && kk.n == 2 &&
        clang_getCursorBinaryOperatorKind(e) == CXBinaryOperator_Assign) {
        pp_intptr_reads(a, st, kk.v[0], pp_write_var(kk.v[0]));
        pp_intptr_reads(a, st, kk.v[1], clang_getNullCursor());
    } else {
        for (unsigned i = 0; i < kk.n; i++)
            pp_intptr_reads(a, st, kk.v[i], skip);
    }
    free(kk.v);
}

/* Writes of expression e outside its sites: a variable assigned a value
 * that may be a pointer's bits holds one; assigned another value, it
 * holds none (a write of part of it keeps what it held). */
static void pp_intptr_writes(pp_intptr_state *a, pp_held_bits *st, CXCursor e)
{
    enum CXCursorKind k = pp_kind(e);
    if (k == CXCursor_UnaryExpr || k == CXCursor_StmtExpr || pp_intptr_site(e) != -1)
        return;
    pp_kids kk = pp_children(e);
    for (unsigned i = 0; i < kk.n; i++)
        pp_intptr_writes(a, st, kk.v[i]);
    int g = pp_fn_called(e);
    if (g >= 0) { /* a call that is no resume point: its parameters */
        unsigned nargs = (unsigned)clang_Cursor_getNumArguments(e);
        for (unsigned i = 0; i < nargs && i < pp_ip_nparams[g]; i++) {
            CXCursor conv = clang_getNullCursor();
            int l = pp_addr_level(a, st, clang_Cursor_getArgument(e, i), &conv);
            a->changed |= pp_ip_raise(&pp_ip_params[g][i], l, conv);
        }
    }
    if (pp_writes_operand(e) && kk.n >= 1 &&
        !(k == CXCursor_UnaryOperator &&
          clang_getCursorUnaryOperatorKind(e) == CXUnaryOperator_AddrOf)) {
        CXCursor v = pp_write_var(kk.v[0]);
        CXCursor conv = clang_getNullCursor();
        int level = pp_addr_level(a, st, e, &conv);
        int carry = level == PP_ADDR_BITS;
        int vi = clang_Cursor_isNull(v) ? -1 : pp_ip_var(a, v);
        if (level && clang_Cursor_isNull(v) && a->report && pp_kind(e) != CXCursor_UnaryOperator) {
            if (carry)
                pp_error(PP_LOC(e),
                         "a pointer converted to an integer (line %u) is stored in memory in "
                         "function '%s': the collector and an image see only an integer, so what "
                         "it points to may be freed or left behind by a move; keep it as a "
                         "pointer",
                         pp_line(conv), a->fn->name);
            else
                pp_addr_derived_error(a, e, conv, "is stored in memory", level);
        } else if (vi >= 0 && a->tracked[vi]) {
            int whole = pp_kind(pp_strip(kk.v[0])) == CXCursor_DeclRefExpr;
            int l = level < a->tracked[vi] ? level : a->tracked[vi];
            if (whole || l) {
                st->hold[vi] = (unsigned char)(whole ? l : pp_level_max(l, st->hold[vi]));
                st->conv[vi] = l ? conv : st->conv[vi];
            }
            if (whole)
                st->crossed[vi] = 0;
        } else if (vi < 0 && !clang_Cursor_isNull(v) && level && !carry && a->report &&
                   pp_static_var(v)) {
            pp_addr_derived_error(a, e, conv, "is stored in a static variable", level);
        } else if (vi < 0 && !clang_Cursor_isNull(v) && carry && ctx.main_task && a->report) {
            int file_scope = pp_kind(clang_getCursorSemanticParent(v)) == CXCursor_TranslationUnit;
            enum CX_StorageClass sc = clang_Cursor_getStorageClass(v);
            if ((file_scope || sc == CX_SC_Static) &&
                !clang_isConstQualifiedType(clang_getCursorType(v))) {
                char *name = pp_cxstring(clang_getCursorSpelling(v));
                pp_error(PP_LOC(conv),
                         "%s '%s' is assigned this pointer converted to an integer in "
                         "checkpointable function '%s' and travels with the image: an image "
                         "cannot relocate a pointer hidden in an integer; keep it as a pointer",
                         file_scope ? "file-scope variable" : "static local", name, a->fn->name);
                free(name);
            }
        }
    }
    free(kk.v);
}

/* The resume points of expression e in evaluation order (levpp runs the
 * sites of an expression before the rest of it): for each site, the reads
 * and writes of its arguments, then the site; a statement expression's
 * statements where it stands. */
static void pp_intptr_sites(pp_intptr_state *a, pp_held_bits *st, CXCursor e)
{
    enum CXCursorKind k = pp_kind(e);
    if (k == CXCursor_UnaryExpr)
        return;
    if (k == CXCursor_StmtExpr) {
        pp_kids kk = pp_children(e);
        for (unsigned i = 0; i < kk.n; i++)
            pp_intptr_stmt(a, st, kk.v[i]);
        free(kk.v);
        return;
    }
    pp_kids kk = pp_children(e);
    for (unsigned i = 0; i < kk.n; i++)
        pp_intptr_sites(a, st, kk.v[i]);
    int g = pp_intptr_site(e);
    if (g != -1) {
        int nargs = clang_Cursor_getNumArguments(e);
        for (int i = 0; i < nargs; i++) {
            CXCursor arg = clang_Cursor_getArgument(e, (unsigned)i);
            pp_intptr_reads(a, st, arg, clang_getNullCursor());
            pp_intptr_writes(a, st, arg);
            CXCursor conv = clang_getNullCursor();
            if (g >= 0 && (unsigned)i < ctx.fns[g].nparams && (unsigned)i < pp_ip_nparams[g]) {
                int l = pp_addr_level(a, st, arg, &conv);
                a->changed |= pp_ip_raise(&pp_ip_params[g][i], l, conv);
            }
        }
        pp_intptr_resume(a, st, e);
    }
    free(kk.v);
}

static void pp_intptr_expr(pp_intptr_state *a, pp_held_bits *st, CXCursor e)
{
    pp_intptr_sites(a, st, e);
    pp_intptr_reads(a, st, e, clang_getNullCursor());
    pp_intptr_writes(a, st, e);
}

/* A loop: head, then (cond, poll, body, inc) until the state at the head
 * settles; for a do-while the body comes before the condition. */
static void pp_intptr_loop(pp_intptr_state *a, pp_held_bits *st, CXCursor loop, CXCursor cond,
                           CXCursor body, CXCursor inc, int is_do)
{
    pp_held_bits head = pp_held_bits_new(a->n), cur = pp_held_bits_new(a->n);
    pp_held_bits_copy(&head, st, a->n);
    for (int iter = 0; iter < 8; iter++) {
        pp_held_bits_copy(&cur, &head, a->n);
        if (ctx.auto_poll)
            pp_intptr_resume(a, &cur, loop); /* a budget poll comes before the condition */
        if (!is_do && !clang_Cursor_isNull(cond))
            pp_intptr_expr(a, &cur, cond);
        if (ctx.auto_poll)
            pp_intptr_resume(a, &cur, loop);
        if (!clang_Cursor_isNull(body))
            pp_intptr_stmt(a, &cur, body);
        if (!clang_Cursor_isNull(inc))
            pp_intptr_expr(a, &cur, inc);
        if (is_do && !clang_Cursor_isNull(cond))
            pp_intptr_expr(a, &cur, cond);
        if (!pp_held_bits_join(&head, &cur, a->n))
            break;
    }
    pp_held_bits_join(st, &head, a->n);
    pp_held_bits_free(&head);
    pp_held_bits_free(&cur);
}

static void pp_intptr_stmt(pp_intptr_state *a, pp_held_bits *st, CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    pp_kids kk = pp_children(c);
    switch (k) {
    case CXCursor_CompoundStmt:
        for (unsigned i = 0; i < kk.n; i++)
            pp_intptr_stmt(a, st, kk.v[i]);
        break;
    case CXCursor_CaseStmt:
    case CXCursor_DefaultStmt:
    case CXCursor_LabelStmt:
        if (k != CXCursor_LabelStmt && a->sw)
            pp_held_bits_join(st, a->sw, a->n);
        if (kk.n)
            pp_intptr_stmt(a, st, kk.v[kk.n - 1]);
        break;
    case CXCursor_DeclStmt:
        for (unsigned i = 0; i < kk.n; i++) {
            if (pp_kind(kk.v[i]) != CXCursor_VarDecl)
                continue;
            CXCursor init = clang_Cursor_getVarDeclInitializer(kk.v[i]);
            if (!clang_Cursor_isNull(init))
                pp_intptr_expr(a, st, init);
            int vi = pp_ip_var(a, kk.v[i]);
            if (vi < 0 || !a->tracked[vi])
                continue;
            CXCursor conv = clang_getNullCursor();
            int l = clang_Cursor_isNull(init) ? 0 : pp_addr_level(a, st, init, &conv);
            st->hold[vi] = (unsigned char)(l < a->tracked[vi] ? l : a->tracked[vi]);
            st->conv[vi] = conv;
            st->crossed[vi] = 0;
        }
        break;
    case CXCursor_IfStmt: {
        if (kk.n < 2)
            break;
        pp_intptr_expr(a, st, kk.v[0]);
        pp_held_bits other = pp_held_bits_new(a->n);
        pp_held_bits_copy(&other, st, a->n);
        pp_intptr_stmt(a, st, kk.v[1]);
        if (kk.n > 2)
            pp_intptr_stmt(a, &other, kk.v[2]);
        pp_held_bits_join(st, &other, a->n);
        pp_held_bits_free(&other);
        break;
    }
    case CXCursor_SwitchStmt: {
        if (kk.n < 2)
            break;
        pp_intptr_expr(a, st, kk.v[0]);
        pp_held_bits entry = pp_held_bits_new(a->n), *outer = a->sw;
        pp_held_bits_copy(&entry, st, a->n);
        a->sw = &entry;
        pp_intptr_stmt(a, st, kk.v[kk.n - 1]);
        a->sw = outer;
        pp_held_bits_join(st, &entry, a->n);
        pp_held_bits_free(&entry);
        break;
    }
    case CXCursor_WhileStmt:
        if (kk.n == 2)
            pp_intptr_loop(a, st, c, kk.v[0], kk.v[1], clang_getNullCursor(), 0);
        break;
    case CXCursor_DoStmt:
        if (kk.n == 2)
            pp_intptr_loop(a, st, c, kk.v[1], kk.v[0], clang_getNullCursor(), 1);
        break;
    case CXCursor_ForStmt: {
        /* the init (a declaration, or the first of three expressions)
         * runs once; the condition and the increment with the body */
        CXCursor body = kk.n ? kk.v[kk.n - 1] : clang_getNullCursor();
        CXCursor cond = clang_getNullCursor(), inc = cond;
        unsigned first = 0;
        if (kk.n >= 2 && (pp_kind(kk.v[0]) == CXCursor_DeclStmt || kk.n == 4)) {
            pp_intptr_stmt(a, st, kk.v[0]);
            first = 1;
        }
        if (first + 1 < kk.n)
            cond = kk.v[first];
        if (first + 2 < kk.n)
            inc = kk.v[first + 1];
        pp_intptr_loop(a, st, c, cond, body, inc, 0);
        break;
    }
    case CXCursor_ReturnStmt:
        if (kk.n) {
            pp_intptr_expr(a, st, kk.v[0]);
            CXCursor conv = clang_getNullCursor();
            int l = pp_addr_level(a, st, kk.v[0], &conv);
            a->changed |= pp_ip_raise(&pp_ip_params[a->fi][pp_ip_nparams[a->fi]], l, conv);
        }
        memset(st->hold, 0, a->n);
        memset(st->crossed, 0, a->n);
        break;
    default:
        if (clang_isExpression(k))
            pp_intptr_expr(a, st, c);
        else if (clang_isStatement(k))
            for (unsigned i = 0; i < kk.n; i++)
                pp_intptr_stmt(a, st, kk.v[i]);
        break;
    }
    free(kk.v);
}

typedef struct pp_local_scan {
    unsigned magic; /* PP_MAGIC_LOCALS */
    CXCursor *decls;
    unsigned n, cap;
} pp_local_scan;

static enum CXChildVisitResult pp_local_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_local_scan *ls = pp_visit_state(d, PP_MAGIC_LOCALS);
    if (pp_kind(c) == CXCursor_VarDecl) {
        enum CX_StorageClass sc = clang_Cursor_getStorageClass(c);
        if (sc != CX_SC_Static && sc != CX_SC_Extern) {
            PP_PUSH(ls->decls, ls->n, ls->cap);
            ls->decls[ls->n++] = c;
        }
    }
    return CXChildVisit_Recurse;
}

/* Analyses function fi of the inputs (report: print the errors). A
 * checkpointable function's variables are its frame's; another's are
 * collected here, and it has no resume points. */
static void pp_intptr_fn(int fi, int report, int *changed)
{
    pp_fn *fn = &ctx.fns[fi];
    pp_local_scan ls = {.magic = PP_MAGIC_LOCALS};
    unsigned nparams = pp_ip_nparams[fi];
    if (fn->cp) {
        ls.cap = fn->nvars + 1;
        ls.decls = pp_xrealloc(NULL, ls.cap * sizeof *ls.decls);
        for (unsigned i = 0; i < fn->nvars; i++)
            ls.decls[ls.n++] = fn->vars[i].decl;
    } else {
        ls.cap = nparams + 16;
        ls.decls = pp_xrealloc(NULL, ls.cap * sizeof *ls.decls);
        for (unsigned i = 0; i < nparams; i++)
            ls.decls[ls.n++] = clang_Cursor_getArgument(fn->def, i);
        clang_visitChildren(fn->def, pp_local_cb, &ls);
    }
    unsigned n = ls.n;
    pp_intptr_state a = {.fn = fn,
                         .fi = fi,
                         .cp = fn->cp,
                         .n = n,
                         .decls = ls.decls,
                         .tracked = pp_xrealloc(NULL, n + 1),
                         .taken = pp_xrealloc(NULL, n + 1),
                         .done = pp_xrealloc(NULL, n + 1),
                         .report = report};
    memset(a.taken, 0, n + 1);
    if (fn->cp) {
        pp_var_refs rs = {.magic = PP_MAGIC_VAR_REFS,
                          .fn = fn,
                          .refs = pp_xrealloc(NULL, (n + 1) * sizeof *rs.refs),
                          .taken = a.taken};
        memset(rs.refs, 0, (n + 1) * sizeof *rs.refs);
        clang_visitChildren(fn->def, pp_regs_cb, &rs);
        free(rs.refs);
    }
    memset(a.done, 0, n + 1);
    for (unsigned i = 0; i < n; i++)
        a.tracked[i] = (unsigned char)pp_holds_int(clang_getCursorType(a.decls[i]));
    pp_held_bits st = pp_held_bits_new(n);
    for (unsigned i = 0; i < nparams && i < n; i++)
        if (pp_ip_params[fi][i].level && a.tracked[i]) {
            int l = pp_ip_params[fi][i].level;
            st.hold[i] = (unsigned char)(l < a.tracked[i] ? l : a.tracked[i]);
            st.conv[i] = pp_ip_params[fi][i].conv;
        }
    pp_kids k = pp_children(fn->def);
    for (unsigned i = 0; i < k.n; i++)
        if (pp_kind(k.v[i]) == CXCursor_CompoundStmt)
            pp_intptr_stmt(&a, &st, k.v[i]);
    free(k.v);
    *changed |= a.changed;
    pp_held_bits_free(&st);
    free(a.tracked);
    free(a.taken);
    free(a.done);
    free(ls.decls);
}

/* Refuses the integers that may hold a pointer across a safe point in
 * checkpointable functions, and pointers converted to integers stored in
 * memory by any function (see preproc/README.md); conversions passed to
 * parameters are followed into the callees, and returned ones back into
 * the callers. */
void pp_int_ptrs(void)
{
    pp_ip_index();
    pp_values_prepare();
    pp_ip_params = pp_xrealloc(NULL, (ctx.nfns + 1) * sizeof *pp_ip_params);
    for (unsigned i = 0; i < ctx.nfns; i++) {
        unsigned np = pp_ip_nparams[i];
        pp_ip_params[i] = pp_xrealloc(NULL, (np + 1) * sizeof **pp_ip_params);
        for (unsigned j = 0; j <= np; j++)
            pp_ip_params[i][j] = (pp_ip_slot){PP_ADDR_NONE, clang_getNullCursor()};
    }
    for (int pass = 0, changed = 1; changed && pass < 16; pass++) {
        changed = 0;
        for (unsigned i = 0; i < ctx.nfns; i++)
            if (ctx.fns[i].file >= 0 && !clang_Cursor_isNull(ctx.fns[i].def))
                pp_intptr_fn((int)i, 0, &changed);
    }
    int ignored = 0;
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].file >= 0 && !clang_Cursor_isNull(ctx.fns[i].def))
            pp_intptr_fn((int)i, 1, &ignored);
    for (unsigned i = 0; i < ctx.nfns; i++)
        free(pp_ip_params[i]);
    free(pp_ip_params);
    pp_ip_params = NULL;
    free(pp_ip_seen.v);
    memset(&pp_ip_seen, 0, sizeof pp_ip_seen);
    free(pp_ip_nparams);
    pp_ip_nparams = NULL;
    pp_values_free();
}
