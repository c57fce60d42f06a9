/* const_loops.c - counted loops whose start and bound are constants, of
 * at most 256 iterations (charged to the poll budget at once as they
 * start, or not at all when short and nested in another loop), beside
 * the shapes that must stay as they were: a start or bound that is not a
 * constant, an induction variable whose address is taken, a loop longer
 * than 256 iterations, values at the ends of narrow and unsigned types
 * (no wrap-around), a break, a case of a switch around the loop, a
 * recursion whose only loops are short ones, and the board-copy shape
 * of a chess engine (arrays saved and restored around a recursive
 * call). Each round prints one checksum line.
 * usage: const_loops [ROUNDS]   (default 3); ROUNDS 0: rounds without end
 * Exit status: the last checksum modulo 100. */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P, N, B, R, Q, K, p, n, b, r, q, k };

static unsigned long long boards[12], occ[3];
static int side;

/* occupancies from the boards: two loops over enum constants */
static void update_occ(void)
{
    memset(occ, 0, sizeof occ);
    for (int i = P; i <= K; i++)
        occ[0] |= boards[i];
    for (int i = p; i <= k; i++)
        occ[1] |= boards[i];
    occ[2] = occ[0] | occ[1];
}

/* every step and comparison, up and down, with a constant start */
static long shapes(long seed)
{
    long s = seed;
    int i;
    for (i = 0; i < 7; i++)
        s += i * seed;
    for (i = 7; i >= 0; i--)
        s = s * 3 + i;
    for (i = 10; i > 1; i -= 3)
        s ^= i << 2;
    for (i = 1; i <= 40; i += 5)
        s += i;
    for (long j = -5; j < 5; j++)
        s += j * j;
    for (unsigned u = 3; u > 0; u--)
        s += u;
    for (unsigned u = 0; u < 256; u++) /* 256 iterations: the most charged at once */
        s += u & seed;
    for (unsigned u = 0; u < 257; u++) /* one more: strips as before */
        s -= u & 3;
    for (unsigned char c = 250; c < 255; c++) /* ends at the top of its type */
        s += c;
    for (signed char c = -128; c < -120; c++)
        s += c;
    for (short h = 32760; h < 32767; h++)
        s += h & 7;
    for (i = 5; i < 5; i++) /* never runs */
        s += 1000;
    return s;
}

/* loops that are not constant or not plain: each as written */
static long others(long seed, int m)
{
    long s = seed;
    int i, j;
    for (i = 0; i < m; i++) /* bound from a parameter */
        s += i;
    for (i = m; i < 12; i++) /* start from a parameter */
        s += 2 * i;
    int *pi = &j; /* address taken: the body may move it */
    for (j = 0; j < 8; j++) {
        s += *pi;
        if (j == 3 && seed % 5 == 0)
            *pi = 5;
    }
    for (i = 0; i < 16; i++) { /* break */
        if (((seed >> i) & 7) == 7)
            break;
        s += i;
    }
    switch (seed % 3) {
    case 0:
        for (i = 0; i < 4; i++) {
            s += i;
            /* fall through */
        case 1:
            s += 100;
        }
        break;
    default:
        s -= 1;
    }
    for (i = 0; i < 8; i++) /* nested, short: not charged */
        for (j = 0; j < 8; j++)
            s += (i ^ j) & seed;
    return s;
}

struct pt {
    long x, y;
};

/* loops whose bodies end in a compound literal, one long enough to be
 * copied four times per decrement of the budget */
static long literal_bodies(long n)
{
    struct pt ps[64];
    long i = 0, s = 0;
    for (int j = 0; j < 64; j++)
        ps[j] = (struct pt){j, -j};
    while (i++ < n)
        ps[(i & 63)] = (struct pt){i * 3 + n * 7 + (i >> 2) * 11 + (i & 5) * 13 + 12345,
                                   i * i + n * 1000 + 77 * (i & 3) + (i & 1)};
    for (int j = 0; j < 64; j++)
        s += ps[j].x ^ ps[j].y;
    return s;
}

/* a recursion whose only loops are short */
static long rec(int depth, long acc)
{
    long t[4];
    for (int i = 0; i < 4; i++)
        t[i] = acc + i * depth;
    if (depth == 0)
        return t[3];
    long s = 0;
    for (int i = 0; i < 4; i++)
        s += t[i] & 15;
    return s + rec(depth - 1, acc * 5 + s) % 1000003;
}

/* board copy around a recursive call, as a perft does */
static long perft(int depth)
{
    if (depth == 0)
        return 1;
    long nodes = 0;
    for (int m = 0; m < 6; m++) {
        unsigned long long save[12], save_occ[3];
        int save_side = side;
        memcpy(save, boards, sizeof save);
        memcpy(save_occ, occ, sizeof save_occ);
        boards[(m + side * 6) % 12] ^= 1ULL << ((m * 7 + depth) & 63);
        side ^= 1;
        update_occ();
        if ((occ[2] >> m) & 1)
            nodes += perft(depth - 1);
        else
            nodes += 1;
        memcpy(boards, save, sizeof save);
        memcpy(occ, save_occ, sizeof save_occ);
        side = save_side;
    }
    return nodes;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 3;
    if (rounds < 0)
        return 1;
    for (int i = 0; i < 12; i++)
        boards[i] = 0x0101010101010101ULL << i;
    update_occ();
    long check = 0;
    for (long round = 0; rounds == 0 || round < rounds; round++) {
        long a = 0, c = 0;
        for (long i = 0; i < 2000; i++) {
            a += shapes(i + round) % 1000;
            c += others(i * 7 + round, (int)(i % 13));
        }
        long d = rec(12, round) + literal_bodies(100 + round);
        long e = perft(5);
        check = ((a * 31 + c) * 31 + d) * 31 + e;
        printf("round %ld: %ld %ld %ld %ld %llx\n", round, a, c, d, e, occ[2]);
        fflush(stdout);
    }
    return (int)((check % 100 + 100) % 100);
}
