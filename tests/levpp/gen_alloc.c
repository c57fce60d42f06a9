/* gen_alloc.c - writes the corpus programs of levpp's allocation
 * wrappers: every form of expression whose value can only be an
 * allocation's result (a cast, parentheses, an arm of ?:, GNU ?:, a
 * comma's right operand, a statement expression's last statement, the
 * first argument of memset and memcpy), around every allocation (malloc,
 * calloc, realloc(NULL, n), a macro around malloc, a wrapper, a call
 * through a pointer), in every place where a wrapper's result is what it
 * returns (`return`, the initialiser or the one assignment of the local
 * it returns).
 *
 * usage: gen_alloc [--sample N] OUTDIR
 *
 * Writes OUTDIR/alloc_forms_PLACE.c, one program per place, one wrapper
 * per combination of form and allocation. With --sample N, only the
 * combinations of form F and allocation A with (F + A) % N == 0 (every
 * form and every allocation still appear). Each wrapper is called with
 * no type at hand but the caller's (a `struct node *` it initialises, or
 * a cast through a pointer to the wrapper), to build a list whose nodes
 * point at each other and at names from the same wrapper, with a safe
 * point after every node: a node that levpp left untyped holds the
 * address of another heap object, and the capture at the next safe point
 * (every one under LEV_TORTURE=1, and the checkpoints of a killed run)
 * fails. A
 * program builds each list once; given an argument N it does so N times
 * over (N = 0: forever, the kill-and-resume convention of
 * run_corpus.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gen_item {
    const char *name;
    const char *text;
} gen_item;

/* Allocations of `n` bytes. */
static const gen_item s_allocs[] = {
    {"malloc", "malloc(n)"}, {"calloc", "calloc(1, n)"},   {"realloc_null", "realloc(NULL, n)"},
    {"macro", "ALLOC(n)"},   {"wrapper", "base_alloc(n)"}, {"pointer", "g_hook(n)"},
};

/* Forms of expression around an allocation `@` whose value is it (or
 * NULL, in an arm that does not run). */
static const gen_item s_forms[] = {
    {"plain", "@"},
    {"void_cast", "(void *)@"},
    {"parens", "((@))"},
    {"cond_both", "n > 64 ? @ : calloc(n, 1)"},
    {"cond_second", "n <= 64 ? calloc(1, n) : @"},
    {"cond_null", "n ? @ : NULL"},
    {"null_cond", "!n ? NULL : (void *)@"},
    {"elvis", "@ ?: NULL"},
    {"comma", "(g_count++, @)"},
    {"stmt_expr", "({ g_count++; @; })"},
    {"memset", "memset(@, 0, n)"},
    {"memcpy", "memcpy(@, g_zero, n < sizeof g_zero ? n : sizeof g_zero)"},
    {"nested", "(void *)(n ? (g_count++, (void *)@) : NULL)"},
};

/* Places where the wrapper's result is what it returns: `@` stands for
 * the expression. */
static const gen_item s_places[] = {
    {"return", "    return @;\n"},
    {"init", "    void *p = @;\n    if (!p)\n        abort();\n    return p;\n"},
    {"assign", "    void *p;\n    g_count++;\n    p = @;\n    return p;\n"},
};

#define GEN_N(a) (sizeof(a) / sizeof((a)[0]))

/* What every program starts with: the node, the allocator a wrapper and
 * a pointer reach, and the list each wrapper builds. */
static const char s_prelude[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include <string.h>\n"
    "\n"
    "#define ALLOC(size) malloc(size)\n"
    "\n"
    "struct node {\n"
    "    struct node *next;\n"
    "    char *name;\n"
    "    long value;\n"
    "};\n"
    "\n"
    "static long g_count;\n"
    "static const char g_zero[8];\n"
    "\n"
    "/* A wrapper the wrappers call. */\n"
    "static void *base_alloc(size_t n) { return malloc(n); }\n"
    "\n"
    "/* A pointer returning void * the wrappers call through. */\n"
    "static void *(*g_hook)(size_t) = base_alloc;\n"
    "\n"
    "typedef void *(*wrapper_fn)(size_t);\n"
    "\n"
    "/* Checkpointable: its loop polls as soon as it is entered, a safe\n"
    " * point wherever it is called. */\n"
    "static long settle(long x)\n"
    "{\n"
    "    for (int i = 0; i < 3; i++)\n"
    "        x = x * 3 + i;\n"
    "    return x;\n"
    "}\n"
    "\n"
    "/* What each wrapper has to allocate: a list of nodes, each named. */\n"
    "static void report(int id, int round, struct node *head)\n"
    "{\n"
    "    long sum = 0;\n"
    "    size_t chars = 0;\n"
    "    for (struct node *q = head; q; q = q->next) {\n"
    "        sum += q->value;\n"
    "        chars += strlen(q->name);\n"
    "    }\n"
    "    printf(\"%d.%d: sum %ld chars %zu first %s\\n\", id, round, sum, chars, head->name);\n"
    "    fflush(stdout);\n"
    "    while (head) {\n"
    "        struct node *next = head->next;\n"
    "        free(head->name);\n"
    "        free(head);\n"
    "        head = next;\n"
    "    }\n"
    "}\n";

/* The test of wrapper `@` (number `#`): a list of nodes, from calls of
 * the wrapper (the node's type from the variable it initialises) and
 * through a pointer to it (from the cast), with safe points while it
 * grows; then walked (report). */
static const char s_test[] = "static void t#(int round)\n"
                             "{\n"
                             "    struct node *head = NULL;\n"
                             "    wrapper_fn fp = @;\n"
                             "    for (int i = 0; i < 40; i++) {\n"
                             "        struct node *x;\n"
                             "        if (i & 1) {\n"
                             "            x = (struct node *)fp(sizeof(struct node));\n"
                             "        } else {\n"
                             "            struct node *y = @(sizeof(struct node));\n"
                             "            x = y;\n"
                             "        }\n"
                             "        x->name = (char *)@(16);\n"
                             "        snprintf(x->name, 16, \"n#.%d\", i);\n"
                             "        x->value = settle((long)i * (round + 1));\n"
                             "        x->next = head;\n"
                             "        head = x;\n"
                             "    }\n"
                             "    report(#, round, head);\n"
                             "}\n";

/* Writes text with each `@` replaced by what and each `#` by id. */
static void s_subst(FILE *out, const char *text, const char *what, unsigned id)
{
    for (const char *c = text; *c; c++) {
        if (*c == '@')
            fputs(what, out);
        else if (*c == '#')
            fprintf(out, "%u", id);
        else
            fputc(*c, out);
    }
}

/* Writes the program of place pl. Returns 0, or -1 with a message if the
 * file cannot be written. */
static int s_program(const char *dir, const gen_item *pl, unsigned sample)
{
    size_t len = strlen(dir) + strlen(pl->name) + 32;
    char *path = malloc(len);
    if (!path)
        return -1;
    snprintf(path, len, "%s/alloc_forms_%s.c", dir, pl->name);
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "gen_alloc: cannot write %s: %s\n", path, strerror(errno));
        free(path);
        return -1;
    }
    fprintf(out,
            "/* alloc_forms_%s.c - written by gen_alloc: allocation wrappers whose\n"
            " * result (place: %s) is an allocation in every form of expression that\n"
            " * passes it on. Argument: the number of passes (default 1, 0: forever).\n"
            " * Combinations: one in %u (--sample).\n"
            " * levpp-test: resume 0 */\n",
            pl->name, pl->name, sample);
    fputs(s_prelude, out);
    unsigned id = 0, nids = 0;
    unsigned *ids = malloc(GEN_N(s_forms) * GEN_N(s_allocs) * sizeof *ids);
    if (!ids) {
        fclose(out);
        free(path);
        return -1;
    }
    for (size_t fi = 0; fi < GEN_N(s_forms); fi++) {
        for (size_t ai = 0; ai < GEN_N(s_allocs); ai++, id++) {
            if ((fi + ai) % sample != 0)
                continue;
            ids[nids++] = id;
            fprintf(out, "\n/* %s, %s */\nstatic void *w%u(size_t n)\n{\n", s_forms[fi].name,
                    s_allocs[ai].name, id);
            /* the form around the allocation, in the place */
            size_t flen = strlen(s_forms[fi].text) + strlen(s_allocs[ai].text) + 1;
            char *expr = malloc(flen), *e = expr;
            if (!expr) {
                free(ids);
                fclose(out);
                free(path);
                return -1;
            }
            for (const char *c = s_forms[fi].text; *c; c++)
                if (*c == '@')
                    e += sprintf(e, "%s", s_allocs[ai].text);
                else
                    *e++ = *c;
            *e = '\0';
            s_subst(out, pl->text, expr, id);
            free(expr);
            char wname[32];
            snprintf(wname, sizeof wname, "w%u", id);
            fputs("}\n\n", out);
            s_subst(out, s_test, wname, id);
        }
    }
    fputs("\nstatic void (*const s_all[])(int) = {", out);
    for (unsigned c = 0; c < nids; c++)
        fprintf(out, "%st%u,", c % 8 ? " " : "\n    ", ids[c]);
    free(ids);
    fputs("\n};\n"
          "\n"
          "int main(int argc, char **argv)\n"
          "{\n"
          "    long passes = argc > 1 ? atol(argv[1]) : 1;\n"
          "    for (long r = 0; passes <= 0 || r < passes; r++)\n"
          "        for (unsigned c = 0; c < sizeof s_all / sizeof s_all[0]; c++)\n"
          "            s_all[c]((int)(r % 1000));\n"
          "    printf(\"count %ld\\n\", g_count);\n"
          "    return 0;\n"
          "}\n",
          out);
    int rc = 0;
    if (ferror(out) || fclose(out) != 0) {
        fprintf(stderr, "gen_alloc: cannot write %s\n", path);
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
        fprintf(stderr, "usage: gen_alloc [--sample N] OUTDIR\n");
        return 2;
    }
    for (size_t i = 0; i < GEN_N(s_places); i++)
        if (s_program(argv[1], &s_places[i], sample))
            return 1;
    return 0;
}
