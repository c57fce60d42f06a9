/* vla.c - variable-length arrays in checkpointable functions, alive across
 * the polls of the loops that fill and read them: arrays of ints, doubles
 * and of structs holding pointers (into other arrays and to strings),
 * sizeof of a VLA, &a, VLAs passed to functions, a new VLA in each pass
 * of a loop, VLAs in recursion, two-dimensional VLAs with a pointer to
 * their rows, a size expression with a side effect (evaluated once) and a
 * size that is a call of a checkpointable function; VLAs of a function
 * that is not checkpointable stay as written.
 * usage: vla [N [ROUNDS]]   (default 7 5; ROUNDS 0: until killed)
 * Exit status: the sum of the checks modulo 100. */
/* levpp-test: resume 40 0 */
#include <stdio.h>
#include <stdlib.h>

struct cell {
    int *slot;        /* into an int VLA of the caller */
    const char *name; /* a string literal */
    struct cell *next;
    double w;
};

static const char *s_names[] = {"ash", "birch", "cedar", "dogwood"};

/* Sums an int array passed as a pointer (checkpointable: it loops). */
static long sum_ints(const int *v, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* The size of an array from a loop, so the declaration calls a
 * checkpointable function. */
static int size_for(int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += 2;
    return k + 1;
}

/* Not checkpointable (no loop, no safe point): its VLAs and its typedef
 * of a VLA type stay as written. */
static int plain(int n)
{
    typedef int row[n];
    row r;
    int b[n];
    r[0] = n;
    b[n - 1] = 2;
    return r[0] + b[n - 1] + (int)(sizeof(row) / sizeof(int));
}

/* Recursion: each level has its own VLA of `depth` doubles, filled
 * before the recursive call and read after it. */
static double nest(int depth)
{
    if (depth == 0)
        return 1.0;
    double v[depth];
    for (int i = 0; i < depth; i++)
        v[i] = depth + i / 4.0;
    double below = nest(depth - 1);
    double s = 0;
    for (int i = 0; i < depth; i++)
        s += v[i];
    return s + below / 2;
}

/* Fills a two-dimensional array through its row pointer type. */
static void fill_grid(int rows, int cols, int seed, int (*g)[cols])
{
    (void)seed;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            g[r][c] = (r + 1) * (c + 2);
}

static long run(int n, int round, int work)
{
    int k = n;
    int vals[k++];   /* the size is read once: k is n + 1 afterwards */
    double dv[n + 1];
    struct cell cells[n];
    if (sizeof vals != (size_t)n * sizeof(int) || sizeof dv != (n + 1) * sizeof(double) ||
        sizeof cells / sizeof cells[0] != (size_t)n || k != n + 1)
        return -1;
    for (int i = 0; i < n; i++) {
        vals[i] = i * i + round;
        dv[i] = i * 0.5;
    }
    dv[n] = 0.25;
    for (int i = 0; i < n; i++) {
        cells[i].slot = &vals[n - 1 - i];
        cells[i].name = s_names[i % 4];
        cells[i].next = i + 1 < n ? &cells[i + 1] : NULL;
        cells[i].w = dv[i];
    }
    /* some polls while everything is alive */
    long spin = 0;
    for (int j = 0; j < work; j++)
        spin += j % 3;
    long s = sum_ints(vals, n);
    int (*whole)[n] = &vals;
    s += (*whole)[n - 1];
    long chain = 0;
    double wsum = 0;
    for (struct cell *c = &cells[0]; c; c = c->next) {
        chain += *c->slot + c->name[0];
        wsum += c->w;
    }
    /* a new array in each pass; the previous one is garbage */
    long passes = 0;
    for (int p = 1; p <= 3; p++) {
        int tmp[p * n];
        for (int i = 0; i < p * n; i++)
            tmp[i] = p + i;
        passes += sum_ints(tmp, p * n) + (long)(sizeof tmp / sizeof *tmp);
    }
    /* two dimensions, rows through a pointer to a VLA */
    int rows = n, cols = n + 2;
    int grid[rows][cols];
    fill_grid(rows, cols, round, grid);
    int (*row)[cols] = grid;
    long gs = 0;
    for (int r = 0; r < rows; r++, row++)
        for (int c = 0; c < cols; c++)
            gs += (*row)[c] * (r % 2 ? 1 : -1);
    gs += (long)(sizeof grid / sizeof grid[0]) * 1000 + (long)(sizeof grid[0] / sizeof grid[0][0]);
    int sized[size_for(n)];
    sized[size_for(n) - 1] = 5;
    printf("round %d: sum %ld chain %ld w %.2f passes %ld grid %ld sized %zu/%d nest %.4f "
           "spin %ld\n",
           round, s, chain, wsum, passes, gs, sizeof sized, sized[2 * n], nest(n % 5 + 2), spin);
    fflush(stdout);
    return s + chain + passes + gs;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 7;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 2 || n > 1000 || rounds < 0)
        return 99;
    long total = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++)
        total += run(n + r % 3, r, 300);
    printf("total %ld plain %d\n", total, plain(n));
    return (int)(total % 100);
}
