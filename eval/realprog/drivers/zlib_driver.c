/* zlib_driver.c - a deterministic, CPU-bound run of zlib through its
 * public API: each round writes a table of made-up records as CSV from a
 * seeded generator, compresses it with deflate in the zlib, raw and gzip
 * formats (levels, strategies and window sizes chosen by the round, the
 * input given in pieces and the output taken in small buffers), inflates
 * each back in pieces, checks the round trips, runs compress2/uncompress
 * once, and prints one line of sizes, CRC-32 and Adler-32 checksums.
 *
 * usage: zlib_driver ROUNDS [KIB]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlib.h"

static unsigned long long lcg(unsigned long long *s)
{
    *s = *s * 2862933555777941757ULL + 3037000493ULL;
    return *s >> 29;
}

static size_t make_csv(unsigned char *buf, size_t cap, unsigned long long seed)
{
    static const char *const city[] = {"Lisbon", "Oslo",  "Quito", "Hanoi",
                                       "Accra",  "Perth", "Lyon",  "Cusco"};
    size_t n = (size_t)sprintf((char *)buf, "id,city,amount,ratio,flag,note\n");
    for (unsigned id = 1; n + 128 < cap; id++) {
        unsigned long long r = lcg(&seed);
        n += (size_t)sprintf((char *)buf + n, "%u,%s,%llu.%02llu,%.4f,%c,", id, city[r % 8],
                             (r >> 3) % 100000, (r >> 20) % 100,
                             (double)((r >> 7) % 10007) / 10007.0, "YN"[(r >> 11) & 1]);
        for (unsigned k = 0; k < (r >> 40) % 24; k++)
            buf[n++] = (unsigned char)('a' + (r >> (k % 30)) % 26);
        buf[n++] = '\n';
    }
    return n;
}

/* deflate IN into OUT with the given format (window bits: 15 zlib, -15
 * raw, 31 gzip); returns the size or 0. */
static size_t pack(const unsigned char *in, size_t n, unsigned char *out, size_t cap, int level,
                   int bits, int strategy)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, level, Z_DEFLATED, bits, 8, strategy) != Z_OK)
        return 0;
    size_t at = 0, piece = 4096;
    int rc;
    do {
        size_t len = n - at < piece ? n - at : piece;
        s.next_in = (unsigned char *)in + at;
        s.avail_in = (uInt)len;
        at += len;
        int flush = at == n ? Z_FINISH : Z_NO_FLUSH;
        do {
            size_t room = cap - s.total_out;
            s.next_out = out + s.total_out;
            s.avail_out = (uInt)(room < 3000 ? room : 3000);
            rc = deflate(&s, flush);
        } while (s.avail_out == 0 && rc != Z_STREAM_ERROR);
        piece = 1024 + (piece * 5) % 16384;
    } while (at < n);
    size_t got = rc == Z_STREAM_END ? (size_t)s.total_out : 0;
    deflateEnd(&s);
    return got;
}

static size_t unpack(const unsigned char *in, size_t n, unsigned char *out, size_t cap, int bits)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, bits) != Z_OK)
        return 0;
    size_t at = 0;
    int rc = Z_OK;
    while (rc == Z_OK && at < n) {
        size_t len = n - at < 1500 ? n - at : 1500;
        s.next_in = (unsigned char *)in + at;
        s.avail_in = (uInt)len;
        do {
            size_t room = cap - s.total_out;
            s.next_out = out + s.total_out;
            s.avail_out = (uInt)(room < 8192 ? room : 8192);
            rc = inflate(&s, Z_NO_FLUSH);
        } while (rc == Z_OK && s.avail_out == 0);
        at += len - s.avail_in;
    }
    size_t got = rc == Z_STREAM_END ? (size_t)s.total_out : 0;
    inflateEnd(&s);
    return got;
}

int main(int argc, char **argv)
{
    static const int bits[] = {15, -15, 31, 12};
    static const int strategy[] = {Z_DEFAULT_STRATEGY, Z_FILTERED,    Z_DEFAULT_STRATEGY, Z_RLE,
                                   Z_DEFAULT_STRATEGY, Z_HUFFMAN_ONLY};
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    size_t cap = (size_t)(argc > 2 ? atol(argv[2]) : 512) * 1024;
    size_t zcap = (size_t)compressBound((uLong)cap) + 1024;
    unsigned char *src = malloc(cap), *z = malloc(zcap), *back = malloc(cap);
    if (!src || !z || !back)
        return 1;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        size_t n = make_csv(src, cap, (unsigned long long)r);
        uLong crc = crc32(0L, src, (uInt)n), adler = adler32(1L, src, (uInt)n);
        printf("round %ld: src %zu crc %08lx adler %08lx", r, n, crc, adler);
        int ok = 0;
        for (int f = 0; f < 4; f++) {
            int level = 1 + (int)((r + f * 3) % 9);
            size_t zn = pack(src, n, z, zcap, level, bits[f], strategy[(r + f) % 6]);
            size_t bn = unpack(z, zn, back, cap, bits[f]);
            ok += bn == n && memcmp(src, back, n) == 0;
            printf(" L%d %zu %08lx", level, zn, crc32(0L, z, (uInt)zn));
        }
        uLongf zl = (uLongf)zcap, bl = (uLongf)cap;
        int c2 = compress2(z, &zl, src, (uLong)n, (int)(r % 10));
        int u2 = uncompress(back, &bl, z, zl);
        ok += c2 == Z_OK && u2 == Z_OK && bl == n && memcmp(src, back, n) == 0;
        printf(" c2 %lu adler %08lx ok %d\n", (unsigned long)zl, adler32(1L, z, (uInt)zl), ok);
        fflush(stdout);
    }
    free(src);
    free(z);
    free(back);
    return 0;
}
