/* reserved.c - lazy functions (no frame until they unwind) that call
 * functions which keep a frame: they stay lazy and push their own frame
 * only around those calls, so that a capture finds the pushed frames below
 * the spilled ones in call order:
 *   - count_back keeps a frame: the address of its parameter is taken and
 *     used across its loop's poll (as lz4's LZ4HC_reverseCountPattern);
 *   - climb, lazy, recursion DEPTH deep: calls count_back every third
 *     level (the callee unwinds at many depths), the lazy mix at every
 *     level, and itself;
 *   - probe, lazy and always_inline: calls count_back and mix;
 *   - apply, lazy: calls through a pointer whose candidates keep a frame
 *     (step_framed) or not (step_lazy);
 *   - dive, lazy and recursive, above guarded (setjmp) and below bail
 *     (keeps a frame, longjmps at the bottom): the jump discards the
 *     frames dive pushed;
 *   - sweep, lazy: calls count_back in a loop; the frame it reserves at
 *     the first call stays pushed until it returns, through its later
 *     polls (where it may unwind and fill it), calls of mix, and a
 *     return from inside the loop.
 * Usage: reserved [ROUNDS [DEPTH]]; one line per round (ROUNDS 0: until
 * killed). Exit status: 0 if every value matches its second computation
 * through other calls, else 1. */
/* levpp-test: resume 0 300 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* keeps a frame: &pattern lives across the loop's poll */
static unsigned count_back(const unsigned char *p, unsigned n, unsigned pattern)
{
    const unsigned char *pat = (const unsigned char *)&pattern;
    unsigned i = 0;
    while (i < n && p[n - 1 - i] == pat[i & 3])
        i++;
    return i;
}

/* lazy, calls nothing that keeps a frame */
static long mix(long a, long b)
{
    long s = a;
    for (int i = 0; i < 2; i++)
        s = s * 31 + b;
    return s % 1000003;
}

/* lazy, reserves its frame around count_back and climb */
static long climb(const unsigned char *buf, unsigned n, int depth, long acc)
{
    if (depth == 0)
        return acc + count_back(buf, n, 0x61616161u);
    long r = mix(acc, depth);
    if (depth % 3 == 0)
        r += count_back(buf, n - (unsigned)depth % 7, 0x61616161u);
    r = climb(buf, n, depth - 1, r);
    return r ^ depth;
}

/* climb without the recursion: what it must return */
static long climb_ref(const unsigned char *buf, unsigned n, int depth, long acc)
{
    long r[1024];
    r[depth] = acc;
    for (int d = depth; d > 0; d--) {
        long x = mix(r[d], d);
        if (d % 3 == 0)
            x += count_back(buf, n - (unsigned)d % 7, 0x61616161u);
        r[d - 1] = x;
    }
    long v = r[0] + count_back(buf, n, 0x61616161u);
    for (int d = 1; d <= depth; d++)
        v ^= d;
    return v;
}

/* lazy and always_inline: calls count_back (reserved) and mix (not) */
static inline __attribute__((always_inline)) long probe(const unsigned char *buf, unsigned n,
                                                        long k)
{
    long s = 0;
    for (int i = 0; i < 2; i++)
        s += count_back(buf, n - (unsigned)i, 0x61616161u + (unsigned)(k & 1));
    return s + mix(s, k);
}

typedef long (*step_fn)(long, long);

/* keeps a frame: the address of t is taken */
static long step_framed(long a, long b)
{
    long t = a;
    long *p = &t;
    for (int i = 0; i < 2; i++)
        *p += b + i;
    return t;
}

static long step_lazy(long a, long b) { return mix(a, b); }

/* lazy: through a pointer that may reach a frame */
static long apply(step_fn f, long a, int n)
{
    long s = a;
    for (int i = 0; i < n; i++)
        s = f(s, i);
    return s;
}

static jmp_buf env;

/* keeps a frame; jumps out at the bottom */
static long bail(int d)
{
    long v = d;
    long *p = &v;
    for (int i = 0; i < 2; i++)
        *p += i;
    if (d == 0)
        longjmp(env, 7);
    return v;
}

/* lazy, recursive, reserves its frame around bail and itself */
static long dive(int d)
{
    long r = bail(d);
    return d < 0 ? r : r + dive(d - 1);
}

/* keeps a frame: calls setjmp */
static long guarded(int d)
{
    long got = setjmp(env);
    if (got)
        return got * 1000;
    return dive(d);
}

/* lazy: its reserved frame stays pushed from the first call of
 * count_back to its return (one of two) */
static long sweep(const unsigned char *buf, unsigned n, int rounds, long stop)
{
    long s = 0;
    for (int r = 0; r < rounds; r++) {
        s += count_back(buf, n - (unsigned)r % 5, 0x61616161u);
        if (s % 1000 == stop)
            return -s;
        s = mix(s, r);
        for (int k = 0; k < 40; k++)
            s = (s * 3 + k) % 1000003;
    }
    return s;
}

/* sweep without reserving: what it must return */
static long sweep_ref(const unsigned char *buf, unsigned n, int rounds, long stop)
{
    long s = 0;
    int r = 0;
    while (r < rounds) {
        s += count_back(buf, n - (unsigned)r % 5, 0x61616161u);
        if (s % 1000 == stop)
            return -s;
        s = mix(s, r);
        int k = 0;
        while (k < 40) {
            s = (s * 3 + k) % 1000003;
            k++;
        }
        r++;
    }
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    int depth = argc > 2 ? atoi(argv[2]) : 300;
    if (depth < 1 || depth > 1000)
        depth = 300;
    unsigned char buf[64];
    memset(buf, 'a', sizeof buf);
    buf[5] = 'b';
    int bad = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        buf[40 + r % 8] = (unsigned char)('a' + r % 2);
        long c = climb(buf, sizeof buf, depth, r);
        long c_ref = climb_ref(buf, sizeof buf, depth, r);
        long p = probe(buf, sizeof buf, r);
        long p_ref = (long)count_back(buf, sizeof buf, 0x61616161u + (unsigned)(r & 1)) +
                     (long)count_back(buf, sizeof buf - 1, 0x61616161u + (unsigned)(r & 1));
        p_ref += mix(p_ref, r);
        long a = apply(r % 2 ? step_framed : step_lazy, r, 20);
        long a_ref = r;
        for (int i = 0; i < 20; i++)
            a_ref = r % 2 ? step_framed(a_ref, i) : step_lazy(a_ref, i);
        long g = guarded(depth / 10 + r % 3);
        /* the first stops early (its first call's value), the second not */
        long w1 = sweep(buf, sizeof buf, depth, (long)count_back(buf, sizeof buf, 0x61616161u));
        long w2 = sweep(buf, sizeof buf, depth, -1);
        long w_ref = sweep_ref(buf, sizeof buf, depth, -1);
        bad |= c != c_ref || p != p_ref || a != a_ref || g != 7000 || w1 >= 0 || w2 != w_ref;
        printf("round %d: climb %ld probe %ld apply %ld guarded %ld sweep %ld %ld\n", r, c, p, a, g,
               w1, w2);
        fflush(stdout);
    }
    return bad;
}
