/* pp_setjmp.c - setjmp and longjmp in the inputs: which calls are which,
 * the code of a setjmp site in a checkpointable body, the wrapper that
 * registers the body of a function that calls setjmp, the longjmp of
 * checkpointable code, the renaming of every other longjmp, and the
 * refusal of a jmp_buf handed to code outside the inputs (see README,
 * "setjmp and longjmp", and lev_abi.h).
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* PP_SJ_SET: a setjmp (the macros setjmp and sigsetjmp expand to
 * _setjmp and __sigsetjmp); PP_SJ_LONG: a longjmp, with the runtime's
 * replacement in *repl; PP_SJ_REFUSED: GCC's builtins, whose buffer is an
 * array of pointers; 0: none of them. */
int pp_setjmp_kind(const char *name, const char **repl)
{
    static const char *const set[] = {"setjmp", "_setjmp", "sigsetjmp", "__sigsetjmp", NULL};
    static const char *const lng[][2] = {{"longjmp", "lev_longjmp"},
                                         {"_longjmp", "lev_longjmp"},
                                         {"siglongjmp", "lev_siglongjmp"},
                                         {NULL, NULL}};
    for (int i = 0; set[i]; i++)
        if (!strcmp(name, set[i]))
            return PP_SJ_SET;
    for (int i = 0; lng[i][0]; i++)
        if (!strcmp(name, lng[i][0])) {
            if (repl)
                *repl = lng[i][1];
            return PP_SJ_LONG;
        }
    if (!strcmp(name, "__builtin_setjmp") || !strcmp(name, "__builtin_longjmp"))
        return PP_SJ_REFUSED;
    return 0;
}

/* A reference to the external function `name` in input f (the common
 * pass, every function): a longjmp becomes the runtime's, which jumps to
 * a mobile setjmp's marker and passes any other jmp_buf to the C library.
 * In a checkpointable body pp_longjmp_call replaces the whole call. */
void pp_setjmp_ref(pp_file *f, CXCursor c, const char *name)
{
    const char *repl = NULL;
    int kind = pp_setjmp_kind(name, &repl);
    if (kind != PP_SJ_LONG)
        return;
    if (pp_rename_spelled(f, c, name, repl)) {
        pp_error(PP_LOC(c),
                 "%s inside a macro of another file cannot be rewritten to jump to a setjmp of "
                 "a virtual thread; call it outside the macro",
                 name);
    }
}

/* A longjmp call c in a checkpointable body: the jmp_buf must hold a
 * marker (a setjmp of native code can never be its target, since native
 * code calls no checkpointable body). Replaces the whole call in the
 * resumable copy, over the renaming of pp_setjmp_ref. */
void pp_longjmp_call(pp_walk *w, CXCursor c)
{
    unsigned cb, ce;
    if (clang_Cursor_getNumArguments(c) != 2 || !pp_span(w->f, c, &cb, &ce))
        return; /* the native copy's renaming applies */
    char *env = pp_render_str(w->f, clang_Cursor_getArgument(c, 0), 1);
    char *val = pp_render_str(w->f, clang_Cursor_getArgument(c, 1), 1);
    pp_edit_add(w->f, cb, ce, E_REPL, 0, 1,
                pp_fmt("lev_longjmp_vt(vt, (void *)(%s), (%s))", env, val));
    free(env);
    free(val);
}

/* Whether type t is a jmp_buf (or sigjmp_buf), or what one decays to: a
 * pointer to its element, glibc's struct __jmp_buf_tag. */
static int pp_is_jmp_buf(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind == CXType_Pointer)
        c = clang_getCanonicalType(clang_getPointeeType(c));
    else if (c.kind == CXType_ConstantArray)
        c = clang_getCanonicalType(clang_getArrayElementType(c));
    if (c.kind != CXType_Record)
        return 0;
    char *s = pp_cxstring(clang_getTypeSpelling(c));
    int is = strstr(s, "__jmp_buf_tag") != NULL;
    free(s);
    return is;
}

/* A call c of `name`, a function outside the inputs, in checkpointable
 * function fn: an argument that is a jmp_buf would let that code longjmp
 * with the C library's longjmp to a marker (the C library's byte
 * functions excepted). */
void pp_setjmp_args(pp_fn *fn, CXCursor c, const char *name)
{
    static const char *const bytes[] = {"memset", "memcpy",           "memmove",          "memcmp",
                                        "bzero",  "__builtin_memset", "__builtin_memcpy", NULL};
    if (pp_setjmp_kind(name, NULL))
        return;
    for (int i = 0; bytes[i]; i++)
        if (!strcmp(name, bytes[i]))
            return; /* they copy bytes, and never jump */
    int n = clang_Cursor_getNumArguments(c);
    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
        if (pp_is_jmp_buf(clang_getCursorType(pp_strip(a))))
            pp_error(PP_LOC(a),
                     "a jmp_buf passed to '%s', which is not in the inputs, in checkpointable "
                     "function '%s': a setjmp of a virtual thread leaves no machine state in it, "
                     "and that code would longjmp with the C library's longjmp",
                     name, fn->name);
    }
}

/* The code of setjmp site k (call c, its value in lev__rK unless `top`):
 * the marker, and the point the body resumes at after a jump, where
 * setjmp returns the value the registration keeps. Its unwind block is
 * never used (a setjmp does not stop). */
void pp_setjmp_text(pp_walk *w, CXCursor c, unsigned k, int top, pp_buf *b)
{
    char *env = pp_render_str(w->f, clang_Cursor_getArgument(c, 0), 1);
    char *dst = top ? pp_strdup("(void)") : pp_fmt("lev__r%u = ", k);
    pp_printf(b,
              "\n%slev_setjmp(vt, fr, (void *)(%s), %u);\n"
              "if (0) {\nlev__resume_%u: __attribute__((__unused__));\n"
              "    %svt->jmp->val;\n    if (0)\n        goto lev__unwind_%u;\n}",
              dst, env, k, k, dst, k);
    free(dst);
    free(env);
}

/* For a function that calls setjmp: its body is named NAME__sjbody and
 * the usual entry (__resume, or __run for an entry) becomes a wrapper
 * that registers the body's frame and a native jmp_buf on the C stack,
 * and runs the body again after a jump to one of its setjmps (the runtime
 * has set the frame's pc to the setjmp's site). Writes the wrapper and
 * returns the prototype of the body. */
char *pp_setjmp_wrap(pp_buf *b, pp_fn *fn)
{
    int entry = fn->is_task || fn->is_main;
    char *proto = entry ? pp_fmt("static int %s__sjbody(lev_ctx *vt, void *frame)", fn->cname)
                        : pp_fmt("static struct %s__ret %s__sjbody(lev_ctx *vt, struct %s__frame "
                                 "*fr)",
                                 fn->cname, fn->cname, fn->cname);
    char *outer = pp_run_proto(fn, 1);
    const char *arg = entry ? "frame" : "fr";
    char *rett = entry ? pp_strdup("int") : pp_fmt("struct %s__ret", fn->cname);
    pp_printf(b,
              "%s;\n\n%s\n{\n    lev_jmp_reg lev__j;\n    jmp_buf lev__jb;\n"
              "    lev_jmp_enter(vt, &lev__j, %s, lev__jb);\n"
              "    (void)setjmp(lev__jb); /* again after a longjmp to the body */\n"
              "    %s lev__x = %s__sjbody(vt, %s);\n    lev_jmp_leave(vt, &lev__j);\n"
              "    return lev__x;\n}\n\n",
              proto, outer, arg, rett, fn->cname, arg);
    free(rett);
    free(outer);
    return proto;
}

/* In the unwind block of site k of a function that calls setjmp: the
 * variables that only setjmp keeps in the frame and that are out of scope
 * at k are cleared, as the unwind of a C local stores 0, so that no stale
 * value of a dead variable (a pointer to a closed stream, a function of
 * the C library) reaches a capture. */
void pp_setjmp_dead(pp_buf *b, pp_fn *fn, unsigned k)
{
    for (unsigned i = 0; fn->has_setjmp && i < fn->nvars; i++)
        if (fn->vars[i].sj_frame && !pp_in_scope(fn, i, k))
            pp_printf(b, "        __builtin_memset(&fr->%s, 0, sizeof fr->%s);\n",
                      fn->vars[i].field, fn->vars[i].field);
}
