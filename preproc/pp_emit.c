/* pp_emit.c - output: frame types and their descriptors, and the text of
 * each output file, with one emission path for one input and many.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "levpp.h"

/* ===================================================================
 * Output
 * =================================================================== */

/* A frame field `name` of type t, after the variable's own alignment
 * specifiers `attrs` (pp_align_attrs). A typedef that raises the
 * alignment of an array type (`typedef char line[64]
 * __attribute__((aligned(64)))`) is spelled as its elements, which lose
 * it: the field gets `__alignof__` of the typedef then. */
static void pp_frame_field(pp_buf *o, CXType t, const char *name, const char *attrs)
{
    char *d = pp_decl(t, name);
    pp_printf(o, "    %s", attrs);
    if (clang_Type_getAlignOf(t) > clang_Type_getAlignOf(clang_getCanonicalType(t))) {
        char *sp = pp_cxstring(clang_getTypeSpelling(clang_getUnqualifiedType(t)));
        if (pp_bad_spelling(sp))
            pp_printf(o, "_Alignas(%lld) ", clang_Type_getAlignOf(t));
        else
            pp_printf(o, "_Alignas(__alignof__(%s)) ", sp);
        free(sp);
    }
    pp_printf(o, "%s;\n", d);
    free(d);
}

static void pp_frame_struct(pp_buf *o, pp_fn *fn)
{
    pp_printf(o, "struct %s__frame {\n    %s;\n", fn->cname,
              fn->is_task   ? "lev_task_frame t"
              : fn->is_main ? "lev_main_frame m"
                            : "lev_frame h");
    for (unsigned i = 0; i < fn->nvars; i++) {
        pp_var *v = &fn->vars[i];
        if (strchr(v->field, '.'))
            continue;
        if (v->vla.kind) {
            /* the pointer to the heap array (or the pointer variable, with
             * its first dimension unknown) and the variable dimensions */
            pp_buf nm = {0};
            pp_printf(&nm, v->vla.kind == PP_VLA_ARRAY ? "*%s" : "(*%s)[]", v->field);
            for (unsigned d = 1; v->vla.kind == PP_VLA_POINTER && d < v->vla.ndims; d++)
                pp_printf(&nm, "[%lld]", v->vla.cdim[d]);
            char *d = pp_decl(v->vla.elem, nm.p);
            pp_printf(o, "    %s;\n", d);
            free(d);
            free(nm.p);
            for (unsigned k = 0; k < v->vla.ndims; k++)
                if (v->vla.cdim[k] < 0)
                    pp_printf(o, "    unsigned long long lev__d%u_%s;\n", k, v->field);
            continue;
        }
        char *al = pp_align_attrs(v->decl, NULL);
        pp_frame_field(o, v->type, v->field, al);
        free(al);
    }
    for (unsigned i = 0; i < fn->nslots; i++) {
        char *nm = pp_fmt("lev__r%u", fn->slots[i].k);
        pp_frame_field(o, fn->slots[i].type, nm, "");
        free(nm);
    }
    for (unsigned i = 0; i < fn->ntmps; i++) {
        char *nm = pp_fmt("lev__t%u", fn->tmps[i].k);
        pp_frame_field(o, fn->tmps[i].type, nm, "");
        free(nm);
    }
    pp_puts(o, "};\n");
}

void pp_frame_type(int fi)
{
    pp_fn *fn = &ctx.fns[fi];
    PP_PUSH(ctx.types, ctx.ntypes, ctx.captypes);
    pp_type *ty = &ctx.types[ctx.ntypes++];
    memset(ty, 0, sizeof *ty);
    ty->key = pp_fmt("frame %s", fn->cname);
    ty->spell = pp_fmt("struct %s__frame", fn->cname);
    ty->idname = pp_fmt("LEV__T_%s__frame", fn->cname);
    ty->fn = fi;
    ty->owner = fn->file;
}

/* Fills the field tables of every type (may register more record types). */
void pp_describe_types(void)
{
    for (unsigned i = 0; i < ctx.ntypes; i++) {
        pp_type *ty = &ctx.types[i];
        ctx.cur_file = ty->owner;
        if (ty->fn >= 0) {
            pp_fn *fn = &ctx.fns[ty->fn];
            const char *owner = ty->spell;
            if (fn->is_task) {
                pp_field_row(ty, owner, "t.arg", "LEV_K_PTR", 1, "0");
                pp_field_row(ty, owner, "t.len", "LEV_K_B8", 1, "0");
            } else if (fn->is_main) {
                pp_field_row(ty, owner, "m.argc", "LEV_K_B4", 1, "0");
                pp_field_row(ty, owner, "m.argv", "LEV_K_PTR", 1, "0");
                pp_field_row(ty, owner, "m.ret", "LEV_K_B4", 1, "0");
            }
            for (unsigned v = 0; v < fn->nvars; v++) {
                pp_var *var = &fn->vars[v];
                if (strchr(var->field, '.'))
                    continue;
                if (!var->vla.kind) {
                    pp_fields(&ctx.types[i], owner, var->field, var->type, var->decl);
                    continue;
                }
                pp_field_row(&ctx.types[i], owner, var->field, "LEV_K_PTR", 1, "0");
                for (unsigned d = 0; d < var->vla.ndims; d++)
                    if (var->vla.cdim[d] < 0) {
                        char *nm = pp_fmt("lev__d%u_%s", d, var->field);
                        pp_field_row(&ctx.types[i], owner, nm, "LEV_K_B8", 1, "0");
                        free(nm);
                    }
            }
            for (unsigned s = 0; s < fn->nslots; s++) {
                char *nm = pp_fmt("lev__r%u", fn->slots[s].k);
                pp_fields(&ctx.types[i], ctx.types[i].spell, nm, fn->slots[s].type, fn->def);
                free(nm);
            }
            for (unsigned s = 0; s < fn->ntmps; s++) {
                char *nm = pp_fmt("lev__t%u", fn->tmps[s].k);
                pp_fields(&ctx.types[i], ctx.types[i].spell, nm, fn->tmps[s].type, fn->def);
                free(nm);
            }
        } else if (!ty->nfields) { /* not lev_rand_state, described when registered */
            if (pp_bad_spelling(ty->spell)) {
                pp_error(PP_LOC(ty->where), "an unnamed struct type cannot be described; give "
                                            "it a tag or a typedef name");
                continue;
            }
            char *owner = pp_strdup(ty->spell);
            pp_record_fields(ty, owner, "", ty->type, 0);
            free(owner);
            ty = &ctx.types[i];
        }
        if (!ctx.types[i].nfields)
            pp_printf(&ctx.types[i].fields, "    {\"lev__empty\", 0, LEV_K_B1, 1, 0},\n");
    }
}

const char *pp_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Declarations of the entries of fn for calls from other inputs, where
 * its frame type is unknown: __xrun (`resume` 0) and __xresume. */
static char *pp_xrun_proto(pp_fn *fn, int resume)
{
    pp_buf b = {0};
    if (resume) {
        pp_printf(&b, "PP_HIDDEN struct %s__ret %s__xresume(lev_ctx *vt, void *frame)", fn->cname,
                  fn->cname);
    } else {
        pp_printf(&b, "PP_HIDDEN struct %s__ret %s__xrun(lev_ctx *vt", fn->cname, fn->cname);
        pp_params(&b, fn, 0);
        pp_puts(&b, ")");
    }
    return b.p;
}

/* The rows of the descriptor tables: a function's, a static's, a type's.
 * A function or static that has a namesake in another input (static
 * functions and variables of a/util.c and b/util.c) is named there
 * NAME__STEM, as the function is in generated code, so that messages
 * naming it say which. A function's native address is there only if a pointer may hold it
 * (its address is taken in the inputs, or it is an entry): a table entry
 * for every function would keep an out-of-line copy of each, which stops
 * the C compiler from inlining a static function into all its callers
 * (at -O1 it inlines a function whose copy it can then remove). */
static void pp_fn_row(pp_buf *o, pp_fn *fn)
{
    const char *nat = fn->is_main                     ? "main__native"
                      : fn->addr_taken || fn->is_task ? fn->name
                                                      : "NULL";
    if (fn->cp)
        pp_printf(o, "{\"%s\", (void (*)(void))%s, %s%s, LEV__T_%s__frame, %s}", fn->cname, nat,
                  fn->is_task || fn->is_main ? fn->cname : "NULL",
                  fn->is_task || fn->is_main ? "__run" : "", fn->cname,
                  fn->is_task   ? "LEV_FN_TASK"
                  : fn->is_main ? "LEV_FN_MAIN"
                                : "0");
    else
        pp_printf(o, "{\"%s\", (void (*)(void))%s, NULL, 0, 0}", fn->cname, nat);
}

static void pp_static_row(pp_buf *o, const pp_static *st)
{
    int dup = 0;
    for (unsigned i = 0; i < ctx.nstatics && !dup; i++)
        dup = ctx.statics[i].owner != st->owner && !strcmp(ctx.statics[i].name, st->name);
    pp_printf(o, "{\"%s%s%s\", %s, %s, (uint32_t)(%s), %s}", st->name, dup ? "__" : "",
              dup ? ctx.files[st->owner].stem : "", st->std ? "NULL" : st->addr, st->type,
              st->count, st->flags);
}

static void pp_type_row(pp_buf *o, unsigned i)
{
    pp_printf(o, "{\"%s\", sizeof(%s), LEV__NF(lev__fields%u), lev__fields%u, __alignof__(%s)}",
              ctx.types[i].key, ctx.types[i].spell, i, i, ctx.types[i].spell);
}

/* How an output writes the descriptor rows of what it owns. With one
 * input (fill == 0) the output owns everything and the rows initialise
 * the module's tables; with several (fill == 1) each output owns what its
 * input defines and assigns the rows into the tables, which live in the
 * first output, from its function lev__fill_STEM. */
typedef struct pp_rows {
    int fill;
    int fi; /* the output */
} pp_rows;

/* Opens table `decl` (one input: when it has rows). */
static void pp_rows_open(pp_buf *o, const pp_rows *r, const char *decl, int nonempty)
{
    if (!r->fill && nonempty)
        pp_printf(o, "\n%s = {\n", decl);
}

static void pp_rows_close(pp_buf *o, const pp_rows *r, int nonempty)
{
    if (!r->fill && nonempty)
        pp_puts(o, "};\n");
}

/* The start of a row of table `table` (of element type `type`): an
 * assignment to table[index], or an initialiser, designated or not. */
static void pp_row_open(pp_buf *o, const pp_rows *r, const char *table, const char *type,
                        const char *index, int designated)
{
    if (r->fill)
        pp_printf(o, "    %s[%s] = (%s)", table, index, type);
    else if (designated)
        pp_printf(o, "    [%s] = ", index);
    else
        pp_puts(o, "    ");
}

static void pp_row_close(pp_buf *o, const pp_rows *r) { pp_puts(o, r->fill ? ";\n" : ",\n"); }

/* The descriptor rows of what output r->fi owns: types, functions,
 * statics; the standard streams' addresses are set at run time. */
static void pp_emit_rows(pp_buf *o, const pp_rows *r)
{
    int any_std = 0;
    for (unsigned i = 0; i < ctx.nstatics; i++)
        any_std |= ctx.statics[i].std != 0;
    pp_rows_open(o, r, "static const lev_type_desc lev__types[]", ctx.ntypes != 0);
    for (unsigned i = 0; i < ctx.ntypes; i++)
        if (!r->fill || ctx.types[i].owner == r->fi) {
            char *index = pp_fmt("%u", i);
            pp_row_open(o, r, "types", "lev_type_desc", index, 0);
            free(index);
            pp_type_row(o, i);
            pp_row_close(o, r);
        }
    pp_rows_close(o, r, ctx.ntypes != 0);
    pp_rows_open(o, r, "static const lev_fn_desc lev__fns[LEV__NFNS]", 1);
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (r->fill ? ctx.fns[i].file == r->fi : ctx.fns[i].file >= 0) {
            pp_row_open(o, r, "fns", "lev_fn_desc", ctx.fns[i].idname, 1);
            pp_fn_row(o, &ctx.fns[i]);
            pp_row_close(o, r);
        }
    pp_rows_close(o, r, 1);
    char *decl = pp_fmt("static %slev_static_desc lev__statics[]", any_std ? "" : "const ");
    pp_rows_open(o, r, decl, ctx.nstatics != 0);
    free(decl);
    for (unsigned i = 0; i < ctx.nstatics; i++)
        if (!r->fill || ctx.statics[i].owner == r->fi) {
            char *index = pp_fmt("%u", i);
            pp_row_open(o, r, "statics", "lev_static_desc", index, 0);
            free(index);
            pp_static_row(o, &ctx.statics[i]);
            pp_row_close(o, r);
            if (r->fill && ctx.statics[i].std)
                pp_printf(o, "    statics[%u].addr = (void *)%s;\n", i,
                          pp_std_names[ctx.statics[i].std - 1]);
        }
    pp_rows_close(o, r, ctx.nstatics != 0);
}

/* The module descriptor, `vis` its storage ("static " or "PP_HIDDEN "):
 * with one input the tables are sized by their initialisers and absent
 * when empty; with several they are arrays of fixed size. */
static void pp_emit_module_desc(pp_buf *o, const pp_rows *r, const char *vis, const char *mname)
{
    char *ntypes = r->fill      ? pp_fmt("%u", ctx.ntypes)
                   : ctx.ntypes ? pp_strdup("LEV__NF(lev__types)")
                                : pp_strdup("0");
    char *nstatics = r->fill        ? pp_fmt("%u", ctx.nstatics)
                     : ctx.nstatics ? pp_strdup("LEV__NF(lev__statics)")
                                    : pp_strdup("0");
    const char *types = r->fill || ctx.ntypes ? "lev__types" : "NULL";
    const char *statics = r->fill || ctx.nstatics ? "lev__statics" : "NULL";
    pp_printf(o,
              "\n%sconst lev_module_desc lev__module_desc = {\n"
              "    LEV_ABI_VERSION, \"%s\",\n    %s, %s,\n    LEV__NFNS, lev__fns,\n"
              "    %s, %s,\n};\n",
              vis, mname, ntypes, types, nstatics, statics);
    free(ntypes);
    free(nstatics);
}

/* The descriptors of output fi: the field tables of the types it owns,
 * its rows (pp_emit_rows), and, in the output that holds them (the only
 * one, or the first), the module's tables and descriptor. */
static void pp_emit_descriptors(pp_buf *o, unsigned fi)
{
    pp_file *f = &ctx.files[fi];
    pp_rows r = {ctx.nfiles > 1, (int)fi};
    pp_puts(o, "\n/* ===================================================================\n"
               " * Descriptors (levpp)\n"
               " * =================================================================== */\n\n");
    pp_puts(o, "#define LEV__NF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))\n\n");
    for (unsigned i = 0; i < ctx.ntypes; i++)
        if (!r.fill || ctx.types[i].owner == (int)fi)
            pp_printf(o, "static const lev_field_desc lev__fields%u[] = {\n%s};\n", i,
                      ctx.types[i].fields.p);
    char *mname = pp_strdup(pp_base(ctx.files[0].path));
    char *dot = strrchr(mname, '.');
    if (dot)
        *dot = '\0';
    if (r.fill)
        pp_printf(o,
                  "\nPP_HIDDEN void lev__fill_%s(lev_type_desc *types, lev_fn_desc *fns, "
                  "lev_static_desc *statics)\n{\n    (void)types;\n    (void)fns;\n"
                  "    (void)statics;\n",
                  f->stem);
    pp_emit_rows(o, &r);
    if (r.fill) {
        pp_puts(o, "}\n");
        if (fi == 0) {
            for (unsigned j = 1; j < ctx.nfiles; j++)
                pp_printf(o,
                          "PP_HIDDEN void lev__fill_%s(lev_type_desc *types, lev_fn_desc *fns, "
                          "lev_static_desc *statics);\n",
                          ctx.files[j].stem);
            pp_printf(o,
                      "\nstatic lev_type_desc lev__types[%u];\nstatic lev_fn_desc "
                      "lev__fns[LEV__NFNS];\nstatic lev_static_desc lev__statics[%u];\n",
                      ctx.ntypes ? ctx.ntypes : 1, ctx.nstatics ? ctx.nstatics : 1);
        }
    }
    if (!r.fill || fi == 0)
        pp_emit_module_desc(o, &r, r.fill ? "PP_HIDDEN " : "static ", mname);
    free(mname);
}

/* lev__module(), in the output that holds the module (the only one, or
 * the first), and the entry main of a --main-task run. */
static void pp_emit_module(pp_buf *o, unsigned fi, const char *vis)
{
    int multi = ctx.nfiles > 1;
    if (!multi || fi == 0) {
        pp_printf(o,
                  "\n%slev_module *lev__mod;\n\n"
                  "/* The module of this program's descriptors, registered on first use\n"
                  " * (lev__module, inline in every output, reads lev__mod first). */\n"
                  "%sconst lev_module *lev__module_slow(void)\n{\n    if (lev__mod)\n"
                  "        return lev__mod;\n",
                  vis, vis);
        if (multi) {
            for (unsigned j = 0; j < ctx.nfiles; j++)
                pp_printf(o, "    lev__fill_%s(lev__types, lev__fns, lev__statics);\n",
                          ctx.files[j].stem);
        } else {
            for (unsigned i = 0; i < ctx.nstatics; i++)
                if (ctx.statics[i].std)
                    pp_printf(o, "    lev__statics[%u].addr = (void *)%s;\n", i,
                              pp_std_names[ctx.statics[i].std - 1]);
        }
        pp_puts(o, "    if (lev_module_register(&lev__module_desc, &lev__mod) != 0)\n"
                   "        return NULL;\n    return lev__mod;\n}\n");
        if (!ctx.main_task)
            pp_puts(o, "\n__attribute__((__constructor__)) static void lev__register(void)\n{\n"
                       "    (void)lev__module();\n}\n");
    }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].is_main && ctx.fns[i].file == (int)fi) {
            if (multi && fi != 0)
                pp_puts(o, "PP_HIDDEN extern const lev_module_desc lev__module_desc;\n");
            pp_printf(o,
                      "\nint main(int argc, char **argv)\n{\n"
                      "    /* a descriptor the runtime refuses: lev_main_run says why */\n"
                      "    (void)lev__module();\n%s"
                      "    return lev_main_run(&lev__module_desc, %s, argc, argv);\n}\n",
                      pp_libc_main_setup(), ctx.fns[i].idname);
        }
}

/* The C keywords, which a program may define as macros (`#define int long
 * long`, `#define inline __inline`): levpp's code around the user's text
 * saves, undefines and restores them (pp_guard_keywords), so that it
 * means what it says wherever it stands. The user's bodies in it are
 * already macro-expanded (pp_expand.c). */
static const char *const pp_keywords[] = {
    "auto",    "break",     "case",           "char",          "const",    "continue", "default",
    "do",      "double",    "else",           "enum",          "extern",   "float",    "for",
    "goto",    "if",        "inline",         "int",           "long",     "register", "restrict",
    "return",  "short",     "signed",         "sizeof",        "static",   "struct",   "switch",
    "typedef", "union",     "unsigned",       "void",          "volatile", "while",    "_Alignof",
    "_Bool",   "_Noreturn", "_Static_assert", "_Thread_local",
};

/* Saves and undefines (push) or restores (!push) a macro `name`. */
static void pp_guard_word(pp_buf *o, const char *name, size_t len, int push)
{
    if (push)
        pp_printf(o, "#pragma push_macro(\"%.*s\")\n#undef %.*s\n", (int)len, name, (int)len, name);
    else
        pp_printf(o, "#pragma pop_macro(\"%.*s\")\n", (int)len, name);
}

/* Saves and undefines (push) or restores (!push) every C keyword and,
 * with `own`, every macro input fi defines itself (`#define n 7`,
 * `#define line 1000`: the headers levpp's declarations include name
 * parameters and members with such words). Macros of the input's headers
 * are left: the C library's (stdout, NULL, offsetof) are what levpp's
 * code means. After the user's text, only keywords: levpp's descriptors
 * there name the program's own macros (a tagged union's tag values). */
static void pp_guard_keywords(pp_buf *o, unsigned fi, int push, int own)
{
    for (size_t i = 0; i < sizeof pp_keywords / sizeof *pp_keywords; i++)
        if (!pp_tls_defined_away(pp_keywords[i])) /* levpp's code keeps it too */
            pp_guard_word(o, pp_keywords[i], strlen(pp_keywords[i]), push);
    const pp_file *f = &ctx.files[fi];
    if (!own)
        return;
    for (unsigned i = 0; i < f->len;) {
        unsigned e = i;
        while (e < f->len && f->text[e] != '\n')
            e++;
        const char *p = f->text + i, *end = f->text + e;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p < end && *p == '#') {
            p++;
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (end - p > 7 && !strncmp(p, "define", 6) && (p[6] == ' ' || p[6] == '\t')) {
                p += 7;
                while (p < end && (*p == ' ' || *p == '\t'))
                    p++;
                const char *w = p;
                while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
                    p++;
                if (p > w)
                    pp_guard_word(o, w, (size_t)(p - w), push);
            }
        }
        i = e + 1;
    }
}

/* The user's text of input fi up to where levpp's declarations go, those
 * declarations (ids of the types and functions, hoisted literals), then
 * the rest of the text with its edits. */
static void pp_emit_source(pp_buf *o, unsigned fi, const char *vis)
{
    pp_file *f = &ctx.files[fi];
    const char *outname = f->outname;
    pp_printf(o, "/* %s: written by levpp from %s; edit the source, not this file. */\n",
              pp_base(outname), pp_base(f->path));
    pp_tls_prelude(o);
    pp_printf(o, "#line 1 \"%s\"\n", f->path);
    pp_render(o, f, 0, f->insert_at, 0, R_HEAD);
    pp_puts(o, "\n");
    pp_guard_keywords(o, fi, 1, 1);
    pp_printf(o, "#line %u \"%s\"\n", pp_lines_in(o) + 1, outname);
    pp_libc_header_defines(o, fi);
    pp_puts(o, "#include \"lev_task.h\"\n\n");
    if (ctx.nfiles > 1)
        pp_puts(o, "#define PP_HIDDEN __attribute__((__visibility__(\"hidden\")))\n");
    pp_printf(o,
              "%s%slev_module *lev__mod;\n%sconst lev_module *lev__module_slow(void);\n"
              "static inline const lev_module *lev__module(void)\n{\n"
              "    return LEV_LIKELY(lev__mod != NULL) ? lev__mod : lev__module_slow();\n}\n",
              vis, ctx.nfiles > 1 ? "extern " : "", vis);
    pp_libc_prelude(o, fi);
    if (ctx.ntypes) {
        pp_puts(o, "enum {\n");
        for (unsigned i = 0; i < ctx.ntypes; i++)
            pp_printf(o, "    %s = LEV_T_USER + %u,\n", ctx.types[i].idname, i);
        pp_puts(o, "};\n");
    }
    pp_puts(o, "enum {\n");
    unsigned nfn = 0;
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].file >= 0)
            pp_printf(o, "    %s = %u,\n", ctx.fns[i].idname, nfn++);
    pp_printf(o, "    LEV__NFNS = %u\n};\n", nfn);
    if (f->lits.p)
        pp_puts(o, f->lits.p);
    pp_guard_keywords(o, fi, 0, 1);
    pp_printf(o, "#line %u \"%s\"\n", pp_line_of(f, f->insert_at), f->path);
    pp_render(o, f, f->insert_at, f->len, 0, R_SYNC);
    if (f->len && f->text[f->len - 1] != '\n')
        pp_puts(o, "\n");
}

/* Whether the output of input fi holds fn's resumable bodies: fn is
 * checkpointable and defined there, or copied there (pp_copy.c). */
static int pp_bodies_in(const pp_fn *fn, unsigned fi)
{
    return fn->cp && (fn->file == (int)fi || pp_copied(fn, (int)fi));
}

/* The declarations levpp's code of input fi needs: frame structs,
 * prototypes of the resumable functions, return structs, and those of the
 * checkpointable functions of other inputs it calls. */
static void pp_emit_frames(pp_buf *o, unsigned fi)
{
    pp_file *f = &ctx.files[fi];
    pp_printf(o, "#line %u \"%s\"\n", pp_lines_in(o) + 1, f->outname);
    pp_puts(o, "\n/* ===================================================================\n"
               " * Frames and resumable bodies (levpp)\n"
               " * =================================================================== */\n\n"
               "#include <stddef.h>\n\n");
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (pp_bodies_in(&ctx.fns[i], fi)) {
            pp_frame_struct(o, &ctx.fns[i]);
            pp_puts(o, "\n");
        }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (pp_bodies_in(&ctx.fns[i], fi))
            for (int r = 0; r < 2 - (ctx.fns[i].is_task || ctx.fns[i].is_main); r++) {
                char *p = pp_run_proto(&ctx.fns[i], r);
                pp_printf(o, "%s;\n", p);
                free(p);
            }
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (pp_bodies_in(&ctx.fns[i], fi) && !ctx.fns[i].is_task && !ctx.fns[i].is_main)
            pp_ret_struct(o, &ctx.fns[i]);
    /* the native copy of a static function that only checkpointable code
     * calls is no longer referenced (pp_fn_row): not a mistake of the
     * program's */
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].cp && ctx.fns[i].file == (int)fi && !ctx.fns[i].is_task &&
            !ctx.fns[i].is_main && clang_Cursor_getStorageClass(ctx.fns[i].def) == CX_SC_Static)
            pp_printf(o, "static __typeof__(%s) %s __attribute__((__unused__));\n", ctx.fns[i].name,
                      ctx.fns[i].name);
    for (unsigned x = 0; x < f->nx; x++)
        pp_ret_struct(o, &ctx.fns[f->xcallees[x]]);
    for (unsigned x = 0; x < f->nx; x++) {
        pp_fn *g = &ctx.fns[f->xcallees[x]];
        for (int r = 0; r < 2; r++) {
            char *p = pp_xrun_proto(g, r);
            pp_printf(o, "%s;\n", p);
            free(p);
        }
        if (g->addr_taken)
            pp_printf(o, "PP_HIDDEN extern void (*const %s__xaddr)(void);\n", g->cname);
    }
}

/* Whether another input than fn's calls fn (directly or through a
 * pointer): only then does fn get the entries __xrun and __xresume, whose
 * copies of its body the C compiler could not otherwise drop. */
static int pp_called_across(const pp_fn *fn)
{
    for (unsigned j = 0; j < ctx.nfiles; j++)
        for (unsigned x = 0; (int)j != fn->file && x < ctx.files[j].nx; x++)
            if (&ctx.fns[ctx.files[j].xcallees[x]] == fn)
                return 1;
    return 0;
}

/* The resumable bodies of input fi, and, with several inputs, what the
 * other inputs call them through (their frames are only known here). */
static void pp_emit_bodies(pp_buf *o, unsigned fi)
{
    const char *outname = ctx.files[fi].outname;
    for (unsigned i = 0; i < ctx.nfns; i++) {
        pp_fn *fn = &ctx.fns[i];
        if (!pp_bodies_in(fn, fi))
            continue;
        pp_puts(o, "\n");
        pp_puts(o, fn->body.p);
        pp_printf(o, "#line %u \"%s\"\n", pp_lines_in(o) + 1, outname);
        if (fn->is_main)
            pp_puts(o, "    fr->m.ret = 0;\n");
        char *rt = pp_return(fn, "LEV_RUN_DONE", NULL);
        pp_reserve_release(o, fn);
        pp_printf(o, "    %s\n}\n", rt);
        free(rt);
        if (fn->file == (int)fi && ctx.nfiles > 1 && !fn->is_task && !fn->is_main &&
            pp_called_across(fn)) {
            char *p = pp_xrun_proto(fn, 0);
            pp_printf(o, "\n%s\n{\n    return %s__run(vt", p, fn->cname);
            free(p);
            CXType ft = clang_getCursorType(fn->def);
            int n = clang_getNumArgTypes(ft);
            for (int a = 0; a < n; a++)
                pp_printf(o, ", lev__a%d", a);
            pp_puts(o, ");\n}\n");
            p = pp_xrun_proto(fn, 1);
            pp_printf(o, "\n%s\n{\n    return %s__resume(vt, frame);\n}\n", p, fn->cname);
            free(p);
            if (fn->addr_taken) /* what indirect calls of other inputs compare with */
                pp_printf(o, "\nPP_HIDDEN void (*const %s__xaddr)(void) = (void (*)(void))%s;\n",
                          fn->cname, fn->name);
        }
    }
}

/* The output of input fi, whether the run has one input or several. */
static void pp_emit(unsigned fi, pp_buf *o)
{
    const char *vis = ctx.nfiles > 1 ? "PP_HIDDEN " : "static ";
    pp_emit_source(o, fi, vis);
    pp_guard_keywords(o, fi, 1, 0);
    pp_emit_inline_hints(o, fi);
    pp_emit_frames(o, fi);
    pp_emit_bodies(o, fi);
    pp_emit_descriptors(o, fi);
    pp_emit_module(o, fi, vis);
    pp_guard_keywords(o, fi, 0, 0);
}

/* Pass: writes every output to OUT.tmp, then renames them all; on an
 * error (rc != 0, given or met) removes the temporaries. Returns rc. */
int pp_write_outputs(int rc)
{
    for (unsigned i = 0; i < ctx.nfiles && !rc; i++) {
        pp_buf o = {0};
        pp_emit(i, &o);
        /* an output named with its input's directories (pp_name_outputs):
         * their directories below OUT, whose failure fopen reports */
        char *dir = pp_strdup(ctx.files[i].outname);
        for (char *sl = ctx.files[i].outsub ? strchr(dir + ctx.files[i].outsub, '/') : NULL; sl;
             sl = strchr(sl + 1, '/')) {
            *sl = '\0';
            (void)mkdir(dir, 0777);
            *sl = '/';
        }
        free(dir);
        char *tmp = pp_fmt("%s.tmp", ctx.files[i].outname);
        FILE *fp = fopen(tmp, "wb");
        if (!fp || fwrite(o.p, 1, o.n, fp) != o.n || fclose(fp) != 0) {
            pp_error_noloc(NULL, "cannot write %s: %s", tmp, strerror(errno));
            rc = 1;
        }
        free(tmp);
        free(o.p);
    }
    for (unsigned i = 0; i < ctx.nfiles; i++) {
        char *tmp = pp_fmt("%s.tmp", ctx.files[i].outname ? ctx.files[i].outname : "");
        if (!rc && rename(tmp, ctx.files[i].outname) != 0) {
            pp_error_noloc(NULL, "cannot rename %s to %s: %s", tmp, ctx.files[i].outname,
                           strerror(errno));
            rc = 1;
        }
        if (rc && ctx.files[i].outname)
            unlink(tmp);
        free(tmp);
    }
    return rc;
}
