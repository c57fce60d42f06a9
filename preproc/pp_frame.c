/* pp_frame.c - the frame layout of a checkpointable function: its
 * variables and slots, which variables stay in C locals of the body,
 * safe-point sites and which loops poll.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Frames: the variables of a checkpointable function
 * =================================================================== */

int pp_var_find(pp_fn *fn, CXCursor decl)
{
    for (unsigned i = 0; i < fn->nvars; i++)
        if (clang_equalCursors(fn->vars[i].decl, decl))
            return (int)i;
    return -1;
}

static int pp_field_taken(pp_fn *fn, const char *name)
{
    const char *prefix = fn->is_task ? "t" : fn->is_main ? "m" : "h";
    if (!strcmp(name, prefix) || !strncmp(name, "lev__", 5))
        return 1;
    for (unsigned i = 0; i < fn->nvars; i++)
        if (!strcmp(fn->vars[i].field, name))
            return 1;
    return 0;
}

static void pp_var_add(pp_fn *fn, CXCursor decl, CXType type, const char *field)
{
    char *name = field ? pp_strdup(field) : pp_cxstring(clang_getCursorSpelling(decl));
    if (!field) {
        if (!*name) {
            free(name);
            name = pp_fmt("lev__p%u", fn->nvars);
        }
        for (unsigned n = 1; pp_field_taken(fn, name); n++) {
            char *base = pp_cxstring(clang_getCursorSpelling(decl));
            free(name);
            name = pp_fmt("%s__%u", base, n);
            free(base);
        }
    }
    PP_PUSH(fn->vars, fn->nvars, fn->capvars);
    fn->vars[fn->nvars++] =
        (pp_var){.field = name, .decl = decl, .type = type, .scope_e = UINT_MAX};
}

/* The size expressions written in the brackets of variable v's
 * declarator, outermost first (at most PP_VLA_MAX); their number. */
static unsigned pp_bracket_exprs(pp_file *f, CXCursor v, CXCursor *out)
{
    /* a parameter written as an array: its first brackets are adjusted
     * away (T a[n][m] is T (*a)[m]) */
    unsigned skip = 0;
    if (pp_kind(v) == CXCursor_ParmDecl) {
        unsigned t = pp_tok_from(f, pp_off(PP_LOC(v)));
        for (unsigned d = 0, i = t + 1; pp_tok_is(f, t + 1, "[") && i < f->ntoks; i++) {
            d += (unsigned)pp_tok_is(f, i, "[") - (unsigned)pp_tok_is(f, i, "]");
            if (!d) {
                skip = f->toks[i].e;
                break;
            }
        }
    }
    pp_kids k = pp_children(v);
    unsigned n = 0;
    for (unsigned i = 0; i < k.n && n < PP_VLA_MAX; i++) {
        if (!clang_isExpression(pp_kind(k.v[i])) || pp_begin(k.v[i]) < skip)
            continue;
        unsigned t = pp_tok_from(f, pp_begin(k.v[i]));
        if (t > 0 && pp_tok_is(f, t - 1, "["))
            out[n++] = k.v[i];
    }
    free(k.v);
    for (unsigned i = 1; i < n; i++) /* children come innermost first */
        for (unsigned j = i; j > 0 && pp_begin(out[j - 1]) > pp_begin(out[j]); j--) {
            CXCursor x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

/* Whether variable-length array v of element type elem needs more
 * alignment than the VT heap gives its objects (16 bytes): its element
 * type's, or an alignment specifier of its own other than a constant of
 * at most 16. */
static int pp_vla_overaligned(CXCursor v, CXType elem)
{
    if (clang_Type_getAlignOf(elem) > 16)
        return 1;
    long al;
    free(pp_align_attrs(v, &al));
    return al < 0 || al > 16;
}

/* The shape (pp_vla) of local v of variably modified type t in fn. 0; -1
 * after an error naming v and saying how to write it instead. */
static int pp_vla_shape(pp_fn *fn, CXCursor v, CXType t, pp_vla *out)
{
    memset(out, 0, sizeof *out);
    char *name = pp_cxstring(clang_getCursorSpelling(v));
    CXType a = t;
    out->kind = PP_VLA_ARRAY;
    if (clang_getCanonicalType(t).kind == CXType_Pointer) {
        out->kind = PP_VLA_POINTER;
        a = clang_getPointeeType(pp_desugar(t));
    }
    unsigned n = 0;
    int last = -1, ok = 1;
    for (;;) {
        enum CXTypeKind k = clang_getCanonicalType(a).kind;
        if (k != CXType_ConstantArray && k != CXType_VariableArray)
            break;
        if (n == PP_VLA_MAX) {
            ok = 0;
            break;
        }
        out->cdim[n] =
            k == CXType_ConstantArray ? clang_getArraySize(clang_getCanonicalType(a)) : -1;
        if (k == CXType_VariableArray)
            last = (int)n;
        n++;
        a = clang_getArrayElementType(pp_desugar(a));
    }
    ok = ok && last >= 0;
    if (ok) {
        /* the element type: below the last variable dimension */
        out->ndims = (unsigned)last + 1;
        a = out->kind == PP_VLA_POINTER ? clang_getPointeeType(pp_desugar(t)) : t;
        for (unsigned i = 0; i < out->ndims; i++)
            a = clang_getArrayElementType(pp_desugar(a));
        out->elem = a;
        ok = !pp_is_vm(a);
    }
    for (unsigned i = 1; ok && out->kind == PP_VLA_POINTER && i < out->ndims; i++)
        ok = out->cdim[i] >= 0;
    if (!ok) {
        pp_error(PP_LOC(v),
                 "'%s' in checkpointable function '%s' has a variably modified type that cannot "
                 "be captured: only variable-length arrays (T a[n][m]) and pointers to arrays "
                 "whose first dimension only is variable (T (*p)[m]) are supported; use a 'T *' "
                 "and index it by hand",
                 name, fn->name);
        free(name);
        return -1;
    }
    if (out->kind == PP_VLA_ARRAY && pp_vla_overaligned(v, out->elem)) {
        pp_error(PP_LOC(v),
                 "variable-length array '%s' in checkpointable function '%s' needs more than "
                 "16-byte alignment: levpp keeps variable-length arrays on the VT heap, whose "
                 "objects are aligned to 16 bytes; give it a constant size (frames keep any "
                 "alignment)",
                 name, fn->name);
        free(name);
        return -1;
    }
    CXCursor br[PP_VLA_MAX];
    unsigned nb = pp_bracket_exprs(&ctx.files[fn->file], v, br);
    for (unsigned i = 0; i < out->ndims; i++) {
        out->size[i] = i < nb ? br[i] : clang_getNullCursor();
        if (out->cdim[i] < 0 && i >= nb) {
            pp_error(PP_LOC(v),
                     "variable-length array '%s' in checkpointable function '%s' takes a "
                     "dimension from a typedef; write its dimensions in its declaration",
                     name, fn->name);
            free(name);
            return -1;
        }
    }
    free(name);
    return 0;
}

typedef struct pp_local_name {
    unsigned magic; /* PP_MAGIC_LOCAL_NAME */
    const char *name;
    int found;
} pp_local_name;

static enum CXChildVisitResult pp_local_name_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_local_name *s = pp_visit_state(d, PP_MAGIC_LOCAL_NAME);
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_VarDecl || k == CXCursor_ParmDecl || k == CXCursor_EnumConstantDecl) {
        char *n = pp_cxstring(clang_getCursorSpelling(c));
        s->found = !strcmp(n, s->name);
        free(n);
    }
    return s->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* A name that the alignment specifiers of local v (an expression, not a
 * number) take from function fn itself (a constant of an enum declared
 * in it, a variable's size): the frame struct, at file scope, would not
 * see it. NULL if there is none. */
static char *pp_align_local_name(pp_fn *fn, CXCursor v)
{
    long al;
    char *txt = pp_align_attrs(v, &al), *found = NULL;
    static const char *const own[] = {"_Alignas", "alignas", "__attribute__", "aligned",
                                      "__aligned__"};
    for (const char *p = txt; al < 0 && *p && !found; p++) {
        if (!(*p == '_' || isalpha((unsigned char)*p)) ||
            (p > txt && (p[-1] == '_' || isalnum((unsigned char)p[-1]))))
            continue;
        size_t n = 1;
        while (p[n] == '_' || isalnum((unsigned char)p[n]))
            n++;
        char *name = pp_fmt("%.*s", (int)n, p);
        int skip = 0;
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            skip |= !strcmp(name, own[i]);
        pp_local_name s = {PP_MAGIC_LOCAL_NAME, name, 0};
        if (!skip)
            clang_visitChildren(fn->def, pp_local_name_cb, &s);
        if (s.found)
            found = name;
        else
            free(name);
        p += n - 1;
    }
    free(txt);
    return found;
}

/* Visits what of variable declaration v is evaluated: its initialiser (not
 * the operand of a __typeof__ in its type, also a child of v). */
static void pp_visit_init(CXCursor v, CXCursorVisitor cb, CXClientData d)
{
    CXCursor init = clang_Cursor_getVarDeclInitializer(v);
    if (!clang_Cursor_isNull(init) && cb(init, v, d) == CXChildVisit_Recurse)
        clang_visitChildren(init, cb, d);
}

typedef struct pp_vars_scan {
    unsigned magic; /* PP_MAGIC_VARS */
    pp_fn *fn;
} pp_vars_scan;

/* A compound literal of a checkpointable body whose address may be kept
 * (`&(struct s){...}`, an array literal that decays, a member of one):
 * its object lives in the frame, as a variable `lev__clN` of the
 * literal's type, so pointers to it stay valid across safe points and
 * travel. The resumable body initialises the field where the literal is
 * evaluated, each time, from the literal as written, and uses the field:
 * `(*({ __builtin_memcpy((void *)&fr->lev__clN, &(T){...}, sizeof
 * fr->lev__clN); &fr->lev__clN; }))`, an lvalue of the literal's type.
 * The native body keeps it. A literal written by a macro that stays
 * unexpanded, or of a type no declaration can name, stays where it is
 * (on the native stack: a capture that finds a pointer to it fails,
 * naming the variable that holds it). */
/* The frame variable of compound literal lit, or -1. By its place: a
 * cursor reached through a declaration's initialiser is not equal
 * (clang_equalCursors) to the same node reached from the body. */
static int pp_lit_find(pp_fn *fn, CXCursor lit)
{
    for (unsigned i = 0; i < fn->nvars; i++)
        if (pp_kind(fn->vars[i].decl) == CXCursor_CompoundLiteralExpr &&
            pp_begin(fn->vars[i].decl) == pp_begin(lit) && pp_end(fn->vars[i].decl) == pp_end(lit))
            return (int)i;
    return -1;
}

static void pp_lit_var(pp_fn *fn, CXCursor lit)
{
    if (pp_lit_find(fn, lit) >= 0 || pp_in_macro(lit) || fn->file < 0)
        return;
    pp_file *f = &ctx.files[fn->file];
    unsigned b = pp_begin(lit), e = pp_end(lit);
    CXType t = clang_getCursorType(lit);
    char *sp = pp_cxstring(clang_getTypeSpelling(clang_getUnqualifiedType(t)));
    int ok = b < e && e <= f->len && f->text[b] == '(' && f->text[e - 1] == '}' &&
             !pp_bad_spelling(sp) && clang_getCanonicalType(t).kind != CXType_VariableArray;
    free(sp);
    if (!ok)
        return;
    char *field = pp_fmt("lev__cl%u", fn->nvars);
    pp_var_add(fn, lit, t, field);
    pp_edit_add(f, b, b + 1, E_REPL, 0, 1,
                pp_fmt("(*({ __builtin_memcpy((void *)&fr->%s, &(", field));
    pp_edit_add(f, e - 1, e, E_REPL, 0, 1, pp_fmt("}, sizeof fr->%s); &fr->%s; }))", field, field));
    free(field);
}

static enum CXChildVisitResult pp_vars_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    pp_vars_scan *vc = pp_visit_state(d, PP_MAGIC_VARS);
    enum CXCursorKind k = pp_kind(c);
    /* Locals of a statement expression with no site stay C locals, and so
     * do those of a block or of the head of a for written by a macro: no
     * safe point can come between their declaration and their last use
     * (pp_macro_stmt) */
    if (k == CXCursor_StmtExpr)
        return pp_has_site(c) && !pp_in_macro(c) ? CXChildVisit_Recurse : CXChildVisit_Continue;
    if ((k == CXCursor_CompoundStmt && pp_in_macro(c)) ||
        (k == CXCursor_DeclStmt && pp_in_macro(c) && pp_kind(parent) == CXCursor_ForStmt))
        return CXChildVisit_Continue;
    if (k == CXCursor_CompoundLiteralExpr &&
        clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_ConstantArray)
        pp_lit_var(vc->fn, c); /* decays to a pointer */
    if ((k == CXCursor_UnaryOperator &&
         clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_AddrOf) ||
        k == CXCursor_MemberRefExpr) {
        /* &(T){...}, and (T){...}.m, whose address or array may be kept */
        pp_kids kk = pp_children(c);
        CXCursor o = kk.n >= 1 ? pp_strip(kk.v[0]) : clang_getNullCursor();
        free(kk.v);
        if (pp_kind(o) == CXCursor_CompoundLiteralExpr)
            pp_lit_var(vc->fn, o);
    }
    /* Locals declared by macros count too: the declaration statement then
     * refuses them ("declaration from a macro"), rather than leaving a C
     * local that would lose its value across a safe point. */
    if (k == CXCursor_VarDecl) {
        enum CX_StorageClass sc = clang_Cursor_getStorageClass(c);
        char *name = pp_cxstring(clang_getCursorSpelling(c));
        if (sc == CX_SC_Static || sc == CX_SC_Extern) {
            /* static: moved to file scope by the common pass; extern:
             * names a variable defined elsewhere, kept as written */
        } else if (pp_is_vm(clang_getCursorType(c))) {
            pp_vla shape;
            if (pp_vla_shape(vc->fn, c, clang_getCursorType(c), &shape) == 0) {
                pp_var_add(vc->fn, c, clang_getCursorType(c), NULL);
                vc->fn->vars[vc->fn->nvars - 1].vla = shape;
            }
        } else {
            CXType vt = clang_getCursorType(c);
            char *sp = pp_cxstring(clang_getTypeSpelling(vt));
            CXType ct = clang_getCanonicalType(vt);
            if (pp_bad_spelling(sp) && ct.kind == CXType_Enum)
                /* an enum without a tag (`enum { A, B } e;`): its frame
                 * field, declared at file scope where the type is not
                 * seen, has the enum's integer type, which C converts
                 * both ways */
                pp_var_add(vc->fn, c, clang_getEnumDeclIntegerType(clang_getTypeDeclaration(ct)),
                           NULL);
            else if (pp_bad_spelling(sp))
                pp_error(PP_LOC(c),
                         "local '%s' of an unnamed type in checkpointable function '%s' is not "
                         "supported yet; name the type at file scope",
                         name, vc->fn->name);
            else
                pp_var_add(vc->fn, c, clang_getCursorType(c), NULL);
            free(sp);
            char *own = pp_align_local_name(vc->fn, c);
            if (own)
                pp_error(PP_LOC(c),
                         "the alignment of '%s' in checkpointable function '%s' names '%s', "
                         "declared in the function: its frame field is declared at file scope, "
                         "where that is not seen; write a constant declared outside the function",
                         name, vc->fn->name, own);
            free(own);
        }
        free(name);
        pp_visit_init(c, pp_vars_cb, d); /* statement expressions in it */
        return CXChildVisit_Continue;
    }
    return CXChildVisit_Recurse;
}

/* The variable a write target (stripped) stores into: through array
 * subscripts of arrays and member accesses of structs, not through
 * pointers. A null cursor when it is not one variable's storage. */
CXCursor pp_write_var(CXCursor e)
{
    for (;;) {
        e = pp_strip(e);
        enum CXCursorKind k = pp_kind(e);
        if (k == CXCursor_DeclRefExpr) {
            CXCursor r = clang_getCursorReferenced(e);
            return pp_kind(r) == CXCursor_VarDecl ? r : clang_getNullCursor();
        }
        if (k != CXCursor_ArraySubscriptExpr && k != CXCursor_MemberRefExpr)
            return clang_getNullCursor();
        pp_kids kk = pp_children(e);
        CXCursor b = kk.n >= 1 ? pp_strip(kk.v[0]) : clang_getNullCursor();
        free(kk.v);
        enum CXTypeKind bt = clang_getCanonicalType(clang_getCursorType(b)).kind;
        if (clang_Cursor_isNull(b) || bt == CXType_Pointer)
            return clang_getNullCursor();
        e = b;
    }
}

/* Whether c writes (or takes the address of) its first operand: an
 * assignment, a compound assignment, ++, -- or unary &. */
int pp_writes_operand(CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_CompoundAssignOperator)
        return 1;
    if (k == CXCursor_BinaryOperator)
        return clang_getCursorBinaryOperatorKind(c) == CXBinaryOperator_Assign;
    if (k == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(c);
        return op == CXUnaryOperator_PostInc || op == CXUnaryOperator_PostDec ||
               op == CXUnaryOperator_PreInc || op == CXUnaryOperator_PreDec ||
               op == CXUnaryOperator_AddrOf;
    }
    return 0;
}

/* In a task module, warns where checkpointable code writes a file-scope
 * variable or a static local: the worker's VTs share it and it does not
 * move with a VT. */
static enum CXChildVisitResult pp_static_write_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_fn *fn = d;
    assert(fn && fn->cp);
    int lhs = pp_writes_operand(c);
    if (!lhs)
        return CXChildVisit_Recurse;
    pp_kids kk = pp_children(c);
    CXCursor t = kk.n >= 1 ? kk.v[0] : clang_getNullCursor();
    free(kk.v);
    CXCursor v = clang_Cursor_isNull(t) ? t : pp_write_var(t);
    if (!clang_Cursor_isNull(v)) {
        int file_scope = pp_kind(clang_getCursorSemanticParent(v)) == CXCursor_TranslationUnit;
        enum CX_StorageClass sc = clang_Cursor_getStorageClass(v);
        if (file_scope || sc == CX_SC_Static || sc == CX_SC_Extern) {
            char *name = pp_cxstring(clang_getCursorSpelling(v));
            CXCursor at = pp_strip(t);
            while (pp_kind(at) != CXCursor_DeclRefExpr) {
                pp_kids ak = pp_children(at);
                at = ak.n >= 1 ? pp_strip(ak.v[0]) : at;
                free(ak.v);
                if (!ak.n)
                    break;
            }
            pp_warn(PP_LOC(at),
                    "checkpointable function '%s' writes %s '%s': in a task module it is "
                    "shared by every VT of the worker and does not move with a VT",
                    fn->name, file_scope ? "file-scope variable" : "static local", name);
            free(name);
        }
    }
    return CXChildVisit_Recurse;
}

/* The type parameter i of function type ft holds: a parameter declared
 * as an array (`uint8_t key[32]`, `fe h` with `typedef int fe[10]`, `char
 * *const lst[]`) or a function holds a pointer, which libclang's
 * parameter type hides behind the declared one; the canonical function
 * type has it. at: the declared type. */
CXType pp_param_type(CXType ft, unsigned i, CXType at)
{
    enum CXTypeKind k = clang_getCanonicalType(at).kind;
    if (k != CXType_ConstantArray && k != CXType_IncompleteArray && k != CXType_FunctionProto &&
        k != CXType_FunctionNoProto)
        return at;
    CXType decayed = clang_getArgType(clang_getCanonicalType(ft), i);
    return decayed.kind == CXType_Pointer ? decayed : at;
}

/* Lays out the frame of a checkpointable function: parameters, locals. */
static void pp_layout(pp_fn *fn)
{
    CXCursor c = fn->def;
    CXType ft = clang_getCursorType(c);
    fn->ret = clang_getResultType(ft);
    fn->ret_void = clang_getCanonicalType(fn->ret).kind == CXType_Void;
    fn->pcf = fn->is_task ? "fr->t.h.pc" : fn->is_main ? "fr->m.h.pc" : "fr->h.pc";
    int nargs = clang_Cursor_getNumArguments(c);
    /* A definition without a prototype (`int f()`, or K&R's `int f(a, b) int a;
     * char *b;`) declares its parameters all the same: the frame holds them
     * and the resumable body gets a prototype of its own. */
    if (ft.kind == CXType_FunctionProto && clang_isFunctionTypeVariadic(ft))
        pp_error(PP_LOC(c),
                 "function '%s' has a variable argument list ('...') and reaches a safe point "
                 "(it calls one, or a checkpointable function): its '...' arguments cannot be "
                 "kept in an image; pass them as a va_list or an array instead",
                 fn->name);
    if (fn->is_task && nargs != 2)
        pp_error(PP_LOC(c), "task entry '%s' must be 'void %s(const void *arg, size_t len)'",
                 fn->name, fn->name);
    if (fn->is_main && nargs != 0 && nargs != 2 && nargs != 3)
        pp_error(PP_LOC(c), "main must be 'int main(void)', 'int main(int argc, char **argv)' "
                            "or 'int main(int argc, char **argv, char **envp)'");
    static const char *const task_f[] = {"t.arg", "t.len"}, *const main_f[] = {"m.argc", "m.argv"};
    fn->nparams = nargs > 0 ? (unsigned)nargs : 0;
    for (int i = 0; i < nargs; i++) {
        CXCursor p = clang_Cursor_getArgument(c, (unsigned)i);
        const char *fixed = fn->is_task && i < 2   ? task_f[i]
                            : fn->is_main && i < 2 ? main_f[i]
                                                   : NULL;
        CXType at = clang_getArgType(ft, (unsigned)i);
        if (pp_is_vm(at)) {
            pp_var_add(fn, p, at, fixed);
            pp_vla_shape(fn, p, at, &fn->vars[fn->nvars - 1].vla);
        } else {
            pp_var_add(fn, p, pp_param_type(ft, (unsigned)i, at), fixed);
        }
    }
    pp_kids k = pp_children(c);
    for (unsigned i = 0; i < k.n; i++)
        if (pp_kind(k.v[i]) == CXCursor_CompoundStmt) {
            pp_vars_scan vc = {.magic = PP_MAGIC_VARS, .fn = fn};
            clang_visitChildren(k.v[i], pp_vars_cb, &vc);
            if (!ctx.main_task)
                clang_visitChildren(k.v[i], pp_static_write_cb, fn);
        }
    free(k.v);
}

/* Pass: the frame layout and the frame type of every checkpointable
 * function. */
void pp_layout_frames(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp) {
            pp_layout(&ctx.fns[i]);
            pp_frame_type((int)i);
        }
}

/* ===================================================================
 * C locals and polls: which variables stay in C locals of the body,
 * which loops poll
 * =================================================================== */

/* main's argv declared with another pointer type than the frame's
 * `char **` (`const char *argv[]`, `char *const *argv`): the body names
 * it through the frame field as an lvalue of the declared type, never in
 * a C local of its own (which would be stored back into the field). */
static int pp_argv_retyped(const pp_fn *fn, int vi)
{
    if (!fn->is_main || vi != 1 || fn->nparams < 2)
        return 0;
    char *s = pp_cxstring(clang_getTypeSpelling(clang_getCanonicalType(fn->vars[vi].type)));
    int r = strcmp(s, "char **") != 0;
    free(s);
    return r;
}

/* How the resumable body names var vi: its C local (lev__vN_FIELD, N the
 * var's index, so that no two names meet) or its frame field. */
char *pp_var_ref(pp_fn *fn, int vi)
{
    pp_var *v = &fn->vars[vi];
    if (pp_argv_retyped(fn, vi)) {
        char *ty = pp_decl(v->type, "*");
        char *r = pp_fmt("(*(%s)&fr->%s)", ty, v->field);
        free(ty);
        return r;
    }
    if (v->vla.kind) {
        /* an lvalue of the declared type, its dimensions read from the
         * frame: the array on the heap, or the pointer field (declared
         * with a compatible type of unknown first dimension) */
        pp_buf d = {0};
        pp_puts(&d, v->vla.kind == PP_VLA_ARRAY ? "(*)" : "(**)");
        for (unsigned i = 0; i < v->vla.ndims; i++)
            if (v->vla.cdim[i] < 0)
                pp_printf(&d, "[fr->lev__d%u_%s]", i, v->field);
            else
                pp_printf(&d, "[%lld]", v->vla.cdim[i]);
        char *ty = pp_decl(v->vla.elem, d.p);
        char *r = pp_fmt("(*(%s)%sfr->%s)", ty, v->vla.kind == PP_VLA_ARRAY ? "" : "&", v->field);
        free(ty);
        free(d.p);
        return r;
    }
    if (!v->reg)
        return pp_fmt("fr->%s", v->field);
    char *r = pp_fmt("lev__v%d_%s", vi, v->field);
    for (char *q = r; *q; q++)
        if (*q == '.')
            *q = '_';
    return r;
}

/* C library functions that keep no pointer to their arguments and return
 * none into them (the ones that return their destination count only
 * where the result is dropped: pp_regs_cb). */
static const char *const pp_no_keep[] = {
    "memcmp", "strlen", "strnlen", "strcmp", "strncmp", "printf", "fprintf", "sprintf", "snprintf",
    "puts",   "fputs",  "atoi",    "atol",   "atof",    "fwrite", "fread",   NULL};
static const char *const pp_no_keep_dropped[] = {"memcpy",  "memmove", "memset",  "strcpy",
                                                 "strncpy", "strcat",  "strncat", NULL};

static int pp_in_list(const char *const *l, const char *name)
{
    for (; *l; l++)
        if (!strcmp(*l, name))
            return 1;
    return 0;
}

/* The variable e (stripped) names, as an index of fn, or -1. */
static int pp_ref_var(pp_fn *fn, CXCursor e)
{
    e = pp_strip(e);
    return pp_kind(e) == CXCursor_DeclRefExpr ? pp_var_find(fn, clang_getCursorReferenced(e)) : -1;
}

static enum CXChildVisitResult pp_count_refs_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_var_refs *rs = pp_visit_state(d, PP_MAGIC_VAR_REFS);
    int vi = pp_kind(c) == CXCursor_DeclRefExpr ? pp_ref_var(rs->fn, c) : -1;
    if (vi >= 0)
        rs->plain[vi]++;
    return CXChildVisit_Recurse;
}

/* For pp_regs (rs->plain): the references to arrays that only reach
 * their elements: a subscript's base, an operand of sizeof, an argument
 * of a C library function that keeps no pointer to it (pp_no_keep). */
static void pp_plain_refs(pp_var_refs *rs, CXCursor c, CXCursor parent)
{
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_ArraySubscriptExpr) {
        pp_kids kk = pp_children(c);
        int vi = kk.n == 2 ? pp_ref_var(rs->fn, kk.v[0]) : -1;
        if (vi >= 0)
            rs->plain[vi]++;
        free(kk.v);
    } else if (k == CXCursor_UnaryExpr) { /* sizeof, _Alignof: not evaluated */
        clang_visitChildren(c, pp_count_refs_cb, rs);
    } else if (k == CXCursor_CallExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        if (pp_kind(ref) != CXCursor_FunctionDecl)
            return;
        char *usr = pp_fn_usr(ref);
        int g = pp_fn_find(usr);
        free(usr);
        if (g >= 0 && ctx.fns[g].file >= 0)
            return; /* defined in the inputs: not the C library's */
        char *name = pp_cxstring(clang_getCursorSpelling(ref));
        enum CXCursorKind pk = pp_kind(parent);
        int dropped =
            pk == CXCursor_CompoundStmt ||
            (clang_isStatement(pk) && pk != CXCursor_ReturnStmt && pk != CXCursor_DeclStmt);
        if (pp_in_list(pp_no_keep, name) || (dropped && pp_in_list(pp_no_keep_dropped, name))) {
            int n = clang_Cursor_getNumArguments(c);
            for (int i = 0; i < n; i++) {
                int vi = pp_ref_var(rs->fn, clang_Cursor_getArgument(c, (unsigned)i));
                if (vi >= 0)
                    rs->plain[vi]++;
            }
        }
        free(name);
    }
}

enum CXChildVisitResult pp_regs_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    pp_var_refs *rs = pp_visit_state(d, PP_MAGIC_VAR_REFS);
    enum CXCursorKind k = pp_kind(c);
    if (rs->plain)
        pp_plain_refs(rs, c, parent);
    if (k == CXCursor_DeclRefExpr) {
        int vi = pp_var_find(rs->fn, clang_getCursorReferenced(c));
        if (vi >= 0)
            rs->refs[vi]++;
    } else if (k == CXCursor_CompoundLiteralExpr) {
        int vi = pp_lit_find(rs->fn, c); /* one kept in the frame: pp_lit_var */
        if (vi >= 0) {
            rs->refs[vi]++;
            rs->taken[vi] = 1;
        }
    } else if (k == CXCursor_UnaryOperator &&
               clang_getCursorUnaryOperatorKind(c) == CXUnaryOperator_AddrOf) {
        /* &x, and &s.m, &s.a[i] (down through members and subscripts of
         * the variable's own storage, not through pointers) */
        pp_kids kk = pp_children(c);
        CXCursor o = kk.n == 1 ? pp_strip(kk.v[0]) : clang_getNullCursor();
        while (pp_kind(o) == CXCursor_MemberRefExpr || pp_kind(o) == CXCursor_ArraySubscriptExpr) {
            pp_kids ok = pp_children(o);
            CXCursor base = ok.n ? pp_strip(ok.v[0]) : clang_getNullCursor();
            free(ok.v);
            if (clang_Cursor_isNull(base) ||
                clang_getCanonicalType(clang_getCursorType(base)).kind == CXType_Pointer)
                break;
            o = base;
        }
        CXCursor v = pp_kind(o) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(o)
                                                        : clang_getNullCursor();
        if (!clang_Cursor_isNull(v)) {
            int vi = pp_var_find(rs->fn, v);
            if (vi >= 0)
                rs->taken[vi] = 1;
        }
        free(kk.v);
    }
    return CXChildVisit_Recurse;
}

/* Whether a value of type t can live in a C local of the body (spilled
 * and reloaded by plain assignment): scalars, enums and pointers. */
int pp_scalar(CXType t)
{
    CXType ct = clang_getCanonicalType(t);
    enum CXTypeKind k = ct.kind;
    return ((k >= CXType_Bool && k <= CXType_LongDouble) || k == CXType_Pointer ||
            k == CXType_Enum) &&
           !clang_isVolatileQualifiedType(t) && !clang_isVolatileQualifiedType(ct) &&
           pp_assignable(t);
}

static enum CXVisitorResult pp_local_field_cb(CXCursor c, CXClientData d)
{
    if (!pp_local_ok(clang_getCursorType(c))) {
        *pp_visit_flag(d) = 1;
        return CXVisit_Break;
    }
    return CXVisit_Continue;
}

static enum CXVisitorResult pp_const_field_cb(CXCursor c, CXClientData d)
{
    CXType ft = clang_getCursorType(c);
    if (clang_isConstQualifiedType(ft) || clang_isConstQualifiedType(clang_getCanonicalType(ft)) ||
        !pp_assignable(ft)) {
        *pp_visit_flag(d) = 1;
        return CXVisit_Break;
    }
    return CXVisit_Continue;
}

/* Whether C lets an object of type t, its own qualifiers dropped (as
 * its frame field declares it: pp_decl), be assigned as a whole: not
 * const-qualified through a typedef, and for a struct
 * or union, no member that is not (a const member, at any depth of
 * nested records and arrays of them). Copies levpp makes of one that is
 * not (pp_copy_into) go through memcpy. */
int pp_assignable(CXType t)
{
    CXType u = clang_getUnqualifiedType(t);
    char *sp = pp_cxstring(clang_getTypeSpelling(u));
    int unnamed = pp_bad_spelling(sp); /* pp_decl spells t, qualifiers kept */
    free(sp);
    CXType ct = clang_getCanonicalType(unnamed ? t : u);
    if (clang_isConstQualifiedType(ct))
        return 0; /* a typedef of a const type */
    while (ct.kind == CXType_ConstantArray || ct.kind == CXType_IncompleteArray ||
           ct.kind == CXType_VariableArray) {
        ct = clang_getCanonicalType(clang_getArrayElementType(ct));
        if (clang_isConstQualifiedType(ct))
            return 0;
    }
    if (ct.kind != CXType_Record)
        return 1;
    int bad = 0;
    clang_Type_visitFields(ct, pp_const_field_cb, &bad);
    return !bad;
}

/* The statement text copying src (an expression or a braced initialiser
 * of dst's type) into dst (an lvalue) of type t: an assignment, or for a
 * type C does not let be assigned (pp_assignable: a const member, a
 * const typedef), a copy of its bytes through a temporary initialised
 * with src. An expression (no `;`). */
char *pp_copy_into(const char *dst, const char *src, CXType t)
{
    if (pp_assignable(t) && clang_getCanonicalType(t).kind != CXType_ConstantArray)
        return pp_fmt("%s = %s", dst, src);
    return pp_fmt("({ __typeof__(%s) lev__cv = %s; __builtin_memcpy((void *)&(%s), &lev__cv, "
                  "sizeof lev__cv); })",
                  dst, src, dst);
}

/* Appends `\nDST = (SRC);`, or its copy (pp_copy_into). */
void pp_put_copy(pp_buf *b, const char *dst, const char *src, CXType t)
{
    char *x = pp_fmt("(%s)", src);
    char *cp = pp_copy_into(dst, x, t);
    pp_printf(b, "\n%s;", cp);
    free(cp);
    free(x);
}

/* Whether a variable of type t can live in a C local of the body: a
 * scalar, an enum or a pointer, or a struct or union of at most 64 bytes
 * made of those (no array member, which would decay to a pointer into
 * the C local), copied by assignment like a scalar. */
int pp_local_ok(CXType t)
{
    if (pp_scalar(t))
        return 1;
    CXType ct = clang_getCanonicalType(t);
    if (ct.kind != CXType_Record || clang_isVolatileQualifiedType(t) ||
        clang_isVolatileQualifiedType(ct))
        return 0;
    long long sz = clang_Type_getSizeOf(ct);
    if (sz <= 0 || sz > 64 || !pp_assignable(t))
        return 0; /* spilled and reloaded by assignment */
    int bad = 0;
    clang_Type_visitFields(ct, pp_local_field_cb, &bad);
    return !bad;
}

/* Whether an array of type t can live in a C local of the body (when
 * its references only reach its elements: pp_regs): a constant-size
 * array of at most 256 bytes of scalars and pointers, copied to and from
 * the frame with memcpy. */
int pp_local_array_ok(CXType t)
{
    CXType ct = clang_getCanonicalType(t);
    if (ct.kind != CXType_ConstantArray || clang_isVolatileQualifiedType(t))
        return 0;
    long long sz = clang_Type_getSizeOf(ct);
    CXType e = clang_getArrayElementType(ct);
    while (clang_getCanonicalType(e).kind == CXType_ConstantArray)
        e = clang_getArrayElementType(clang_getCanonicalType(e));
    return sz > 0 && sz <= 256 && pp_scalar(e);
}

/* Chooses the vars that live in C locals while the body runs: scalars,
 * pointers and small structs of them (pp_local_ok) that are used and
 * whose address (or a member's) is never taken. They are loaded
 * from the frame when the body is entered or resumed and stored back only
 * when it unwinds; arrays, structs, volatile and address-taken variables
 * stay in the frame, where pointers to them remain valid. */
void pp_regs(pp_fn *fn)
{
    size_t n = fn->nvars + 1;
    pp_var_refs rs = {.magic = PP_MAGIC_VAR_REFS,
                      .fn = fn,
                      .refs = pp_xrealloc(NULL, n * sizeof *rs.refs),
                      .taken = pp_xrealloc(NULL, n),
                      .plain = pp_xrealloc(NULL, n * sizeof *rs.plain)};
    memset(rs.refs, 0, n * sizeof *rs.refs);
    memset(rs.taken, 0, n);
    memset(rs.plain, 0, n * sizeof *rs.plain);
    clang_visitChildren(fn->def, pp_regs_cb, &rs);
    for (unsigned i = 0; i < fn->nvars; i++) {
        pp_var *v = &fn->vars[i];
        v->refs = rs.refs[i];
        int ok = pp_local_ok(v->type) ||
                 (i >= fn->nparams && pp_local_array_ok(v->type) && rs.plain[i] >= rs.refs[i]);
        v->reg = ok && !v->vla.kind && rs.refs[i] && !rs.taken[i] && !pp_argv_retyped(fn, (int)i);
    }
    free(rs.refs);
    free(rs.taken);
    free(rs.plain);
}

/* The statement returning `code` (a LEV_RUN_* expression) from a body
 * of fn, with the value `val` (NULL: none): task and main entries return
 * the int the runtime expects, other functions their __ret struct. */
char *pp_return(pp_fn *fn, const char *code, const char *val)
{
    if (fn->is_task || fn->is_main)
        return pp_fmt("return %s;", code);
    if (val)
        return pp_fmt("return (lev__ret_t){.rc = %s, .v = (%s)};", code, val);
    return pp_fmt("return (lev__ret_t){.rc = %s};", code);
}

/* Numbers a new safe point or call site of fn at offset `at` of its input
 * (what decides which variables are in scope there). */
unsigned pp_site_new(pp_fn *fn, unsigned at)
{
    unsigned k = ++fn->npc;
    while (k >= fn->capsites) {
        fn->capsites = fn->capsites ? fn->capsites * 2 : 16;
        fn->site_at = pp_xrealloc(fn->site_at, fn->capsites * sizeof *fn->site_at);
    }
    fn->site_at[k] = at;
    return k;
}

static enum CXChildVisitResult pp_site_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_kind(c) == CXCursor_UnaryExpr)
        return CXChildVisit_Continue; /* sizeof, _Alignof: not evaluated */
    if (pp_kind(c) == CXCursor_VarDecl) {
        pp_visit_init(c, pp_site_cb, d);
        return *pp_visit_flag(d) ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    if (pp_kind(c) != CXCursor_CallExpr)
        return CXChildVisit_Recurse;
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) == CXCursor_FunctionDecl) {
        char *name = pp_cxstring(clang_getCursorSpelling(ref));
        char *usr = pp_fn_usr(ref);
        int g = pp_fn_find(usr);
        if (pp_safepoint_kind(name) || (g >= 0 && ctx.fns[g].cp) ||
            pp_setjmp_kind(name, NULL) == PP_SJ_SET)
            *pp_visit_flag(d) = 1;
        free(name);
        free(usr);
    } else if (pp_icall_cp(c)) {
        *pp_visit_flag(d) = 1;
    }
    return *pp_visit_flag(d) ? CXChildVisit_Break : CXChildVisit_Recurse;
}

enum CXChildVisitResult pp_site_any_call_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_kind(c) == CXCursor_CallExpr) {
        *pp_visit_flag(d) = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* Whether c is or contains a safe point, a call of a checkpointable
 * function or a setjmp (whose site has a resume point). */
int pp_has_site(CXCursor c) { return pp_visit_finds(c, pp_site_cb); }

typedef struct pp_modified_vars {
    unsigned magic; /* PP_MAGIC_MODIFIED */
    CXCursor *v;
    unsigned n, cap;
    int hit;
} pp_modified_vars;

static enum CXChildVisitResult pp_refs_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_modified_vars *m = pp_visit_state(d, PP_MAGIC_MODIFIED);
    if (pp_kind(c) == CXCursor_DeclRefExpr) {
        CXCursor r = clang_getCursorReferenced(c);
        if (pp_kind(r) == CXCursor_VarDecl || pp_kind(r) == CXCursor_ParmDecl) {
            PP_PUSH(m->v, m->n, m->cap);
            m->v[m->n++] = r;
        }
    }
    return CXChildVisit_Recurse;
}

/* Whether e (stripped) names one of m's variables. */
static int pp_names_one(pp_modified_vars *m, CXCursor e)
{
    e = pp_strip(e);
    if (pp_kind(e) != CXCursor_DeclRefExpr)
        return 0;
    CXCursor r = clang_getCursorReferenced(e);
    for (unsigned i = 0; i < m->n; i++)
        if (clang_equalCursors(m->v[i], r))
            return 1;
    return 0;
}

static enum CXChildVisitResult pp_modified_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_modified_vars *m = pp_visit_state(d, PP_MAGIC_MODIFIED);
    int lhs = pp_writes_operand(c);
    if (lhs) {
        pp_kids kk = pp_children(c);
        if (kk.n >= 1 && pp_names_one(m, kk.v[0]))
            m->hit = 1;
        free(kk.v);
    }
    return m->hit ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* A counted for loop: `for (...; i OP bound; i++ / i-- / i += s / i -= s)`
 * (OP one of < <= > >= !=) whose body assigns none of the variables of
 * its condition and increment, nor takes their address: its trip count is
 * fixed when it starts, so it bounds the time between two polls of an
 * enclosing loop. */
int pp_counted(CXCursor cond, CXCursor inc, CXCursor body)
{
    if (clang_Cursor_isNull(cond) || clang_Cursor_isNull(inc) || clang_Cursor_isNull(body))
        return 0;
    CXCursor in = pp_strip(inc), cn = pp_strip(cond);
    enum CXCursorKind ik = pp_kind(in);
    if (ik == CXCursor_UnaryOperator) {
        enum CXUnaryOperatorKind op = clang_getCursorUnaryOperatorKind(in);
        if (op != CXUnaryOperator_PostInc && op != CXUnaryOperator_PostDec &&
            op != CXUnaryOperator_PreInc && op != CXUnaryOperator_PreDec)
            return 0;
    } else if (ik == CXCursor_CompoundAssignOperator) {
        enum CXBinaryOperatorKind op = clang_getCursorBinaryOperatorKind(in);
        if (op != CXBinaryOperator_AddAssign && op != CXBinaryOperator_SubAssign)
            return 0;
    } else {
        return 0;
    }
    if (pp_kind(cn) != CXCursor_BinaryOperator)
        return 0;
    enum CXBinaryOperatorKind cop = clang_getCursorBinaryOperatorKind(cn);
    if (cop != CXBinaryOperator_LT && cop != CXBinaryOperator_GT && cop != CXBinaryOperator_LE &&
        cop != CXBinaryOperator_GE && cop != CXBinaryOperator_NE)
        return 0;
    pp_kids ik2 = pp_children(in), ck = pp_children(cn);
    int ok = ik2.n >= 1 && ck.n == 2;
    pp_modified_vars iv = {.magic = PP_MAGIC_MODIFIED}, m = {.magic = PP_MAGIC_MODIFIED};
    if (ok) {
        /* the induction variable is one side of the comparison */
        CXCursor v = pp_strip(ik2.v[0]);
        if (pp_kind(v) == CXCursor_DeclRefExpr) {
            PP_PUSH(iv.v, iv.n, iv.cap);
            iv.v[iv.n++] = clang_getCursorReferenced(v);
        }
        ok = iv.n && (pp_names_one(&iv, ck.v[0]) || pp_names_one(&iv, ck.v[1]));
    }
    if (ok) {
        clang_visitChildren(cn, pp_refs_cb, &m);
        clang_visitChildren(in, pp_refs_cb, &m);
        if (pp_modified_cb(body, body, &m) != CXChildVisit_Break)
            clang_visitChildren(body, pp_modified_cb, &m);
        ok = !m.hit;
    }
    free(iv.v);
    free(m.v);
    free(ik2.v);
    free(ck.v);
    return ok;
}
