/* pp_copy.c - copies of included static functions: a checkpointable
 * static function of one input that another input defines too, because it
 * includes the first input's file (lz4hc.c includes lz4.c for LZ4_count),
 * gets its resumable bodies in that other input's output as well, so that
 * its calls there stay direct and can be inlined, as natively, where they
 * would otherwise cross inputs through __xrun.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* A call of static function g from input `file`, whose own definition of
 * g is `def` (not in its main file). */
typedef struct pp_copy_cand {
    int file, g;
    CXCursor def;
} pp_copy_cand;

static pp_copy_cand *s_cands;
static unsigned s_ncands, s_capcands;

void pp_copy_note(int file, int g, CXCursor ref)
{
    CXCursor def = clang_getCursorDefinition(ref);
    if (clang_Cursor_isNull(def) || pp_in_input(def) ||
        clang_Cursor_getStorageClass(def) != CX_SC_Static)
        return;
    for (unsigned i = 0; i < s_ncands; i++)
        if (s_cands[i].file == file && s_cands[i].g == g)
            return;
    PP_PUSH(s_cands, s_ncands, s_capcands);
    s_cands[s_ncands++] = (pp_copy_cand){file, g, def};
}

typedef struct pp_sig {
    unsigned magic; /* PP_MAGIC_SIG */
    pp_buf b;       /* the definition as the compiler sees it */
    int bad;        /* holds what a copy could not share (below) */
} pp_sig;

/* Whether cursor c refers to something a copy in another input could not
 * name as the original does: a variable outside the function (another
 * object in each input), a function whose address is taken (another
 * address in each input), a checkpointable function, or one outside the
 * inputs but the compiler's builtins. */
static int pp_sig_ref_bad(CXCursor c)
{
    CXCursor r = clang_getCursorReferenced(c);
    enum CXCursorKind rk = pp_kind(r);
    if (rk == CXCursor_VarDecl || rk == CXCursor_ParmDecl)
        return pp_kind(clang_getCursorSemanticParent(r)) != CXCursor_FunctionDecl;
    if (rk != CXCursor_FunctionDecl)
        return 0;
    char *usr = pp_fn_usr(r), *name = pp_cxstring(clang_getCursorSpelling(r));
    int i = pp_fn_find(usr), builtin = !strncmp(name, "__builtin_", 10);
    int bad = i < 0 || ctx.fns[i].file < 0 ? !builtin : ctx.fns[i].cp || ctx.fns[i].addr_taken;
    free(usr);
    free(name);
    return bad;
}

/* Appends c to the signature: its kind, spelling, canonical type, what it
 * refers to, and a literal's value, so that two definitions with the same
 * signature mean the same (macros and typedefs expanded as each input has
 * them); marks what a copy could not share. */
static enum CXChildVisitResult pp_sig_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_sig *s = pp_visit_state(d, PP_MAGIC_SIG);
    enum CXCursorKind k = pp_kind(c);
    char *sp = pp_cxstring(clang_getCursorSpelling(c));
    char *ty = pp_cxstring(clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(c))));
    pp_printf(&s->b, "(%d %s %s", (int)k, sp, ty);
    free(sp);
    free(ty);
    if (k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr || k == CXCursor_CallExpr ||
        k == CXCursor_TypeRef) {
        /* a local by its name: its USR holds its offset, which differs
         * where levpp expanded the body's macros */
        CXCursor r = clang_getCursorReferenced(c);
        int local = pp_kind(clang_getCursorSemanticParent(r)) == CXCursor_FunctionDecl;
        char *usr = pp_cxstring(local ? clang_getCursorSpelling(r) : clang_getCursorUSR(r));
        pp_printf(&s->b, " %s", usr);
        free(usr);
    }
    if (k == CXCursor_IntegerLiteral || k == CXCursor_CharacterLiteral ||
        k == CXCursor_FloatingLiteral) {
        CXEvalResult ev = clang_Cursor_Evaluate(c);
        if (ev && clang_EvalResult_getKind(ev) == CXEval_Int)
            pp_printf(&s->b, " =%lld", clang_EvalResult_getAsLongLong(ev));
        else if (ev && clang_EvalResult_getKind(ev) == CXEval_Float)
            pp_printf(&s->b, " =%a", clang_EvalResult_getAsDouble(ev));
        else
            s->bad = 1;
        if (ev)
            clang_EvalResult_dispose(ev);
    }
    switch (k) {
    case CXCursor_StringLiteral:
    case CXCursor_AddrLabelExpr:
    case CXCursor_IndirectGotoStmt:
    case CXCursor_GCCAsmStmt:
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
    case CXCursor_EnumDecl:
    case CXCursor_TypedefDecl:
        s->bad = 1; /* hoisted, registered or moved to file scope by levpp */
        break;
    case CXCursor_VarDecl:
        if (clang_Cursor_getStorageClass(c) == CX_SC_Static ||
            clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_VariableArray)
            s->bad = 1;
        break;
    case CXCursor_CallExpr:
        if (pp_kind(clang_getCursorReferenced(c)) != CXCursor_FunctionDecl)
            s->bad = 1; /* through a pointer */
        break;
    case CXCursor_DeclRefExpr:
        s->bad |= pp_sig_ref_bad(c);
        break;
    default:
        break;
    }
    clang_visitChildren(c, pp_sig_cb, s);
    pp_puts(&s->b, ")");
    return CXChildVisit_Continue;
}

/* The signature of definition def; NULL if a copy could not share it. */
static char *pp_sig_of(CXCursor def)
{
    pp_sig s = {.magic = PP_MAGIC_SIG, .b = {0}, .bad = 0};
    clang_visitChildren(def, pp_sig_cb, &s);
    if (s.bad) {
        free(s.b.p);
        return NULL;
    }
    return s.b.p ? s.b.p : pp_strdup("");
}

/* Pass, after the checkpointable fixpoint: which inputs get a copy of
 * which functions. A copy is made of a checkpointable static function,
 * neither an entry nor variadic nor a value, that calls no checkpointable
 * function, directly or through a pointer, and whose body names nothing
 * levpp gives a file-scope name of the input's own (string literals,
 * static locals, local types, label addresses) nor a variable or function
 * outside it but as a direct callee, when the including input's definition
 * has the same signature (the same text can mean something else under
 * other macros). */
void pp_copies(void)
{
    for (unsigned i = 0; i < s_ncands; i++) {
        pp_copy_cand *c = &s_cands[i];
        pp_fn *g = &ctx.fns[c->g];
        if (!g->cp || g->file < 0 || g->file == c->file || g->is_task || g->is_main ||
            g->addr_taken || g->nitypes ||
            clang_isFunctionTypeVariadic(clang_getCursorType(g->def)) == 1)
            continue;
        int ok = 1;
        for (unsigned j = 0; j < g->ncallees && ok; j++)
            ok = !ctx.fns[g->callees[j]].cp;
        char *a = ok ? pp_sig_of(g->def) : NULL, *b = a ? pp_sig_of(c->def) : NULL;
        if (a && b && !strcmp(a, b)) {
            if (!g->copy_in) {
                g->copy_in = pp_xrealloc(NULL, ctx.nfiles);
                memset(g->copy_in, 0, ctx.nfiles);
            }
            g->copy_in[c->file] = 1;
        }
        free(a);
        free(b);
    }
    free(s_cands);
    s_cands = NULL;
    s_ncands = s_capcands = 0;
}

/* Whether input fi holds a copy of g's resumable bodies. */
int pp_copied(const pp_fn *g, int fi) { return g->copy_in && fi >= 0 && g->copy_in[fi]; }
