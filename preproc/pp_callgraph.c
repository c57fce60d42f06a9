/* pp_callgraph.c - the functions of all inputs and the call graph over
 * them (direct and indirect calls), and the fixpoint that finds which
 * functions are checkpointable.
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* ===================================================================
 * Functions and the call graph
 * =================================================================== */

/* The functions by USR: open addressing over indices into ctx.fns (+1;
 * 0: empty). ctx.fns only grows, so the functions added since the last
 * lookup are indexed at the next one. */
static struct {
    unsigned *slot;
    unsigned cap, indexed;
} pp_fn_index;

static unsigned pp_usr_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void pp_fn_index_add(unsigned i)
{
    unsigned h = pp_usr_hash(ctx.fns[i].usr) & (pp_fn_index.cap - 1);
    while (pp_fn_index.slot[h])
        h = (h + 1) & (pp_fn_index.cap - 1);
    pp_fn_index.slot[h] = i + 1;
}

/* The key of function decl among the functions of all inputs: its USR,
 * which for a function with internal linkage names the base name of its
 * file only (`c:util.c@F@step`), so there also the identity of the file
 * that defines it (or declares it, when no definition is at hand): two
 * inputs a/util.c and b/util.c have two functions, and an input that
 * includes a file whose static function another input defines names the
 * same one. Malloc'd. */
char *pp_fn_usr(CXCursor decl)
{
    char *usr = pp_cxstring(clang_getCursorUSR(decl));
    if (clang_getCursorLinkage(decl) != CXLinkage_Internal)
        return usr;
    CXCursor def = clang_getCursorDefinition(decl);
    CXFile f;
    clang_getExpansionLocation(PP_LOC(clang_Cursor_isNull(def) ? decl : def), &f, NULL, NULL, NULL);
    CXFileUniqueID id;
    if (!f || clang_getFileUniqueID(f, &id))
        return usr;
    char *key = pp_fmt("%s@%llx.%llx.%llx", usr, id.data[0], id.data[1], id.data[2]);
    free(usr);
    return key;
}

int pp_fn_find(const char *usr)
{
    if (2 * ctx.nfns >= pp_fn_index.cap) { /* grow: index every function again */
        unsigned cap = pp_fn_index.cap ? pp_fn_index.cap : 64;
        while (2 * ctx.nfns >= cap)
            cap *= 2;
        free(pp_fn_index.slot);
        pp_fn_index.slot = pp_xrealloc(NULL, cap * sizeof *pp_fn_index.slot);
        memset(pp_fn_index.slot, 0, cap * sizeof *pp_fn_index.slot);
        pp_fn_index.cap = cap;
        pp_fn_index.indexed = 0;
    }
    for (; pp_fn_index.indexed < ctx.nfns; pp_fn_index.indexed++)
        pp_fn_index_add(pp_fn_index.indexed);
    for (unsigned h = pp_usr_hash(usr) & (pp_fn_index.cap - 1); pp_fn_index.slot[h];
         h = (h + 1) & (pp_fn_index.cap - 1))
        if (!strcmp(ctx.fns[pp_fn_index.slot[h] - 1].usr, usr))
            return (int)pp_fn_index.slot[h] - 1;
    return -1;
}

/* The function defined in the inputs that call c calls directly, or -1. */
int pp_fn_called(CXCursor c)
{
    if (pp_kind(c) != CXCursor_CallExpr)
        return -1;
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) != CXCursor_FunctionDecl)
        return -1;
    char *usr = pp_fn_usr(ref);
    int g = pp_fn_find(usr);
    free(usr);
    return g >= 0 && ctx.fns[g].file >= 0 && !clang_Cursor_isNull(ctx.fns[g].def) ? g : -1;
}

static int pp_fn_get(CXCursor decl)
{
    char *usr = pp_fn_usr(decl);
    int i = pp_fn_find(usr);
    if (i >= 0) {
        free(usr);
        return i;
    }
    PP_PUSH(ctx.fns, ctx.nfns, ctx.capfns);
    pp_fn *fn = &ctx.fns[ctx.nfns];
    memset(fn, 0, sizeof *fn);
    fn->usr = usr;
    fn->name = pp_cxstring(clang_getCursorSpelling(decl));
    fn->file = -1;
    return (int)ctx.nfns++;
}

/* Whether c is a loop: a for, or a while or do-while whose condition is
 * not the constant 0 (`do { ... } while (0)` in macros). */
int pp_is_loop(CXCursor c)
{
    enum CXCursorKind k = pp_kind(c);
    if (k == CXCursor_ForStmt)
        return 1;
    if (k != CXCursor_WhileStmt && k != CXCursor_DoStmt)
        return 0;
    pp_kids kk = pp_children(c);
    int loop = 1;
    if (kk.n == 2) {
        CXEvalResult ev = clang_Cursor_Evaluate(kk.v[k == CXCursor_DoStmt ? 1 : 0]);
        if (ev && clang_EvalResult_getKind(ev) == CXEval_Int &&
            clang_EvalResult_getAsLongLong(ev) == 0)
            loop = 0;
        if (ev)
            clang_EvalResult_dispose(ev);
    }
    free(kk.v);
    return loop;
}

typedef struct pp_calls_scan {
    unsigned magic; /* PP_MAGIC_CALLS */
    int fn;
} pp_calls_scan;

/* The safe-point kind (a LEV_SP_* name) of a call of the Leverage
 * function `name` that is a safe point in checkpointable code, or NULL.
 * LEV_SP_BLOCK: a blocking call, issued as its lev_abi.h `NAME_try` form
 * and re-issued at its resume point (pp_block.c). */
const char *pp_safepoint_kind(const char *name)
{
    static const char *const calls[][2] = {{"lev_checkpoint", "LEV_SP_CHECKPOINT"},
                                           {"lev_yield", "LEV_SP_YIELD"},
                                           {"lev_recv", "LEV_SP_BLOCK"},
                                           {"lev_send", "LEV_SP_BLOCK"},
                                           {"lev_global_lock", "LEV_SP_BLOCK"},
                                           {"lev_global_read", "LEV_SP_BLOCK"}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (!strcmp(name, calls[i][0]))
            return calls[i][1];
    return NULL;
}

/* The canonical spelling of a function type, or of the function type a
 * pointer points to: what matches an indirect call with its candidates.
 * NULL: not a function type. */
static char *pp_fn_key(CXType t)
{
    t = clang_getCanonicalType(t);
    if (t.kind == CXType_Pointer)
        t = clang_getCanonicalType(clang_getPointeeType(t));
    if (t.kind != CXType_FunctionProto)
        return NULL;
    return pp_cxstring(clang_getTypeSpelling(t));
}

/* The function type key (pp_fn_key) of the callee of an indirect call c. */
char *pp_icall_key(CXCursor c)
{
    pp_kids k = pp_children(c);
    char *key = k.n ? pp_fn_key(clang_getCursorType(k.v[0])) : NULL;
    free(k.v);
    return key;
}

static enum CXChildVisitResult pp_calls_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_calls_scan *sc = pp_visit_state(d, PP_MAGIC_CALLS);
    pp_fn *fn = &ctx.fns[sc->fn];
    if (pp_is_loop(c))
        fn->has_loop = 1;
    if (pp_kind(c) == CXCursor_CallExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        if (pp_kind(ref) == CXCursor_FunctionDecl) {
            char *name = pp_cxstring(clang_getCursorSpelling(ref));
            if (pp_safepoint_kind(name))
                fn->has_ckpt = 1;
            if (pp_setjmp_kind(name, NULL) == PP_SJ_SET)
                fn->has_setjmp = 1;
            free(name);
            int g = pp_fn_get(ref);
            fn = &ctx.fns[sc->fn]; /* the table may have moved */
            pp_copy_note(fn->file, g, ref);
            PP_PUSH(fn->callees, fn->ncallees, fn->capcallees);
            fn->callees[fn->ncallees++] = g;
        } else {
            char *key = pp_icall_key(c);
            if (key) {
                PP_PUSH(fn->itypes, fn->nitypes, fn->capitypes);
                fn->itypes[fn->nitypes++] = key;
            }
        }
    }
    return CXChildVisit_Recurse;
}

typedef struct pp_addr_taken_scan {
    unsigned magic; /* PP_MAGIC_ADDR_TAKEN */
    char *callee;   /* USR of the function a direct call just seen calls */
} pp_addr_taken_scan;

/* Marks the functions whose address is taken: every reference to a
 * function but the callee of a direct call (the first reference to it
 * under its call expression). */
static enum CXChildVisitResult pp_addr_taken_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    pp_addr_taken_scan *a = pp_visit_state(d, PP_MAGIC_ADDR_TAKEN);
    enum CXCursorKind k = pp_kind(c);
    if (k != CXCursor_CallExpr && k != CXCursor_DeclRefExpr)
        return CXChildVisit_Recurse;
    CXCursor ref = clang_getCursorReferenced(c);
    if (pp_kind(ref) != CXCursor_FunctionDecl)
        return CXChildVisit_Recurse;
    char *usr = pp_fn_usr(ref);
    if (k == CXCursor_CallExpr) {
        free(a->callee);
        a->callee = usr;
        return CXChildVisit_Recurse;
    }
    if (a->callee && !strcmp(a->callee, usr)) {
        free(a->callee);
        a->callee = NULL;
    } else {
        ctx.fns[pp_fn_get(ref)].addr_taken = 1;
    }
    free(usr);
    return CXChildVisit_Recurse;
}

/* Finds the functions whose address input fi takes (pp_addr_taken_cb). */
static void pp_addr_scan(unsigned fi)
{
    pp_kids k = pp_children(clang_getTranslationUnitCursor(ctx.files[fi].tu));
    pp_addr_taken_scan a = {.magic = PP_MAGIC_ADDR_TAKEN, .callee = NULL};
    for (unsigned i = 0; i < k.n; i++)
        if (pp_in_input(k.v[i]))
            clang_visitChildren(k.v[i], pp_addr_taken_cb, &a);
    free(a.callee);
    free(k.v);
}

/* Whether g is a candidate of an indirect call of type `key`: a
 * function of the inputs of that type whose address is taken. */
int pp_icall_candidate(const pp_fn *g, const char *key)
{
    if (g->file < 0 || !g->addr_taken || g->is_task || g->is_main)
        return 0;
    char *gk = pp_fn_key(clang_getCursorType(g->def));
    int same = gk && !strcmp(gk, key);
    free(gk);
    return same;
}

/* Whether the indirect call c may reach a checkpointable function (a
 * checkpointable candidate: pp_icall_candidate), which makes it a site. */
int pp_icall_cp(CXCursor c)
{
    char *key = pp_icall_key(c);
    int any = 0;
    for (unsigned j = 0; key && j < ctx.nfns && !any; j++)
        any = ctx.fns[j].cp && pp_icall_candidate(&ctx.fns[j], key);
    free(key);
    return any;
}

/* Adds to the call graph an edge from each indirect call to each of its
 * candidates, so that what a pointer may reach counts like a direct call. */
static void pp_icall_edges(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        for (unsigned t = 0; t < ctx.fns[i].nitypes; t++)
            for (unsigned j = 0; j < ctx.nfns; j++)
                if (pp_icall_candidate(&ctx.fns[j], ctx.fns[i].itypes[t])) {
                    pp_fn *fn = &ctx.fns[i];
                    PP_PUSH(fn->callees, fn->ncallees, fn->capcallees);
                    fn->callees[fn->ncallees++] = (int)j;
                }
}

/* Sets bit 1 of the flag for a lev_task annotation, bit 2 for lev_atomic. */
static enum CXChildVisitResult pp_is_task_cb(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (pp_kind(c) == CXCursor_AnnotateAttr) {
        char *s = pp_cxstring(clang_getCursorSpelling(c));
        if (!strcmp(s, "lev_task"))
            *pp_visit_flag(d) |= 1;
        else if (!strcmp(s, "lev_atomic"))
            *pp_visit_flag(d) |= 2;
        free(s);
    }
    return CXChildVisit_Continue;
}

/* Records the functions defined in file fi and their calls. */
static void pp_collect_fns(unsigned fi)
{
    pp_file *f = &ctx.files[fi];
    pp_kids k = pp_children(clang_getTranslationUnitCursor(f->tu));
    for (unsigned i = 0; i < k.n; i++) {
        CXCursor c = k.v[i];
        if (pp_kind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) || !pp_in_input(c))
            continue;
        int id = pp_fn_get(c);
        pp_fn *fn = &ctx.fns[id];
        if (fn->file >= 0) {
            pp_error(PP_LOC(c), "function '%s' is defined in two inputs", fn->name);
            continue;
        }
        fn->file = (int)fi;
        fn->def = c;
        int marks = 0;
        clang_visitChildren(c, pp_is_task_cb, &marks);
        fn->is_task = marks & 1;
        fn->is_atomic = (marks & 2) != 0;
        if (fn->is_task && fn->is_atomic)
            pp_error(PP_LOC(c), "task entry '%s' cannot be LEV_ATOMIC: an entry is checkpointable",
                     fn->name);
        fn->is_main = ctx.main_task && !strcmp(fn->name, "main");
        pp_calls_scan sc = {.magic = PP_MAGIC_CALLS, .fn = id};
        clang_visitChildren(c, pp_calls_cb, &sc);
    }
    free(k.v);
}

static void pp_mark_reach(int i)
{
    pp_fn *fn = &ctx.fns[i];
    if (fn->reach || fn->file < 0)
        return;
    fn->reach = 1;
    for (unsigned j = 0; j < fn->ncallees; j++)
        pp_mark_reach(fn->callees[j]);
}

static void pp_fixpoint(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].is_task || ctx.fns[i].is_main)
            pp_mark_reach((int)i);
    /* must[i]: function i reaches a safe point of its own (not only loop
     * polls), or is an entry */
    unsigned char *must = pp_xrealloc(NULL, ctx.nfns + 1),
                  *variadic = pp_xrealloc(NULL, ctx.nfns + 1);
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        /* A variadic function's loops do not poll: its `...` arguments
         * cannot be kept in a frame, and a loop alone does not need to
         * stop there (as a recursion without loops does not). For the
         * same reason it calls functions whose only stops are loop polls
         * natively. A LEV_ATOMIC function is treated the same way, because
         * its author asked for it. */
        variadic[i] =
            fn->file >= 0 && !clang_Cursor_isNull(fn->def) &&
            (fn->is_atomic || clang_isFunctionTypeVariadic(clang_getCursorType(fn->def)) == 1);
        must[i] = fn->file >= 0 && (fn->is_task || fn->is_main || fn->has_ckpt);
        fn->cp = must[i] ||
                 (fn->file >= 0 && ctx.auto_poll && fn->reach && fn->has_loop && !variadic[i]);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (unsigned i = 0; i < ctx.nfns; i++) {
            pp_fn *fn = &ctx.fns[i];
            for (unsigned j = 0; !must[i] && fn->file >= 0 && j < fn->ncallees; j++)
                if (must[fn->callees[j]])
                    must[i] = changed = 1;
            if (fn->cp || fn->file < 0)
                continue;
            for (unsigned j = 0; j < fn->ncallees; j++)
                if (ctx.fns[fn->callees[j]].cp && (!variadic[i] || must[fn->callees[j]])) {
                    fn->cp = changed = 1;
                    break;
                }
        }
    }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].is_atomic && must[i] && !ctx.fns[i].is_task)
            pp_error(PP_LOC(ctx.fns[i].def),
                     "function '%s' is LEV_ATOMIC but reaches a safe point (it calls one, or a "
                     "function that does): a VT cannot stop in it; remove LEV_ATOMIC or move the "
                     "safe point out of it",
                     ctx.fns[i].name);
    free(must);
    free(variadic);
}

/* The name of the macro whose invocation at offset `off` of f writes a
 * definition (malloc'd). */
static char *pp_macro_at(const pp_file *f, unsigned off)
{
    unsigned e = off;
    while (e < f->len && (f->text[e] == '_' || (f->text[e] >= '0' && f->text[e] <= '9') ||
                          ((f->text[e] | 32) >= 'a' && (f->text[e] | 32) <= 'z')))
        e++;
    return pp_fmt("%.*s", (int)(e - off), f->text + off);
}

/* A definition that a macro still writes (its head or whole definition
 * could not be expanded in place, pp_expand.c: the expansion would expand
 * again, or cannot keep its lines): the passes rewrite a body as the
 * input's text, so a checkpointable function whose body the macro writes,
 * and a main whose name it writes (renamed main__native), are refused,
 * naming the macro. A name alone written by a macro is no obstacle: the
 * definition stays as written, the bodies levpp writes use the name. */
static void pp_macro_defs(void)
{
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        if (fn->file < 0 || !fn->cp)
            continue;
        pp_kids k = pp_children(fn->def);
        CXCursor body = k.n ? k.v[k.n - 1] : clang_getNullCursor();
        free(k.v);
        CXSourceLocation at = PP_LOC(fn->def);
        int body_macro = !clang_Cursor_isNull(body) && pp_in_macro(body);
        if (body_macro)
            at = clang_getRangeStart(clang_getCursorExtent(body));
        if (!body_macro && !(fn->is_main && pp_loc_in_macro(at)))
            continue;
        char *m = pp_macro_at(&ctx.files[fn->file], pp_off(at));
        pp_error(at,
                 "%s '%s' is written by macro '%s', which levpp could not expand in place (the "
                 "expansion would expand again, or cannot keep its lines): levpp rewrites %s as "
                 "the input's text; define it without the macro",
                 body_macro ? "the body of checkpointable function" : "the name of", fn->name, m,
                 body_macro ? "a checkpointable body" : "main's name");
        free(m);
    }
}

/* Pass: the functions of every input and the call graph over all of
 * them, which functions are checkpointable (the fixpoint), then the C
 * name and id of each defined function. `first_input` names the run in
 * the error for a --main-task run without main. */
void pp_call_graph_pass(const char *first_input)
{
    for (unsigned i = 0; i < ctx.nfiles; i++)
        pp_collect_fns(i);
    for (unsigned i = 0; i < ctx.nfiles; i++)
        pp_addr_scan(i);
    pp_icall_edges();
    pp_fixpoint();
    pp_macro_defs();
    pp_copies();
    int have_main = 0;
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        have_main |= fn->is_main;
        if (fn->file >= 0) {
            int dup = 0;
            for (unsigned j = 0; j < ctx.nfns; j++)
                dup |= j != i && ctx.fns[j].file >= 0 && !strcmp(ctx.fns[j].name, fn->name);
            fn->cname =
                dup ? pp_fmt("%s__%s", fn->name, ctx.files[fn->file].stem) : pp_strdup(fn->name);
            char *id = pp_ident(fn->cname);
            fn->idname = pp_fmt("LEV__FN_%s", id);
            free(id);
        }
    }
    if (ctx.main_task && !have_main)
        pp_error_noloc(first_input, "--main-task: no definition of main");
}
