/* aligned_state.c - the shape of a streaming hash's command line tool: a
 * hash state whose members are aligned to 64 bytes (its accumulators for
 * vector code), a local of the function that hashes a stream, handed by
 * address to the functions that reset it, feed it block by block and
 * digest it, all of which reach safe points. The update works on the
 * accumulators as 16-byte vectors (aligned loads and stores) and copies
 * the whole state (aligned moves): a frame laid 8 or 16 bytes off faults.
 * The state also points into itself (the end of its buffered input) and
 * at a static table, pointers that follow it when it moves. The input
 * block is aligned by a constant of a file-scope enum, a spare buffer by
 * a type.
 * levpp-test: resume 0 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_MEMBER(n, t) _Alignas(n) t

typedef unsigned long long v2u __attribute__((vector_size(16)));

typedef struct state {
    ALIGN_MEMBER(64, unsigned long long acc[8]);
    ALIGN_MEMBER(64, unsigned char buf[128]);
    unsigned char *end; /* buf + bytes buffered */
    const unsigned long long *key;
    unsigned long long total;
} state_t;

static const unsigned long long s_key[8] = {
    0x9E3779B185EBCA87ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0x85EBCA77C2B2AE63ull,
    0x27D4EB2F165667C5ull, 0x94D049BB133111EBull, 0xBF58476D1CE4E5B9ull, 0xFF51AFD7ED558CCDull,
};

static int s_bad;

static void check(const void *p, const char *what)
{
    if ((uintptr_t)p % 64 != 0) {
        printf("MISALIGNED %s\n", what);
        s_bad = 1;
    }
}

static void reset(state_t *s, unsigned long long seed)
{
    check(s, "reset");
    for (int i = 0; i < 8; i++)
        s->acc[i] = seed + s_key[i];
    s->end = s->buf;
    s->key = s_key;
    s->total = 0;
}

/* One stripe of 128 bytes into the accumulators, as vectors. */
static void stripe(state_t *s, const unsigned char *p)
{
    v2u *acc = (v2u *)s->acc;
    for (int i = 0; i < 4; i++) {
        v2u d;
        memcpy(&d, p + 16 * i, sizeof d);
        v2u k = {s->key[2 * i], s->key[2 * i + 1]};
        d ^= k;
        acc[i] += (d & 0xFFFFFFFFull) * (d >> 32);
        acc[i] ^= acc[i] >> 47;
    }
}

/* Feeds n bytes: whole stripes through the buffer (a loop that polls). */
static void update(state_t *s, const unsigned char *p, size_t n)
{
    check(s, "update");
    s->total += n;
    while (n) {
        size_t room = (size_t)(s->buf + sizeof s->buf - s->end);
        size_t take = n < room ? n : room;
        memcpy(s->end, p, take);
        s->end += take;
        p += take;
        n -= take;
        if (s->end == s->buf + sizeof s->buf) {
            stripe(s, s->buf);
            s->end = s->buf;
        }
    }
    check(s, "update end");
}

static unsigned long long digest(const state_t *s)
{
    check(s, "digest");
    state_t t = *s; /* the whole state, copied (t.end still points into s) */
    size_t left = (size_t)(s->end - s->buf);
    memset(t.buf + left, 0, sizeof t.buf - left);
    stripe(&t, t.buf);
    unsigned long long h = t.total * 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 8; i++)
        h = (h ^ t.acc[i]) * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}

enum { BLOCK_ALIGN = 32 };

/* A stream of `len` bytes from an LCG, hashed in blocks of odd sizes. */
static unsigned long long hash_stream(unsigned seed, size_t len)
{
    state_t state;
    _Alignas(BLOCK_ALIGN) unsigned char block[300];
    _Alignas(long double) unsigned char spare[4];
    unsigned x = seed * 2654435761u + 1;
    reset(&state, seed);
    size_t done = 0;
    for (int b = 0; done < len; b++) {
        size_t n = 37 + (size_t)(b * 61) % 263;
        if (n > len - done)
            n = len - done;
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            block[i] = (unsigned char)(x >> 16);
        }
        update(&state, block, n);
        done += n;
    }
    check(&state, "hash_stream");
    if ((uintptr_t)block % BLOCK_ALIGN != 0 || (uintptr_t)spare % _Alignof(long double) != 0) {
        printf("MISALIGNED block or spare\n");
        s_bad = 1;
    }
    memcpy(spare, block, sizeof spare);
    return digest(&state) ^ spare[0];
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 12;
    for (long r = 0; rounds <= 0 || r < rounds; r++) {
        unsigned seed = (unsigned)(r % 1000);
        printf("%ld: %016llx\n", r, hash_stream(seed, 2000 + (size_t)seed * 37));
        fflush(stdout);
    }
    return s_bad;
}
