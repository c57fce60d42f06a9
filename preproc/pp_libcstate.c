/* pp_libcstate.c - C library calls rewritten onto state that travels:
 * which calls are renamed (the rand family, strtok, atexit, localtime and
 * its kin with --main-task; getline, strndup, asprintf and the streams in
 * every run) and which are refused, the generated travelling statics
 * behind them with their descriptors, and the wrappers each output gets;
 * and the state of the standard streams that every --main-task program
 * carries (lev__stdio_state, armed by the main levpp writes).
 */
#include <stdlib.h>
#include <string.h>

#include "levpp.h"

/* C library calls with hidden state (--main-task). The rand family,
 * strtok and atexit become wrappers (emitted by pp_libc_prelude) over
 * generated travelling statics, so their state is part of every image;
 * calls whose state cannot be moved into the program are refused. Calls
 * that return memory of the C library's (getline...) become wrappers of
 * the runtime's versions on the VT heap, in every run. The third column:
 * which static or group of wrappers (PP_LIBC_RAND...). */
static const struct {
    const char *name, *as;
    int state;
} pp_libc_names[] = {{"rand", "lev__rand", PP_LIBC_RAND},
                     {"srand", "lev__srand", PP_LIBC_RAND},
                     {"random", "lev__random", PP_LIBC_RAND},
                     {"srandom", "lev__srandom", PP_LIBC_RAND},
                     {"strtok", "lev__strtok", PP_LIBC_STRTOK},
                     {"atexit", "lev__atexit", PP_LIBC_EXIT},
                     {"localtime", "lev__localtime", PP_LIBC_TIME},
                     {"gmtime", "lev__gmtime", PP_LIBC_TIME},
                     {"asctime", "lev__asctime", PP_LIBC_TIME},
                     {"ctime", "lev__ctime", PP_LIBC_TIME},
                     {"getline", "lev__getline", PP_LIBC_HEAP},
                     {"getdelim", "lev__getdelim", PP_LIBC_HEAP},
                     {"strndup", "lev__strndup", PP_LIBC_HEAP},
                     {"asprintf", "lev__asprintf", PP_LIBC_HEAP},
                     {"vasprintf", "lev__vasprintf", PP_LIBC_HEAP},
                     {"open_memstream", "lev__open_memstream", PP_LIBC_HEAP},
                     {"fopen", "lev__fopen", PP_LIBC_HEAP},
                     {"freopen", "lev__freopen", PP_LIBC_HEAP},
                     {"fclose", "lev__fclose", PP_LIBC_HEAP},
                     {NULL, NULL, 0}};

static const char *const pp_libc_refused[][2] = {
    {"drand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"lrand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"mrand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"srand48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"seed48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"lcong48", "use erand48, nrand48 or jrand48 with a state of your own"},
    {"initstate", "use srandom"},
    {"setstate", "use srandom"},
    {"at_quick_exit", "a process that resumes the program would not run the handler"},
    {"on_exit", "a process that resumes the program would not run the handler"},
    {NULL, NULL}};

/* A reference to external function `name` in input f. The name is
 * renamed where it is written: also in a macro argument or in the body of
 * a macro defined in this input (once, however often it is expanded). */
void pp_libc_call(pp_file *f, CXCursor c, const char *name)
{
    for (int i = 0; pp_libc_names[i].name; i++)
        if (!strcmp(name, pp_libc_names[i].name) &&
            (ctx.main_task || pp_libc_names[i].state == PP_LIBC_HEAP)) {
            if (pp_rename_spelled(f, c, name, pp_libc_names[i].as)) {
                /* once per expansion */
                if (ctx.libc_macro_file == f && ctx.libc_macro_at == pp_off(PP_LOC(c)))
                    return;
                ctx.libc_macro_file = f;
                ctx.libc_macro_at = pp_off(PP_LOC(c));
                pp_error(PP_LOC(c),
                         "%s inside a macro of another file cannot be rewritten onto state that "
                         "travels; call it outside the macro",
                         name);
                return;
            }
            f->uses_libc[pp_libc_names[i].state] = 1;
            return;
        }
    for (int i = 0; ctx.main_task && pp_libc_refused[i][0]; i++)
        if (!strcmp(name, pp_libc_refused[i][0]))
            pp_error(PP_LOC(c), "%s keeps state inside the C library, which no image holds (%s)",
                     name, pp_libc_refused[i][1]);
}

/* The travelling statics behind the rewritten calls ([PP_LIBC_*]): the
 * definition (less its storage class), the name, the type id, and the
 * wrappers over it that replace the C library's calls. */
static const struct {
    const char *def, *name, *type, *wrappers;
} pp_libc_states[PP_NLIBC] = {
    {"lev_rand_state lev__rand_state", "lev__rand_state", "LEV__T_lev_rand_state",
     "static inline int lev__rand(void)\n"
     "{\n    return lev_rand_r(&lev__rand_state);\n}\n"
     "static inline long lev__random(void)\n"
     "{\n    return lev_rand_r(&lev__rand_state);\n}\n"
     "static inline void lev__srand(unsigned s)\n"
     "{\n    lev_srand_r(&lev__rand_state, s);\n}\n"
     "static inline void lev__srandom(unsigned s)\n"
     "{\n    lev_srand_r(&lev__rand_state, s);\n}\n"},
    {"char *lev__strtok_save", "lev__strtok_save", "LEV_T_PTR",
     "static inline char *lev__strtok(char *s, const char *d)\n"
     "{\n    return lev_strtok_r(s, d, &lev__strtok_save);\n}\n"},
    {"lev_exit_state lev__exit_state", "lev__exit_state", "LEV__T_lev_exit_state",
     "static inline int lev__atexit(void (*lev__fn)(void))\n"
     "{\n    return lev_atexit_r(&lev__exit_state, lev__fn);\n}\n"},
    {NULL, NULL, NULL,
     "static inline ssize_t lev__getline(char **lev__l, size_t *lev__n, FILE *lev__f)\n"
     "{\n    return lev_getdelim(lev__module(), lev__l, lev__n, '\\n', lev__f);\n}\n"
     "static inline ssize_t lev__getdelim(char **lev__l, size_t *lev__n, int lev__d, FILE "
     "*lev__f)\n"
     "{\n    return lev_getdelim(lev__module(), lev__l, lev__n, lev__d, lev__f);\n}\n"
     "static inline char *lev__strndup(const char *lev__s, size_t lev__n)\n"
     "{\n    return lev_strndup(lev__module(), lev__s, lev__n);\n}\n"
     "static inline int lev__vasprintf(char **lev__o, const char *lev__fmt, va_list lev__ap)\n"
     "{\n    return lev_vasprintf(lev__module(), lev__o, lev__fmt, lev__ap);\n}\n"
     "__attribute__((__format__(__printf__, 2, 3))) static inline int lev__asprintf(char **lev__o, "
     "const char *lev__fmt, ...)\n"
     "{\n    va_list lev__ap;\n    va_start(lev__ap, lev__fmt);\n"
     "    int lev__r = lev_vasprintf(lev__module(), lev__o, lev__fmt, lev__ap);\n    "
     "va_end(lev__ap);\n"
     "    return lev__r;\n}\n"
     "static inline FILE *lev__open_memstream(char **lev__b, size_t *lev__n)\n"
     "{\n    return lev_open_memstream(lev__module(), lev__b, lev__n);\n}\n"
     "static inline FILE *lev__fopen(const char *lev__p, const char *lev__m)\n"
     "{\n    return lev_fopen(lev__module(), lev__p, lev__m);\n}\n"
     "static inline FILE *lev__freopen(const char *lev__p, const char *lev__m, FILE *lev__f)\n"
     "{\n    return lev_freopen(lev__module(), lev__p, lev__m, lev__f);\n}\n"
     "static inline int lev__fclose(FILE *lev__f)\n{\n    return lev_fclose(lev__f);\n}\n"},
    {"lev_time_state lev__time_state", "lev__time_state", "LEV__T_lev_time_state",
     "static inline struct tm *lev__localtime(const time_t *lev__t)\n"
     "{\n    return lev_time_r(&lev__time_state, lev__t, 1);\n}\n"
     "static inline struct tm *lev__gmtime(const time_t *lev__t)\n"
     "{\n    return lev_time_r(&lev__time_state, lev__t, 0);\n}\n"
     "static inline char *lev__asctime(const struct tm *lev__tm)\n"
     "{\n    return lev_asctime_r(&lev__time_state, lev__tm);\n}\n"
     "static inline char *lev__ctime(const time_t *lev__t)\n"
     "{\n    struct tm *lev__tm = lev_time_r(&lev__time_state, lev__t, 1);\n"
     "    return lev__tm ? lev_asctime_r(&lev__time_state, lev__tm) : NULL;\n}\n"},
    {"lev_stdio_state lev__stdio_state", "lev__stdio_state", "LEV__T_lev_stdio_state", ""},
};

/* Whether some input rewrote a call onto static k (PP_LIBC_*). */
static int pp_libc_used(int k)
{
    for (unsigned i = 0; i < ctx.nfiles; i++)
        if (ctx.files[i].uses_libc[k])
            return 1;
    return 0;
}

/* Whether input fi defines main. */
static int pp_libc_has_main(unsigned fi)
{
    for (unsigned i = 0; i < ctx.nfns; i++)
        if (ctx.fns[i].is_main && ctx.fns[i].file == (int)fi)
            return 1;
    return 0;
}

/* A new type of the runtime's, named key, for a static of the C
 * library's state; the caller adds its rows. */
static pp_type *pp_libc_type(const char *key, const char *idname)
{
    PP_PUSH(ctx.types, ctx.ntypes, ctx.captypes);
    pp_type *ty = &ctx.types[ctx.ntypes++];
    memset(ty, 0, sizeof *ty);
    ty->key = pp_strdup(key);
    ty->spell = pp_strdup(key);
    ty->idname = pp_strdup(idname);
    ty->fn = -1;
    ty->owner = 0;
    return ty;
}

/* Registers the statics behind the rewritten calls (owned by the first
 * input, shared by all) and the types of the rand and exit states. */
void pp_libc_statics(void)
{
    /* The fields of the state types (lev_task.h), type by type. */
    static const struct {
        int state;
        const char *type, *field, *kind;
        int count;
    } rows[] = {
        {PP_LIBC_RAND, "lev_rand_state", "lev_r", "LEV_K_B4", 31},
        {PP_LIBC_RAND, "lev_rand_state", "lev_f", "LEV_K_B4", 1},
        {PP_LIBC_RAND, "lev_rand_state", "lev_b", "LEV_K_B4", 1},
        {PP_LIBC_RAND, "lev_rand_state", "lev_seeded", "LEV_K_B4", 1},
        {PP_LIBC_TIME, "lev_time_state", "lev_u.lev_raw.lev_i", "LEV_K_B4", 9},
        {PP_LIBC_TIME, "lev_time_state", "lev_u.lev_raw.lev_gmtoff", "LEV_K_B8", 1},
        {PP_LIBC_TIME, "lev_time_state", "lev_u.lev_raw.lev_zonep", "LEV_K_PTR", 1},
        {PP_LIBC_TIME, "lev_time_state", "lev_zone", "LEV_K_B1", 16},
        {PP_LIBC_TIME, "lev_time_state", "lev_text", "LEV_K_B1", 32},
        {PP_LIBC_EXIT, "lev_exit_state", "lev_fn", "LEV_K_FNPTR", 32},
        {PP_LIBC_EXIT, "lev_exit_state", "lev_n", "LEV_K_B4", 1},
        /* LEV_STDIO_WORDS, LEV_STDIO_BYTES */
        {PP_LIBC_STDIO, "lev_stdio_state", "lev_w", "LEV_K_B8", 16},
        {PP_LIBC_STDIO, "lev_stdio_state", "lev_b", "LEV_K_B1", 288},
    };
    /* Where the standard streams stand travels with every --main-task
     * program: the input that defines main holds the static. */
    for (unsigned i = 0; ctx.main_task && i < ctx.nfns; i++)
        if (ctx.fns[i].is_main && ctx.fns[i].file >= 0)
            ctx.files[ctx.fns[i].file].uses_libc[PP_LIBC_STDIO] = 1;
    pp_type *ty = NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!pp_libc_used(rows[i].state))
            continue;
        if (!i || strcmp(rows[i].type, rows[i - 1].type) || !ty) {
            char *id = pp_fmt("LEV__T_%s", rows[i].type);
            ty = pp_libc_type(rows[i].type, id);
            free(id);
        }
        pp_field_row(ty, rows[i].type, rows[i].field, rows[i].kind, rows[i].count, "0");
    }
    for (int k = 0; k < PP_NLIBC; k++) {
        if (!pp_libc_used(k) || !pp_libc_states[k].name)
            continue;
        PP_PUSH(ctx.statics, ctx.nstatics, ctx.capstatics);
        ctx.statics[ctx.nstatics++] = (pp_static){pp_strdup(pp_libc_states[k].name),
                                                  pp_fmt("(void *)&%s", pp_libc_states[k].name),
                                                  pp_strdup(pp_libc_states[k].type),
                                                  pp_strdup("1"),
                                                  "LEV_S_TRAVELS",
                                                  0,
                                                  0};
    }
}

/* The statics and wrappers of the rewritten calls, in input fi's output
 * (the exit state also where main is, whose wrapper arms it). */
/* The parts of lev_task.h that the output of input fi needs, defined
 * before it is included: the stream wrappers need <stdio.h> (the
 * program calls getline, fopen... and so includes it), the time state
 * <time.h>; the first input holds every travelling state. */
void pp_libc_header_defines(pp_buf *o, unsigned fi)
{
    pp_puts(o, "#define LEV_TASK_OUTPUT 1\n");
    if (ctx.files[fi].uses_libc[PP_LIBC_HEAP])
        pp_puts(o, "#define LEV_TASK_STDIO 1\n");
    if (ctx.files[fi].uses_libc[PP_LIBC_TIME] || (!fi && pp_libc_used(PP_LIBC_TIME)))
        pp_puts(o, "#define LEV_TASK_TIME 1\n");
}

void pp_libc_prelude(pp_buf *o, unsigned fi)
{
    int multi = ctx.nfiles > 1;
    pp_alloc_prelude(o, fi);
    for (int k = 0; k < PP_NLIBC; k++) {
        int here = ctx.files[fi].uses_libc[k] || (k == PP_LIBC_EXIT && pp_libc_has_main(fi));
        if (!pp_libc_used(k) || (fi && !here))
            continue;
        if (pp_libc_states[k].def)
            pp_printf(o, "%s%s;\n",
                      !multi ? "static "
                      : fi   ? "PP_HIDDEN extern "
                             : "PP_HIDDEN ",
                      pp_libc_states[k].def);
        if (ctx.files[fi].uses_libc[k])
            pp_puts(o, pp_libc_states[k].wrappers);
    }
}

/* What the main levpp writes does before it runs the program: arm the
 * exit functions the program registers (and a resumed one had), and the
 * state of the standard streams. */
const char *pp_libc_main_setup(void)
{
    int ex = pp_libc_used(PP_LIBC_EXIT), io = pp_libc_used(PP_LIBC_STDIO);
    return ex && io ? "    lev_exit_arm(&lev__exit_state);\n"
                      "    lev_stdio_arm(&lev__stdio_state);\n"
           : ex     ? "    lev_exit_arm(&lev__exit_state);\n"
           : io     ? "    lev_stdio_arm(&lev__stdio_state);\n"
                    : "";
}
