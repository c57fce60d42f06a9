/* life.c - Conway's game of life on a torus held in two heap grids,
 * one line per generation (flushed, so that a run killed and resumed
 * from a checkpoint shows where it stopped), a file-scope generation
 * counter and hash counter that keep their values across images.
 * usage: life [SIZE [GENERATIONS]]   (default 16 20; GENERATIONS 0: until killed)
 * Exit status: the number of live cells at the end modulo 64.
 */
/* levpp-test: resume 128 0 */
#include <stdio.h>
#include <stdlib.h>

static int g_generation;
static unsigned g_seed = 2463534242u;

static unsigned next_random(void)
{
    g_seed ^= g_seed << 13;
    g_seed ^= g_seed >> 17;
    g_seed ^= g_seed << 5;
    return g_seed;
}

static int cell(const unsigned char *g, int n, int x, int y)
{
    x = (x + n) % n;
    y = (y + n) % n;
    return g[y * n + x];
}

/* One generation from cur into next; returns the number of live cells. */
static int step(const unsigned char *cur, unsigned char *next, int n)
{
    int alive = 0;
    for (int y = 0; y < n; y++) {
        for (int x = 0; x < n; x++) {
            int s = cell(cur, n, x - 1, y - 1) + cell(cur, n, x, y - 1) +
                    cell(cur, n, x + 1, y - 1) + cell(cur, n, x - 1, y) +
                    cell(cur, n, x + 1, y) + cell(cur, n, x - 1, y + 1) +
                    cell(cur, n, x, y + 1) + cell(cur, n, x + 1, y + 1);
            int live = s == 3 || (s == 2 && cur[y * n + x]);
            next[y * n + x] = (unsigned char)live;
            alive += live;
        }
    }
    g_generation++;
    return alive;
}

static unsigned s_hash_calls;

static unsigned grid_hash(const unsigned char *g, int n)
{
    unsigned h = 2166136261u;
    for (int i = 0; i < n * n; i++)
        h = (h ^ g[i]) * 16777619u;
    s_hash_calls++;
    return h ^ s_hash_calls;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 16;
    int gens = argc > 2 ? atoi(argv[2]) : 20;
    if (n < 3 || gens < 0) {
        fprintf(stderr, "usage: life [SIZE >= 3 [GENERATIONS >= 0]]\n");
        return 2;
    }
    unsigned char *a = calloc((size_t)n * n, 1);
    unsigned char *b = calloc((size_t)n * n, sizeof(unsigned char));
    if (!a || !b)
        return 3;
    for (int i = 0; i < n * n; i++) {
        unsigned r = next_random();
        a[i] = r % 3 == 0;
    }
    int alive = 0;
    for (int g = 1; gens == 0 || g <= gens; g++) {
        alive = step(a, b, n);
        unsigned char *t = a;
        a = b;
        b = t;
        if (g % 7 == 0) { /* a glider's worth of fresh cells */
            unsigned r = next_random();
            int x = (int)(r % (unsigned)n), y = (int)((r >> 8) % (unsigned)n);
            a[y * n + (x + 1) % n] = 1;
            a[((y + 1) % n) * n + (x + 2) % n] = 1;
            for (int k = 0; k < 3; k++)
                a[((y + 2) % n) * n + (x + k) % n] = 1;
        }
        unsigned h = grid_hash(a, n);
        printf("gen %d alive %d hash %08x\n", g, alive, h);
        fflush(stdout);
    }
    printf("done: %d generations, %d alive, seed %08x\n", g_generation, alive, g_seed);
    free(a);
    free(b);
    return alive % 64;
}
