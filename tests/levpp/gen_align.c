/* gen_align.c - writes the corpus programs of levpp's aligned locals:
 * locals of every type whose alignment is more than a pointer's (long
 * double, __int128, complex, GCC vectors and the <immintrin.h> ones,
 * structs, unions and arrays of them, types raised by an `aligned`
 * attribute, an array type's too) and locals whose own alignment an `_Alignas(N)` or
 * `aligned(N)` raises (N = 16 to 4096, written as a specifier or an
 * attribute, before or after the declarator, directly or by a macro),
 * live across safe points.
 *
 * usage: gen_align OUTDIR
 *
 * Writes OUTDIR/align_types.c and OUTDIR/align_specs.c. Each case is a
 * function holding two such locals: it checks that each is aligned (to
 * _Alignof its type, and to N) before and after every safe point, copies
 * one into the other whole (gcc -O2 copies an aligned struct or vector
 * with aligned SSE moves, which fault on a misaligned frame), computes
 * on them, hands the address of one to a function that reaches a safe
 * point and checks it there, and calls itself once or twice (frames of
 * one over-aligned type on each other), then runs it through a function
 * that takes and returns the value through a pointer across a safe
 * point. main runs every case below a recursion of 0 to 3 frames of an
 * odd size, so its frame lands at every offset, and prints one line per
 * run: a misaligned local prints MISALIGNED (and the exit status is 1),
 * which the native run never does. A program runs every case once;
 * given an argument N it does so N times over (N = 0: forever, the
 * kill-and-resume convention of run_corpus.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A local's type. In the texts `@` stands for the variable and `k` is an
 * int of the caller. */
typedef struct gen_type {
    const char *name;
    const char *type; /* for _Alignof and the pointer's copy */
    const char *decl; /* declares @ (the array's brackets around @) */
    const char *set;  /* statements: @ from k */
    const char *step; /* a statement: @ computed on */
    const char *val;  /* a long long expression of @'s value */
    int array;        /* copied with memcpy, no pointer function */
    const char *only; /* a preprocessor condition it needs, or NULL */
} gen_type;

#define X86 "defined(__x86_64__)"

static const gen_type s_types[] = {
    {"long_double", "long double", "long double @", "@ = (long double)k / 4 + 1;", "@ = @ * 3 - 1;",
     "(long long)(@ * 4)", 0, NULL},
    {"int128", "unsigned __int128", "unsigned __int128 @",
     "@ = ((unsigned __int128)(unsigned)k << 70) | (unsigned)k;", "@ = @ * 5 + 1;",
     "(long long)(unsigned long long)(@ >> 64) ^ (long long)(unsigned long long)@", 0, NULL},
    {"complex", "double _Complex", "double _Complex @", "@ = __builtin_complex((double)k, 2.0);",
     "@ = @ * 2 - 1;", "(long long)(__real__ @ * 8 + __imag__ @)", 0, NULL},
    {"long_complex", "long double _Complex", "long double _Complex @",
     "@ = __builtin_complex((long double)k, 0.5L);", "@ = @ * 2 + 1;",
     "(long long)(__real__ @ * 4) + (long long)(__imag__ @ * 4)", 0, NULL},
    {"vector16", "v4u", "v4u @", "@ = (v4u){k, k + 1, k + 2, k + 3};",
     "@ = @ * 3 + (v4u){1, 2, 3, 4};", "(long long)@[0] + @[1] * 3LL + @[2] * 5LL + @[3] * 7LL", 0,
     NULL},
    {"vector32", "v8u", "v8u @", "@ = (v8u){k, 1, 2, 3, 4, 5, 6, k + 7};",
     "@ = @ * 3 + (v8u){1, 2, 3, 4, 5, 6, 7, 8};", "(long long)@[0] + @[3] * 3LL + @[7] * 5LL", 0,
     NULL},
    {"vector64", "v16u", "v16u @",
     "@ = (v16u){k, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, k};", "@ = @ * 5 + 1;",
     "(long long)@[0] + @[9] * 3LL + @[15] * 5LL", 0, NULL},
    {"vector32_double", "v4d", "v4d @", "@ = (v4d){k, 1, 2, 3};", "@ = @ * 2 - 1;",
     "(long long)(@[0] * 2 + @[3])", 0, NULL},
    {"m128", "__m128", "__m128 @", "@ = _mm_set_ps((float)k, 1, 2, 3);", "@ = _mm_add_ps(@, @);",
     "(long long)(@[0] + @[3])", 0, X86},
    {"m128i", "__m128i", "__m128i @", "@ = _mm_set_epi32(k, 1, 2, 3);",
     "@ = _mm_add_epi32(@, _mm_set1_epi32(3));", "(long long)@[0] + @[1]", 0, X86},
    {"m256", "__m256", "__m256 @", "@ = (__m256){(float)k, 1, 2, 3, 4, 5, 6, 7};", "@ = @ * 2;",
     "(long long)(@[0] + @[7])", 0, X86},
    {"m256d", "__m256d", "__m256d @", "@ = (__m256d){k, 1, 2, 3};", "@ = @ + @;",
     "(long long)(@[0] + @[3])", 0, X86},
    {"struct16", "struct al16", "struct al16 @", "@.ld = k; @.tag = (unsigned)k;",
     "@.ld = @.ld * 2 + @.tag; @.tag = @.tag * 3 + 1;", "(long long)@.ld + @.tag", 0, NULL},
    {"struct32", "struct al32", "struct al32 @",
     "for (int q = 0; q < 4; q++)\n        @.a[q] = (unsigned)(k + q);\n    @.tag = 7;",
     "@.a[0] += @.tag; @.tag ^= @.a[1];", "(long long)@.a[0] + @.a[3] * 3LL + @.tag", 0, NULL},
    {"struct64", "struct al64", "struct al64 @",
     "for (int q = 0; q < 5; q++)\n        @.a[q] = (unsigned)(k * q);",
     "@.a[4] = @.a[4] * 3 + @.a[0];", "(long long)@.a[1] + @.a[4] * 3LL", 0, NULL},
    {"struct128", "struct al128", "struct al128 @", "@.c = 'c'; @.d[0] = k; @.d[1] = 0.5;",
     "@.d[1] = @.d[1] * 2 + @.d[0];", "(long long)(@.d[0] + @.d[1] * 4) + @.c", 0, NULL},
    {"struct4096", "struct page", "struct page @",
     "for (int q = 0; q < 40; q++)\n        @.b[q] = (unsigned char)(k + q);",
     "@.b[39] = (unsigned char)(@.b[39] * 3 + @.b[0]);", "(long long)@.b[0] + @.b[39] * 3LL", 0,
     NULL},
    {"union32", "union u32", "union u32 @", "@.v = (v8u){k, 1, 2, 3, 4, 5, 6, 7};",
     "@.i[7] += @.i[0]; @.v = @.v * 3;", "(long long)@.i[0] + @.i[7] * 3LL", 0, NULL},
    {"nested", "struct nest", "struct nest @",
     "@.c = 'n'; @.in.a[0] = (unsigned)k; @.in.a[4] = 1; @.w = (v4u){k, 0, 0, 1};",
     "@.in.a[4] += @.w[3]; @.w = @.w * 2 + 1;", "(long long)@.in.a[0] + @.in.a[4] + @.w[3] * 5LL",
     0, NULL},
    {"array_long_double", "long double[3]", "long double @[3]",
     "for (int q = 0; q < 3; q++)\n        @[q] = (long double)(k + q) / 2;",
     "@[2] = @[2] * 3 + @[0];", "(long long)(@[0] * 2 + @[2] * 2)", 1, NULL},
    {"array_vector16", "v4u[2]", "v4u @[2]", "@[0] = (v4u){k, 1, 2, 3}; @[1] = @[0] + 5;",
     "@[1] = @[1] * 3 + @[0];", "(long long)@[1][0] + @[1][3] * 3LL", 1, NULL},
    {"array_struct32", "struct al32[2]", "struct al32 @[2]",
     "for (int q = 0; q < 2; q++) {\n        for (int w = 0; w < 4; w++)\n"
     "            @[q].a[w] = (unsigned)(k + q + w);\n        @[q].tag = (unsigned)q;\n    }",
     "@[1] = @[0]; @[1].tag += 9;", "(long long)@[1].a[3] + @[1].tag * 3LL", 1, NULL},
    {"array_int128", "unsigned __int128[3]", "unsigned __int128 @[3]",
     "for (int q = 0; q < 3; q++)\n        @[q] = (unsigned __int128)(unsigned)(k + q) << 64;",
     "@[2] = @[2] * 3 + @[0];", "(long long)(unsigned long long)(@[2] >> 64)", 1, NULL},
    {"typedef_array", "line64", "line64 @", "memset(@, k & 0x3f, sizeof @);",
     "@[63] = (unsigned char)(@[63] * 3 + @[0]);", "(long long)@[0] + @[63] * 3LL", 1, NULL},
    {"typedef_struct", "pair32", "pair32 @", "@.x = k; @.y = -k;", "@.x += @.y * 3; @.y ^= 5;",
     "(long long)@.x * 3 + @.y", 0, NULL},
    {"typedef_scalar", "along64", "along64 @", "@ = k;", "@ = @ * 3 + 1;", "(long long)@", 0, NULL},
};

/* A base type for an alignment specifier: its type, set, step and value
 * (as in gen_type). */
typedef struct gen_base {
    const char *name, *type, *set, *step, *val;
    int array;
} gen_base;

static const gen_base s_bases[] = {
    {"chars", "char @[24]", "memset(@, k & 0x3f, sizeof @);", "@[1] = (char)(@[1] + 3);",
     "(long long)@[0] + @[1] * 3LL + @[23] * 5LL", 1},
    {"unsigned", "unsigned @", "@ = (unsigned)k;", "@ = @ * 3 + 1;", "(long long)@", 0},
    {"pair", "struct pair @", "@.x = k; @.y = -k;", "@.x += @.y * 3; @.y ^= 5;",
     "(long long)@.x * 3 + @.y", 0},
    {"double", "double @", "@ = k / 2.0;", "@ = @ * 1.5 + 1;", "(long long)(@ * 4)", 0},
    {"vector16", "v4u @", "@ = (v4u){k, k, 2, 3};", "@ = @ * 3 + 1;", "(long long)@[0] + @[3]", 0},
};

/* How the alignment is written: `#` stands for N, `@` for the declarator
 * (the base type's declaration). */
static const char *const s_forms[][2] = {
    {"alignas", "_Alignas(#) @"},
    {"attr_after", "@ __attribute__((aligned(#)))"},
    {"attr_before", "__attribute__((aligned(#))) @"},
    {"macro", "ALIGNED(#) @"},
    {"attr_list", "@ __attribute__((unused, __aligned__(#)))"},
};

static const unsigned s_aligns[] = {16, 32, 64, 128, 4096};
enum { S_AT_64 = 2 }; /* s_aligns[S_AT_64] == 64 */

#define GEN_N(a) (sizeof(a) / sizeof((a)[0]))

static const char s_prelude[] =
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "#if " X86 "\n"
    "#include <immintrin.h>\n"
    "#endif\n"
    "\n"
    "#define ALIGNED(n) _Alignas(n)\n"
    "\n"
    "typedef unsigned v4u __attribute__((vector_size(16)));\n"
    "typedef unsigned v8u __attribute__((vector_size(32)));\n"
    "typedef unsigned v16u __attribute__((vector_size(64)));\n"
    "typedef double v4d __attribute__((vector_size(32)));\n"
    "\n"
    "struct pair {\n"
    "    int x, y;\n"
    "};\n"
    "struct al16 {\n"
    "    long double ld;\n"
    "    unsigned tag;\n"
    "};\n"
    "struct al32 {\n"
    "    _Alignas(32) unsigned a[4];\n"
    "    unsigned tag;\n"
    "};\n"
    "struct __attribute__((aligned(64))) al64 {\n"
    "    unsigned a[5];\n"
    "};\n"
    "struct al128 {\n"
    "    char c;\n"
    "    _Alignas(128) double d[2];\n"
    "};\n"
    "struct page {\n"
    "    _Alignas(4096) unsigned char b[40];\n"
    "};\n"
    "union u32 {\n"
    "    v8u v;\n"
    "    unsigned i[8];\n"
    "};\n"
    "struct nest {\n"
    "    char c;\n"
    "    struct al64 in;\n"
    "    v4u w;\n"
    "};\n"
    "typedef struct pair pair32 __attribute__((aligned(32)));\n"
    "typedef long along64 __attribute__((aligned(64)));\n"
    "typedef unsigned char line64[64] __attribute__((aligned(64)));\n"
    "\n"
    "#define AL(T, n) ((size_t)(n) > _Alignof(T) ? (size_t)(n) : _Alignof(T))\n"
    "\n"
    "static int g_bad;\n"
    "\n"
    "/* Whether p is aligned to a; says so where it is not. */\n"
    "static void check(const void *p, size_t a, const char *what, int at)\n"
    "{\n"
    "    if ((uintptr_t)p % a != 0) {\n"
    "        printf(\"MISALIGNED %s at point %d: %p is not a multiple of %zu\\n\", what, at, p, "
    "a);\n"
    "        g_bad = 1;\n"
    "    }\n"
    "}\n"
    "\n"
    "/* Checkpointable (its loop polls): a safe point for its callers. */\n"
    "static int sp(int x)\n"
    "{\n"
    "    int r = x;\n"
    "    for (int q = 0; q < 3; q++)\n"
    "        r = r * 3 + q;\n"
    "    return r & 7;\n"
    "}\n"
    "\n"
    "/* A local of its caller, by its address, across a safe point. */\n"
    "static int touch(const void *p, size_t a, const char *what, int k)\n"
    "{\n"
    "    check(p, a, what, 10);\n"
    "    int r = sp(k);\n"
    "    check(p, a, what, 11);\n"
    "    return r;\n"
    "}\n";

/* Writes text with each `@` replaced by var. */
static void s_subst(FILE *out, const char *text, const char *var)
{
    for (const char *c = text; *c; c++) {
        if (*c == '@')
            fputs(var, out);
        else
            fputc(*c, out);
    }
}

/* One case: a function c_NAME(k, r) and, but for arrays, p_NAME(T *, k)
 * (the value through a pointer, in a local of the type itself, across a
 * safe point). `decl` declares @ with its alignment `align` (0: its
 * type's). */
static void s_case(FILE *out, const char *name, const char *type, const char *decl, unsigned align,
                   const char *set, const char *step, const char *val, int array)
{
    const char *v[2] = {"x", "y"};
    if (!array) {
        fprintf(out, "\nstatic void p_%s(%s *io, int k)\n{\n    %s w = *io;\n    ", name, type,
                type);
        s_subst(out, step, "w");
        fputs("\n    if (sp(k) & 1) {\n        ", out);
        s_subst(out, step, "w");
        fputs("\n    }\n    *io = w;\n}\n", out);
    }
    fprintf(out, "\n/* %s */\nstatic long long c_%s(int k, int r)\n{\n", decl, name);
    for (int i = 0; i < 2; i++) {
        fputs("    ", out);
        s_subst(out, decl, v[i]);
        fputs(";\n", out);
    }
    fputs("    int a;\n    ", out);
    s_subst(out, set, "x");
    fputs("\n", out);
    /* the checks of both locals at point `at` (y from 1 on) */
    for (int at = 0; at < 4; at++) {
        for (int i = 0; i < (at ? 2 : 1); i++)
            fprintf(out, "    check(&%s, AL(%s, %u), \"%s %s\", %d);\n", v[i], type, align, name,
                    v[i], at);
        switch (at) {
        case 0:
            fputs("    a = sp(k);\n", out);
            break;
        case 1:
            if (array)
                fputs("    memcpy(&y, &x, sizeof x);\n    ", out);
            else
                fputs("    y = x;\n    ", out);
            s_subst(out, step, "y");
            fprintf(out,
                    "\n    a += touch(&y, AL(%s, %u), \"%s y\", k);\n"
                    "    if (r > 0)\n        a += (int)(c_%s(k + 1, r - 1) & 0xff);\n",
                    type, align, name, name);
            break;
        case 2:
            if (array)
                fputs("    memcpy(&x, &y, sizeof y);\n    ", out);
            else
                fprintf(out, "    x = y;\n    p_%s(&x, k);\n    ", name);
            s_subst(out, step, "x");
            fputs("\n    a += sp(a);\n", out);
            break;
        default:
            break;
        }
    }
    fputs("    return (", out);
    s_subst(out, val, "x");
    fputs(") * 7 + (", out);
    s_subst(out, val, "y");
    fputs(") + a;\n}\n", out);
}

/* The end of a program: the table of cases and main. */
static void s_main(FILE *out, const char *const *names, const char *const *onlies, size_t n)
{
    fputs("\ntypedef long long (*case_fn)(int, int);\n\n"
          "static const struct {\n    const char *name;\n    case_fn fn;\n} s_cases[] = {\n",
          out);
    for (size_t i = 0; i < n; i++) {
        if (onlies[i])
            fprintf(out, "#if %s\n", onlies[i]);
        fprintf(out, "    {\"%s\", c_%s},\n", names[i], names[i]);
        if (onlies[i])
            fputs("#endif\n", out);
    }
    fputs("};\n"
          "\n"
          "/* d frames of an odd size below the case's: every offset mod 64. */\n"
          "static long long below(int d, case_fn fn, int k)\n"
          "{\n"
          "    char pad[40];\n"
          "    memset(pad, d, sizeof pad);\n"
          "    long long v = d > 0 ? below(d - 1, fn, k) : fn(k, k % 3);\n"
          "    return v + pad[d % 40];\n"
          "}\n"
          "\n"
          "int main(int argc, char **argv)\n"
          "{\n"
          "    long passes = argc > 1 ? atol(argv[1]) : 1;\n"
          "    for (long p = 0; passes <= 0 || p < passes; p++)\n"
          "        for (unsigned c = 0; c < sizeof s_cases / sizeof s_cases[0]; c++) {\n"
          "            int k = (int)(p % 1000) * 7 + (int)c;\n"
          "            long long v = below(k % 4, s_cases[c].fn, k);\n"
          "            printf(\"%s %d: %lld\\n\", s_cases[c].name, k, v);\n"
          "            fflush(stdout);\n"
          "        }\n"
          "    return g_bad;\n"
          "}\n",
          out);
}

static const char s_head[] =
    "/* align_%s.c - written by gen_align: %s, live across safe points,\n"
    " * checked aligned at each and computed on with aligned moves. Argument: the\n"
    " * number of passes (default 1, 0: forever). Exit status 1: one was misaligned.\n"
    " * levpp-test: resume 0 */\n";

/* Opens OUTDIR/align_GROUP.c (*path, to free) and writes its head, which
 * says it holds `what`, and the prelude. NULL if it cannot. */
static FILE *s_begin(const char *dir, const char *group, const char *what, char **path)
{
    size_t len = strlen(dir) + strlen(group) + 32;
    *path = malloc(len);
    if (!*path)
        return NULL;
    snprintf(*path, len, "%s/align_%s.c", dir, group);
    FILE *out = fopen(*path, "w");
    if (!out) {
        fprintf(stderr, "gen_align: cannot write %s: %s\n", *path, strerror(errno));
        free(*path);
        return NULL;
    }
    fprintf(out, s_head, group, what);
    fputs(s_prelude, out);
    return out;
}

static int s_close(FILE *out, char *path)
{
    int rc = 0;
    if (ferror(out) || fclose(out) != 0) {
        fprintf(stderr, "gen_align: cannot write %s\n", path);
        rc = -1;
    }
    free(path);
    return rc;
}

/* align_types.c: locals of over-aligned types. */
static int s_types_program(const char *dir)
{
    char *path;
    FILE *out = s_begin(dir, "types", "locals of types aligned to more than a pointer", &path);
    if (!out)
        return -1;
    const char *names[GEN_N(s_types)], *onlies[GEN_N(s_types)];
    for (size_t i = 0; i < GEN_N(s_types); i++) {
        const gen_type *t = &s_types[i];
        if (t->only)
            fprintf(out, "\n#if %s", t->only);
        s_case(out, t->name, t->type, t->decl, 0, t->set, t->step, t->val, t->array);
        if (t->only)
            fputs("#endif\n", out);
        names[i] = t->name;
        onlies[i] = t->only;
    }
    s_main(out, names, onlies, GEN_N(s_types));
    return s_close(out, path);
}

/* align_specs.c: locals whose alignment a specifier raises: every base
 * type with every alignment, each pair in one of the forms, in turn, and
 * every form for a struct aligned to 64. */
static int s_specs_program(const char *dir)
{
    char *path;
    FILE *out = s_begin(dir, "specs", "locals aligned by _Alignas or the aligned attribute", &path);
    if (!out)
        return -1;
    enum { NMAX = GEN_N(s_bases) * GEN_N(s_aligns) + GEN_N(s_forms) };
    char *names[NMAX];
    const char *onlies[NMAX] = {0};
    size_t n = 0;
    for (size_t bi = 0; bi < GEN_N(s_bases); bi++)
        for (size_t ai = 0; ai <= GEN_N(s_aligns); ai++) {
            /* the last round: every form, of a struct aligned to 64 */
            int all = ai == GEN_N(s_aligns);
            if (all && bi != 2)
                continue;
            for (size_t fi = 0; fi < GEN_N(s_forms); fi++) {
                if (all ? fi == (bi + S_AT_64) % GEN_N(s_forms) /* written already */
                        : fi != (bi + ai) % GEN_N(s_forms))
                    continue;
                const gen_base *b = &s_bases[bi];
                unsigned al = all ? 64 : s_aligns[ai];
                char decl[160], num[16], type[64];
                snprintf(num, sizeof num, "%u", al);
                /* the form, N and the declarator substituted */
                size_t o = 0;
                for (const char *c = s_forms[fi][1]; *c && o + 64 < sizeof decl; c++) {
                    const char *rep = *c == '#' ? num : *c == '@' ? b->type : NULL;
                    if (rep)
                        o += (size_t)snprintf(decl + o, sizeof decl - o, "%s", rep);
                    else
                        decl[o++] = *c;
                }
                decl[o] = 0;
                /* the type, for _Alignof: the declaration without its @ */
                o = 0;
                for (const char *c = b->type; *c && o + 1 < sizeof type; c++)
                    if (*c != '@')
                        type[o++] = *c;
                while (o && type[o - 1] == ' ')
                    o--;
                type[o] = 0;
                names[n] = malloc(64);
                if (!names[n])
                    return -1;
                snprintf(names[n], 64, "%s_%u_%s", b->name, al, s_forms[fi][0]);
                s_case(out, names[n], type, decl, al, b->set, b->step, b->val, b->array);
                n++;
            }
        }
    s_main(out, (const char *const *)names, onlies, n);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    return s_close(out, path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_align OUTDIR\n");
        return 2;
    }
    if (s_types_program(argv[1]) || s_specs_program(argv[1]))
        return 1;
    return 0;
}
