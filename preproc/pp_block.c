/* pp_block.c - the blocking Leverage calls (lev_recv, lev_send,
 * lev_global_lock, lev_global_read) in checkpointable bodies: their
 * arguments kept in temporaries, and the code of their blocking safe
 * points, which issue the call's lev_abi.h `NAME_try` form and re-issue it
 * at the resume point (see README, "Shape of the output": blocking
 * calls).
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* Temporaries for the arguments of blocking call c of function `ref` in
 * fn, one per parameter of its prototype and of its type, numbered from
 * the one returned. 0 after an error naming the call (no prototype, or a
 * different number of arguments). */
unsigned pp_block_args(pp_fn *fn, CXCursor c, CXCursor ref, const char *name)
{
    CXType ft = clang_getCursorType(ref);
    int n = clang_Cursor_getNumArguments(c);
    if (ft.kind != CXType_FunctionProto || n < 0 || clang_getNumArgTypes(ft) != n ||
        clang_isFunctionTypeVariadic(ft)) {
        pp_error(PP_LOC(c),
                 "call of blocking function '%s' in checkpointable function '%s' does not match "
                 "its prototype in lev_task.h; include leverage/lev_task.h",
                 name, fn->name);
        return 0;
    }
    unsigned first = fn->ntmps + 1;
    for (int i = 0; i < n; i++)
        pp_tmp_new(fn, clang_getArgType(ft, (unsigned)i));
    return first;
}

/* The code of blocking site s (call s->cur of `name`, its value in
 * lev__rK): the arguments evaluated once into their temporaries, then
 * the resume point, where the `NAME_try` form is issued on them; while it
 * returns LEV_BLOCKED the VT stops at a LEV_SP_BLOCK safe point and issues
 * it again when resumed. Temporaries that hold pointers are cleared once
 * the call is done, so that no stale copy reaches a later capture. */
void pp_block_text(pp_walk *w, const pp_site *s, pp_buf *b)
{
    pp_fn *fn = w->fn;
    char *name = pp_cxstring(clang_getCursorSpelling(clang_getCursorReferenced(s->cur)));
    int n = clang_Cursor_getNumArguments(s->cur);
    char **t = pp_xrealloc(NULL, (size_t)(n > 0 ? n : 1) * sizeof *t);
    for (int i = 0; i < n; i++) {
        unsigned k = s->arg0 + (unsigned)i;
        t[i] = pp_slot_ref('t', k, fn->tmps[k - 1].type);
        char *x = pp_render_str(w->f, clang_Cursor_getArgument(s->cur, (unsigned)i), 1);
        pp_printf(b, "\n%s = (%s);", t[i], x);
        free(x);
    }
    char *r = pp_slot_ref('r', s->k, clang_getCursorType(s->cur));
    pp_printf(b, "\nlev__resume_%u: __attribute__((__unused__));\n%s = %s_try(vt", s->k, r, name);
    for (int i = 0; i < n; i++)
        pp_printf(b, ", %s", t[i]);
    pp_printf(b,
              ");\nif (%s == LEV_BLOCKED) {\n    if (lev_safepoint(vt, LEV_SP_BLOCK))\n"
              "        goto lev__unwind_%u;\n    goto lev__resume_%u;\n}",
              r, s->k, s->k);
    for (int i = 0; i < n; i++) {
        if (pp_has_pointer(fn->tmps[s->arg0 + (unsigned)i - 1].type))
            pp_printf(b, "\n%s = 0;", t[i]);
        free(t[i]);
    }
    free(t);
    free(r);
    free(name);
}
