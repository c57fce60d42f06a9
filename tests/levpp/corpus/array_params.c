/* array_params.c - parameters declared as arrays and as functions, which
 * C adjusts to pointers: `unsigned char key[32]`, a typedef of an array
 * (`fe h`, `const fe f`), `const char *const lst[]`, a two-dimensional
 * `int m[][4]`, and `int op(int)`; each held across safe points in the
 * frame of a checkpointable function and used after them.
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

typedef int fe[10];

static void fe_add(fe h, const fe f, const fe g)
{
    for (int i = 0; i < 10; i++) {
        h[i] = f[i] + g[i];
        if (i % 4 == 0)
            lev_checkpoint();
    }
}

static unsigned mix_key(unsigned char key[32], unsigned seed)
{
    unsigned s = seed;
    for (int i = 0; i < 32; i++) {
        key[i] = (unsigned char)(key[i] ^ (s >> 3));
        s = s * 1103515245u + 12345u;
        lev_checkpoint();
    }
    return s ^ key[31];
}

static size_t total_len(const char *const lst[], int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++) {
        lev_checkpoint();
        t += strlen(lst[i]);
    }
    return t;
}

static int grid_sum(int m[][4], int rows)
{
    int s = 0;
    for (int r = 0; r < rows; r++) {
        lev_checkpoint();
        for (int c = 0; c < 4; c++)
            s += m[r][c] * (c + 1);
    }
    return s;
}

static int twice(int x) { return 2 * x; }

static int apply(int op(int), int x)
{
    lev_checkpoint();
    return op(x) + 1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    static const char *const words[] = {"alpha", "beta", "gamma", "delta"};
    unsigned char key[32];
    fe a, b, c;
    int grid[3][4];
    memset(key, 0x33, sizeof key);
    for (int i = 0; i < 10; i++) {
        a[i] = i;
        b[i] = 100 - i;
    }
    for (int round = 0; rounds == 0 || round < rounds; round++) {
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 4; k++)
                grid[r][k] = r * 4 + k + round;
        fe_add(c, a, b);
        a[round % 10] = (a[round % 10] + c[(round + 3) % 10]) % 1000;
        unsigned s = mix_key(key, (unsigned)round);
        printf("round %d: %u %zu %d %d %d\n", round, s, total_len(words, 4 - round % 4),
               grid_sum(grid, 3), apply(twice, round), c[9]);
        fflush(stdout);
    }
    return 0;
}
