/* tinyexpr_driver.c - a deterministic, CPU-bound run of TinyExpr through
 * its public API: each round writes arithmetic expressions from a seeded
 * generator (numbers, the variables x and y, operators, parentheses and
 * the library's functions), compiles each with te_compile and evaluates
 * it over a grid of (x, y), interprets each once more with te_interp, and
 * prints one line: how many compiled, and a checksum of the results.
 *
 * usage: tinyexpr_driver ROUNDS [EXPRS [POINTS]]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tinyexpr.h"

static unsigned long long rnd(unsigned long long *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (*s * 2685821657736338717ULL) >> 16;
}

/* Appends an expression of at most DEPTH levels to B at *AT. */
static void expr(char *b, size_t *at, size_t cap, unsigned long long *s, int depth)
{
    static const char *const fn1[] = {"sin", "cos", "sqrt", "abs", "exp", "ln", "floor", "atan"};
    static const char *const op[] = {" + ", " - ", " * ", " / ", "^", " % "};
    unsigned long long r = rnd(s);
    if (*at + 64 >= cap)
        depth = 0;
    switch (depth > 0 ? r % 6 : r % 3) {
    case 0:
        *at += (size_t)sprintf(b + *at, "%llu.%llu", (r >> 8) % 100, (r >> 16) % 10);
        break;
    case 1:
        b[(*at)++] = 'x';
        break;
    case 2:
        b[(*at)++] = (r >> 4) & 1 ? 'y' : 'x';
        break;
    case 3:
        *at += (size_t)sprintf(b + *at, "%s(", fn1[(r >> 5) % 8]);
        expr(b, at, cap, s, depth - 1);
        b[(*at)++] = ')';
        break;
    case 4:
        *at += (size_t)sprintf(b + *at, (r >> 5) & 1 ? "pow(" : "atan2(");
        expr(b, at, cap, s, depth - 1);
        b[(*at)++] = ',';
        expr(b, at, cap, s, depth - 1);
        b[(*at)++] = ')';
        break;
    default:
        b[(*at)++] = '(';
        expr(b, at, cap, s, depth - 1);
        *at += (size_t)sprintf(b + *at, "%s", op[(r >> 5) % 6]);
        expr(b, at, cap, s, depth - 1);
        b[(*at)++] = ')';
        break;
    }
    b[*at] = 0;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    int nexpr = argc > 2 ? atoi(argv[2]) : 200;
    int points = argc > 3 ? atoi(argv[3]) : 60;
    double x = 0, y = 0;
    te_variable vars[] = {{"x", &x, TE_VARIABLE, NULL}, {"y", &y, TE_VARIABLE, NULL}};
    char text[4096];
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        unsigned long long s = 0x9e3779b97f4a7c15ULL ^ (unsigned long long)r;
        int compiled = 0, failed = 0;
        double sum = 0;
        unsigned long h = 2166136261UL;
        for (int e = 0; e < nexpr; e++) {
            size_t at = 0;
            expr(text, &at, sizeof text, &s, 2 + e % 5);
            int err = 0;
            te_expr *t = te_compile(text, vars, 2, &err);
            if (!t) {
                failed++;
                continue;
            }
            compiled++;
            for (int i = 0; i < points; i++)
                for (int j = 0; j < points; j++) {
                    x = -3.0 + 6.0 * i / points;
                    y = 0.25 + 2.0 * j / points;
                    double v = te_eval(t);
                    if (v == v && v < 1e300 && v > -1e300) {
                        sum += v;
                        h = ((h ^ (unsigned long)(long long)(v * 1024)) * 16777619UL) &
                            0xffffffffUL;
                    }
                }
            te_free(t);
            double v = te_interp(text, &err);
            h = ((h ^ (unsigned long)err) * 16777619UL) & 0xffffffffUL;
            if (v == v && v < 1e300 && v > -1e300)
                sum += v;
        }
        printf("round %ld: compiled %d failed %d sum %.6e fnv %08lx\n", r, compiled, failed, sum,
               h);
        fflush(stdout);
    }
    return 0;
}
