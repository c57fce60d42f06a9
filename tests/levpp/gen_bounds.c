/* gen_bounds.c - writes the corpus program of levpp's bounded loops: the
 * innermost loops whose trip count one comparison of their condition
 * bounds (preproc/pp_bound.c, and the counted loops of pp_loop.c), in
 * every kind of loop (a for with its increment; a while stepping at the
 * end of its body, at its start, or whose body is the step alone), every
 * type of induction variable (int, unsigned, size_t, unsigned char, long,
 * unsigned short, an unsigned bounded by a size_t, a char pointer, a
 * pointer to structs; every bound a `const` local),
 * every comparison and direction (< <= > >= != up and down, the bound on
 * the left, a step of 3), each with another conjunct before or after the
 * comparison or none, a `break` or none, at the top of the function or
 * nested in another loop, and trip counts below and above the poll
 * budget (4,096), so that strips end by the bound, by the budget, by the
 * other conjunct and by the break.
 *
 * usage: gen_bounds OUTDIR   (writes OUTDIR/bounds.c)
 *
 * The program prints a line per kind of loop per round: a hash of where
 * every loop stopped and what it read. Argument: the number of rounds
 * (default 2, 0: forever, the kill-and-resume convention of
 * run_corpus.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The induction variable's type, the bound's, how an element is read at
 * V and where V is (as a long), and the base its values start from. */
typedef struct gen_type {
    const char *name, *vt, *bt, *elem, *pos, *base;
    int small; /* at most 200 iterations (unsigned char) */
} gen_type;

static const gen_type s_types[] = {
    {"int", "int", "int", "g_data[v]", "(long)v", "0", 0},
    {"unsigned", "unsigned", "unsigned", "g_data[v]", "(long)v", "0u", 0},
    {"size_t", "size_t", "size_t", "g_data[v]", "(long)v", "(size_t)0", 0},
    {"uchar", "unsigned char", "unsigned char", "g_data[v]", "(long)v", "0", 1},
    {"long", "long", "long", "g_data[v]", "v", "0L", 0},
    {"ushort", "unsigned short", "unsigned short", "g_data[v]", "(long)v", "0", 0},
    {"u32_size", "unsigned", "size_t", "g_data[v]", "(long)v", "0u", 0},
    {"charp", "const char *", "const char *", "(int)*v", "(long)(v - g_chars)", "g_chars", 0},
    {"recp", "struct rec *", "struct rec *", "v->x", "(long)(v - g_recs)", "g_recs", 0},
};

/* A comparison: the condition with `V` and `B`, the start of V and the
 * bound B (`LO` and `HI` stand for base + 2 and base + 2 + n), the step. */
typedef struct gen_op {
    const char *name, *cond, *start, *bound, *step;
    int ints; /* for integers only */
} gen_op;

static const gen_op s_ops[] = {
    {"lt_up", "v < lim", "LO", "HI", "v++", 0},
    {"le_up", "v <= lim", "LO", "HI - 1", "++v", 0},
    {"gt_down", "v > lim", "HI - 1", "LO - 1", "v--", 0},
    {"ge_down", "v >= lim", "HI - 1", "LO", "--v", 0},
    {"ne_up", "v != lim", "LO", "HI", "v++", 0},
    {"ne_down", "v != lim", "HI - 1", "LO - 1", "v -= 1", 0},
    {"bound_left", "lim > v", "LO", "HI", "v += 1", 0},
    {"step3", "v < lim", "LO", "HI", "v += 3", 1},
};

/* The kind of loop: `C` is the condition, `S` the step, `B` the body. */
typedef struct gen_kind {
    const char *name, *text;
} gen_kind;

static const gen_kind s_kinds[] = {
    {"for", "for (v = START; C; S) {\n            B\n        }"},
    {"while_last", "v = START;\n        while (C) {\n            B\n            S;\n        }"},
    {"while_first", "v = START;\n        while (C) {\n            S;\n            F\n        }"},
    {"while_step", "v = START;\n        while (C)\n            S;"},
};

#define GEN_N(a) (sizeof(a) / sizeof((a)[0]))

static const char s_prelude[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "\n"
    "#define N 9000\n"
    "struct rec {\n"
    "    int x;\n"
    "    short y;\n"
    "};\n"
    "static int g_data[N + 8];\n"
    "static char g_chars[N + 8];\n"
    "static struct rec g_recs[N + 8];\n"
    "\n"
    "/* The data of a round: 96 (which the second conjunct stops at) and 95\n"
    " * (which the breaks stop at) now and then. */\n"
    "static void fill(long seed)\n"
    "{\n"
    "    for (int i = 0; i < N + 8; i++) {\n"
    "        int x = (int)((i * 7L + seed * 13) % 97);\n"
    "        if (x == 96 && (i + seed) % 3)\n"
    "            x = 1;\n"
    "        g_data[i] = x;\n"
    "        g_chars[i] = (char)x;\n"
    "        g_recs[i].x = x;\n"
    "        g_recs[i].y = (short)i;\n"
    "    }\n"
    "}\n";

/* Writes text with each placeholder replaced: START, C, S, B, F, LO, HI,
 * from the combination. */
static void s_subst(FILE *out, const char *text, const char *const *from, const char *const *to,
                    size_t n)
{
    for (const char *c = text; *c;) {
        size_t i = 0;
        for (; i < n; i++)
            if (strncmp(c, from[i], strlen(from[i])) == 0)
                break;
        if (i < n) {
            s_subst(out, to[i], from, to, n);
            c += strlen(from[i]);
        } else {
            fputc(*c++, out);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_bounds OUTDIR\n");
        return 2;
    }
    size_t len = strlen(argv[1]) + 16;
    char *path = malloc(len);
    if (!path)
        return 1;
    snprintf(path, len, "%s/bounds.c", argv[1]);
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "gen_bounds: cannot write %s: %s\n", path, strerror(errno));
        free(path);
        return 1;
    }
    fputs("/* bounds.c - written by gen_bounds: innermost loops bounded by one\n"
          " * comparison of their condition, of every kind, type and direction.\n"
          " * Argument: the number of rounds (default 2, 0: forever).\n"
          " * Exit status: the last hash modulo 100.\n"
          " * levpp-test: resume 0 */\n",
          out);
    fputs(s_prelude, out);
    unsigned id = 0;
    for (size_t ki = 0; ki < GEN_N(s_kinds); ki++) {
        for (size_t ti = 0; ti < GEN_N(s_types); ti++) {
            const gen_type *t = &s_types[ti];
            for (size_t oi = 0; oi < GEN_N(s_ops); oi++, id++) {
                const gen_op *o = &s_ops[oi];
                int ptr = strchr(t->vt, '*') != NULL;
                /* every value of each of these appears in each kind */
                unsigned conj = (unsigned)(ti + oi) % 3, brk = (unsigned)(ti + oi + ki) % 2,
                         nested = (unsigned)(ti * 3 + oi) % 2;
                if (o->ints && ptr)
                    conj = 0; /* pointers step one element: a countdown loop */
                char cond[256], body[256], lo[64], hi[64];
                if (conj == 0)
                    snprintf(cond, sizeof cond, "%s", o->cond);
                else if (conj == 1)
                    snprintf(cond, sizeof cond, "%s && %s != 96", o->cond, t->elem);
                else
                    snprintf(cond, sizeof cond, "%s != 96 && %s", t->elem, o->cond);
                if (strcmp(s_kinds[ki].name, "while_step") == 0)
                    brk = 0;
                snprintf(body, sizeof body, "s = s * 31 + (unsigned long)(%s);%s", t->elem,
                         brk ? "\n            if (s % 89 == 5)\n                break;" : "");
                snprintf(lo, sizeof lo, "(%s + 2)", t->base);
                snprintf(hi, sizeof hi, "(%s + 2 + n)", t->base);
                const char *from[] = {"START", "HI", "LO", "C", "S", "B", "F"};
                const char *to[] = {o->start,
                                    hi,
                                    lo,
                                    cond,
                                    o->step,
                                    body,
                                    brk ? "s = s * 7 + (++k);\n            if (s % 89 == 5)\n"
                                          "                break;"
                                        : "s = s * 7 + (++k);"};
                fprintf(out,
                        "\n/* %s, %s, %s, %s%s%s */\n"
                        "static long c%u(long n)\n"
                        "{\n"
                        "    unsigned long s = 0, k = 0;\n"
                        "    (void)k;\n"
                        "    %s v;\n"
                        "%s"
                        "    for (int o = 0; o < %d; o++) {\n"
                        "        %s const lim = ",
                        s_kinds[ki].name, t->name, o->name,
                        conj == 0   ? "no other conjunct"
                        : conj == 1 ? "a conjunct after"
                                    : "a conjunct before",
                        brk ? ", a break" : "", nested ? ", nested" : "", id, t->vt,
                        t->small ? "    if (n > 200)\n        n = 200;\n" : "", nested ? 3 : 1,
                        t->bt);
                s_subst(out, o->bound, from, to, GEN_N(from));
                fputs(";\n        ", out);
                s_subst(out, s_kinds[ki].text, from, to, GEN_N(from));
                fprintf(out,
                        "\n        s = s * 31 + (unsigned long)(%s + o);\n    }\n    return "
                        "(long)s;\n}\n",
                        t->pos);
            }
        }
    }
    unsigned per = (unsigned)(GEN_N(s_types) * GEN_N(s_ops));
    fputs("\nstatic long (*const s_all[])(long) = {", out);
    for (unsigned c = 0; c < id; c++)
        fprintf(out, "%sc%u,", c % 8 ? " " : "\n    ", c);
    fprintf(out,
            "\n};\n"
            "\n"
            "int main(int argc, char **argv)\n"
            "{\n"
            "    long rounds = argc > 1 ? atol(argv[1]) : 2;\n"
            "    static const long sizes[] = {9000, 10, 4200, 0, 4097, 1};\n"
            "    unsigned long h = 0;\n"
            "    for (long r = 0; rounds <= 0 || r < rounds; r++) {\n"
            "        fill(r);\n"
            "        for (unsigned kind = 0; kind < %zu; kind++) {\n"
            "            h = 0;\n"
            "            for (unsigned c = kind * %u; c < (kind + 1) * %u; c++)\n"
            "                h = h * 1000003u + (unsigned long)s_all[c](sizes[(c + r) %% 6]);\n"
            "            printf(\"round %%ld kind %%u: %%lx\\n\", r, kind, h);\n"
            "            fflush(stdout);\n"
            "        }\n"
            "    }\n"
            "    return (int)(h %% 100u);\n"
            "}\n",
            GEN_N(s_kinds), per, per);
    int rc = 0;
    if (ferror(out) || fclose(out) != 0) {
        fprintf(stderr, "gen_bounds: cannot write %s\n", path);
        rc = 1;
    }
    free(path);
    return rc;
}
