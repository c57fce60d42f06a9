/* gen_unbraced.c - writes the corpus programs of levpp's unbraced
 * statements: every place where C lets a statement stand without braces
 * (if and else branches, the bodies of for, while and do, case, default
 * and ordinary labels, the body of a switch, and these nested in each
 * other), each combined with every form of expression that can hold a
 * call of a checkpointable function (comma, ?:, GNU ?:, &&, ||, compound
 * assignment, compound literals and initialiser lists, statement
 * expressions, calls as arguments of calls).
 *
 * usage: gen_unbraced [--sample N] OUTDIR
 *
 * Writes OUTDIR/unbraced_GROUP.c, one program per group of positions,
 * one function per combination. With --sample N, only the combinations
 * of position P and form F with (P + F) % N == 0: every position and
 * every form still appear, in a program N times smaller (the sanitizer
 * build, where compiling the whole product would take minutes). Each run of a combination prints a
 * line with its variables and the count and order of the calls made so far (a hash of their
 * arguments), so a call evaluated once too often, too seldom or out of order changes the output. A
 * program runs every combination four times; given an argument N it does so N times over (N = 0:
 * forever, the kill-and-resume convention of run_corpus.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A statement position: `@` stands for the statement, written with no
 * braces; it may stand there more than once. `$` ends the name of a label
 * (made unique in the function). */
typedef struct gen_pos {
    const char *name;
    const char *text;
} gen_pos;

/* An expression statement holding checkpointable calls (f, g, h). */
typedef struct gen_form {
    const char *name;
    const char *text;
} gen_form;

/* Programs: positions where one statement stands unbraced. */
static const gen_pos s_simple[] = {
    {"if_else", "if (k & 2)\n        @\n    else\n        @"},
    {"if_call", "if (f(k) & 1)\n        @"},
    {"else_if", "if (k == 0)\n        b = 7;\n    else if (k & 1)\n        @\n    else\n        @"},
    {"for", "for (i = 0; i < 3; i++)\n        @"},
    {"for_decl", "for (int q = 0; q < 2; q++)\n        @"},
    {"for_cond_call", "for (i = 0; i < 3 && f(i) != 99; i++)\n        @"},
    {"for_inc_call", "for (i = 0; i < 4; i += 1 + (f(i) & 1))\n        @"},
    {"for_ever", "for (;;)\n        if (n++ < 2)\n            @\n        else\n            break;"},
};

static const gen_pos s_loops[] = {
    {"while", "while (n++ < 3)\n        @"},
    {"while_call", "while (f(n++) != 99 && n < 4)\n        @"},
    {"do", "do\n        @\n    while (n++ < 2);"},
    {"do_call", "do\n        @\n    while (f(n++) != 99 && n < 3);"},
    {"case", "switch (k % 3) {\n    case 0:\n        @\n        break;\n    case 1:\n        @\n"
             "        /* fall through */\n    default:\n        @\n    }"},
    {"switch_body", "switch (k & 1)\n    case 0:\n    default:\n        @"},
    {"label", "n = 0;\nagain$:\n    @\n    if (++n < 2)\n        goto again$;"},
    {"label_skip", "if (k & 1)\n        goto skip$;\n    b -= 3;\nskip$:\n    @"},
};

/* Positions nested in each other, unbraced at every level. */
static const gen_pos s_nested[] = {
    {"for_if", "for (i = 0; i < 3; i++)\n        if (i & 1)\n            @"},
    {"for_else", "for (i = 0; i < 3; i++)\n        if (i & 1)\n            b--;\n        else\n"
                 "            @"},
    {"while_for", "while (n++ < 2)\n        for (i = 0; i < 2; i++)\n            @"},
    {"if_while", "if (k != 3)\n        while (n++ < 2)\n            @"},
    {"if_if_else", "if (k & 1)\n        if (k & 2)\n            @\n        else\n            @"},
    {"do_case", "do\n        switch (n % 2) {\n        case 0:\n            @\n            break;\n"
                "        default:\n            @\n        }\n    while (++n < 3);"},
    {"label_for",
     "again$:\n    for (i = 0; i < 2; i++)\n        @\n    if (++n < 2)\n        goto again$;"},
    {"case_loops", "switch (k % 2) {\n    case 0:\n        while (n++ < 2)\n            @\n"
                   "        break;\n    default:\n        do\n            @\n"
                   "        while (++n < 2);\n    }"},
    {"for_for", "for (i = 0; i < 2; i++)\n        for (j = 0; j < 2; j++)\n            @"},
    {"while_if_call", "while (n < 3)\n        if (f(n++) & 1)\n            @\n        else\n"
                      "            @"},
    {"else_for_label", "if (k & 1)\n        b++;\n    else\n        for (i = 0; i < 2; i++)\n"
                       "            switch (i)\n            default:\n                @"},
};

static const gen_form s_forms[] = {
    /* comma: the right operand calls, the left one too, chains */
    {"comma", "a += f(k), a %= 7;"},
    {"comma_left", "b = f(a), a++;"},
    {"comma_chain", "b++, a = h(b), b += a;"},
    {"comma_arg", "a = g((b++, f(b)), k);"},
    /* ?: and GNU ?: */
    {"cond", "a = (k & 1) ? f(a) : h(b) + 1;"},
    {"cond_void", "(b & 1) ? (void)f(a) : (void)(a = f(k));"},
    {"cond_nested", "a = k ? (b > 2 ? f(b) : f(a)) : (b++, h(k));"},
    {"elvis", "a = f(k) ?: f(b);"},
    /* && and || */
    {"and", "a = (b & 1) && f(k);"},
    {"and_chain", "(void)(b > 0 && (a = f(b)) > 3 && (b = f(a)));"},
    {"and_stmt", "b > 0 && (a = f(b)) > 3 && (b = f(a));"},
    {"or", "a = (b & 2) || f(k) > 2;"},
    {"or_value_unused", "(b & 1) || (a += h(k));"},
    {"or_chain", "(void)(f(k) > 3 || (b & 1) || (a = h(a)) > 5);"},
    /* compound assignment */
    {"compound", "a += f(k);"},
    {"compound_nested", "b ^= (a -= f(b)) | 1;"},
    {"compound_index", "v[f(k) & 3] -= 5;"},
    /* compound literals, initialiser lists */
    {"literal", "a = ((struct pair){f(k), b}).x + ((struct pair){b, 3}).y;"},
    {"literal_array", "a = ((int[]){b, h(k), 3})[b & 1 ? 1 : 2];"},
    {"literal_designated", "p = (struct pair){.y = f(k), .x = b}, a = p.x - p.y;"},
    /* ... whose `}` ends the statement, its `;` after it */
    {"literal_last", "p = (struct pair){f(k), p.x + b};"},
    {"literal_last_plain", "p = (struct pair){.y = p.x, .x = b + k};"},
    /* statement expressions */
    {"stmt_expr", "a = ({ int t = f(k); t + b; });"},
    {"stmt_expr_void", "({ b++; a = f(b); });"},
    {"stmt_expr_loop", "a += ({ int s = 0; for (int q = 0; q < 2; q++) s += f(q + b); s; });"},
    /* calls as arguments of calls */
    {"call_arg", "a = f(f(k) & 7);"},
    {"call_arg_mixed", "a = g(h(k), b) - abs(b);"},
    {"call_arg_native", "b = abs(f(a) - 9);"},
};

#define GEN_N(a) (sizeof(a) / sizeof((a)[0]))

/* What every program starts with: the checkpointable functions (f and g
 * lazy, h with a frame), the report of one run, the struct. */
static const char s_prelude[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "\n"
    "#pragma GCC diagnostic ignored \"-Wdangling-else\"\n"
    "#pragma GCC diagnostic ignored \"-Wunused-value\"\n"
    "\n"
    "struct pair {\n"
    "    int x, y;\n"
    "};\n"
    "\n"
    "static unsigned g_calls, g_trace;\n"
    "\n"
    "/* Counts the call and hashes its argument into the trace. */\n"
    "static void note(int x)\n"
    "{\n"
    "    g_calls++;\n"
    "    g_trace = g_trace * 33u + (unsigned)(x & 0xffff) + 1u;\n"
    "}\n"
    "\n"
    "/* Checkpointable (its loop polls); zero for multiples of 4. */\n"
    "static int f(int x)\n"
    "{\n"
    "    int r = x;\n"
    "    for (int q = 0; q < 2; q++)\n"
    "        r = r * 5 + q;\n"
    "    note(x);\n"
    "    return x % 4 == 0 ? 0 : r % 13;\n"
    "}\n"
    "\n"
    "/* Checkpointable through its calls of f. */\n"
    "static int g(int x, int y)\n"
    "{\n"
    "    int r = y;\n"
    "    for (int q = 0; q < 2; q++)\n"
    "        r += f(x + q);\n"
    "    note(r);\n"
    "    return r;\n"
    "}\n"
    "\n"
    "/* Checkpointable, with an array: its state lives in a frame. */\n"
    "static int h(int x)\n"
    "{\n"
    "    int t[3] = {x, x + 1, x + 2}, s = 0;\n"
    "    for (int q = 0; q < 3; q++)\n"
    "        s += t[q] * (q + 1);\n"
    "    note(s);\n"
    "    return s % 11;\n"
    "}\n"
    "\n"
    "/* One line per run of a combination, flushed. */\n"
    "static void report(int id, int k, int a, int b, int n, const int *v, struct pair p)\n"
    "{\n"
    "    printf(\"%d.%d: a %d b %d n %d v %d %d %d %d p %d %d calls %u trace %u\\n\", id, k, a, "
    "b,\n"
    "           n, v[0], v[1], v[2], v[3], p.x, p.y, g_calls, g_trace);\n"
    "    fflush(stdout);\n"
    "}\n";

/* Writes text with each `@` replaced by stmt and each `$` by the number
 * of the combination. */
static void s_subst(FILE *out, const char *text, const char *stmt, unsigned id)
{
    for (const char *c = text; *c; c++) {
        if (*c == '@')
            fputs(stmt, out);
        else if (*c == '$')
            fprintf(out, "%u", id);
        else
            fputc(*c, out);
    }
}

/* Writes one program: a function per combination of a position of ps
 * with a form, and main running them all in order through a table (one
 * resumable call through a pointer, not one call site each). Returns 0,
 * or -1 with a message if the file cannot be written. */
static int s_program(const char *dir, const char *group, const gen_pos *ps, size_t nps,
                     unsigned sample)
{
    size_t len = strlen(dir) + strlen(group) + 32;
    char *path = malloc(len);
    if (!path)
        return -1;
    snprintf(path, len, "%s/unbraced_%s.c", dir, group);
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "gen_unbraced: cannot write %s: %s\n", path, strerror(errno));
        free(path);
        return -1;
    }
    fprintf(out,
            "/* unbraced_%s.c - written by gen_unbraced: statements standing unbraced\n"
            " * (positions: %s) holding calls of checkpointable functions in every form\n"
            " * of expression. Argument: the number of passes (default 1, 0: forever).\n"
            " * Combinations: one in %u (--sample).\n"
            " * Exit status: the trace of calls modulo 100.\n"
            " * levpp-test: resume 0 */\n",
            group, group, sample);
    fputs(s_prelude, out);
    unsigned id = 0, *ids = malloc(nps * GEN_N(s_forms) * sizeof *ids), nids = 0;
    if (!ids) {
        fclose(out);
        free(path);
        return -1;
    }
    for (size_t pi = 0; pi < nps; pi++) {
        for (size_t fi = 0; fi < GEN_N(s_forms); fi++, id++) {
            if ((pi + fi) % sample != 0)
                continue;
            ids[nids++] = id;
            fprintf(out,
                    "\n/* %s, %s */\n"
                    "static void c%u(int k)\n"
                    "{\n"
                    "    int a = k + 1, b = 2, n = 0, i = 0, j = 0;\n"
                    "    int v[4] = {1, 2, 3, 4};\n"
                    "    struct pair p = {0, 0};\n"
                    "    ",
                    ps[pi].name, s_forms[fi].name, id);
            s_subst(out, ps[pi].text, s_forms[fi].text, id);
            fprintf(out, "\n    report(%u, k, a, b, n + i * 10 + j * 100, v, p);\n}\n", id);
        }
    }
    fputs("\nstatic void (*const s_all[])(int) = {", out);
    for (unsigned c = 0; c < nids; c++)
        fprintf(out, "%sc%u,", c % 8 ? " " : "\n    ", ids[c]);
    free(ids);
    fputs("\n};\n"
          "\n"
          "int main(int argc, char **argv)\n"
          "{\n"
          "    long passes = argc > 1 ? atol(argv[1]) : 1;\n"
          "    for (long r = 0; passes <= 0 || r < passes; r++)\n"
          "        for (int k = 0; k < 4; k++)\n"
          "            for (unsigned c = 0; c < sizeof s_all / sizeof s_all[0]; c++)\n"
          "                s_all[c](k + (int)(r % 1000) * 4);\n"
          "    return (int)(g_trace % 100u);\n"
          "}\n",
          out);
    int rc = 0;
    if (ferror(out) || fclose(out) != 0) {
        fprintf(stderr, "gen_unbraced: cannot write %s\n", path);
        rc = -1;
    }
    free(path);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned sample = 1;
    if (argc == 4 && strcmp(argv[1], "--sample") == 0) {
        sample = (unsigned)atoi(argv[2]);
        argv += 2;
        argc -= 2;
    }
    if (argc != 2 || sample < 1) {
        fprintf(stderr, "usage: gen_unbraced [--sample N] OUTDIR\n");
        return 2;
    }
    if (s_program(argv[1], "simple", s_simple, GEN_N(s_simple), sample) ||
        s_program(argv[1], "loops", s_loops, GEN_N(s_loops), sample) ||
        s_program(argv[1], "nested", s_nested, GEN_N(s_nested), sample))
        return 1;
    return 0;
}
