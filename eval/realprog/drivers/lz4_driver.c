/* lz4_driver.c - a deterministic, CPU-bound run of lz4 through its public
 * API: each round generates a block of text-like data from a seeded
 * generator, compresses it with LZ4 (fast, accelerated), LZ4 HC and the
 * LZ4 frame format, decompresses each, checks the round trips and prints
 * one line of sizes and xxHash checksums.
 *
 * usage: lz4_driver ROUNDS [KIB]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lz4.h"
#include "lz4frame.h"
#include "lz4hc.h"
#include "xxhash.h"

static unsigned long long next_rand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Words from a small vocabulary, numbers and now and then a copy of an
 * earlier stretch: compressible, but not trivially. */
static void fill(char *buf, size_t n, unsigned long long seed)
{
    static const char *const words[] = {"the ",  "quick ", "brown ", "fox ",   "jumps ", "over ",
                                        "lazy ", "dog ",   "lorem ", "ipsum ", "dolor ", "sit ",
                                        "amet ", "\n",     ", ",     ". "};
    size_t i = 0;
    while (i < n) {
        unsigned long long r = next_rand(&seed);
        if (r % 11 == 0 && i > 256) {
            size_t len = 8 + r % 64, from = (size_t)(r >> 8) % (i - 64);
            for (size_t k = 0; k < len && i < n; k++)
                buf[i++] = buf[from + k];
        } else if (r % 7 == 0) {
            char num[24];
            int len = sprintf(num, "%llu ", r % 100000);
            for (int k = 0; k < len && i < n; k++)
                buf[i++] = num[k];
        } else {
            const char *w = words[r % 16];
            while (*w && i < n)
                buf[i++] = *w++;
        }
    }
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    size_t n = (size_t)(argc > 2 ? atol(argv[2]) : 256) * 1024;
    int bound = LZ4_compressBound((int)n);
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    size_t fbound = LZ4F_compressFrameBound(n, &prefs);
    char *src = malloc(n), *dst = malloc((size_t)bound), *back = malloc(n);
    char *frame = malloc(fbound);
    if (!src || !dst || !back || !frame)
        return 1;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        fill(src, n, (unsigned long long)r);
        unsigned int h32 = XXH32(src, n, 0);
        int fast = LZ4_compress_default(src, dst, (int)n, bound);
        int ok =
            LZ4_decompress_safe(dst, back, fast, (int)n) == (int)n && memcmp(src, back, n) == 0;
        unsigned int hfast = XXH32(dst, (size_t)fast, 1);

        int accel = LZ4_compress_fast(src, dst, (int)n, bound, 8);
        ok += LZ4_decompress_safe(dst, back, accel, (int)n) == (int)n && memcmp(src, back, n) == 0;

        int hc = LZ4_compress_HC(src, dst, (int)n, bound, 4 + (int)(r % 6));
        ok += LZ4_decompress_safe(dst, back, hc, (int)n) == (int)n && memcmp(src, back, n) == 0;
        unsigned long long hhc = XXH64(dst, (size_t)hc, 2);

        prefs.compressionLevel = (int)(r % 3);
        size_t fsize = LZ4F_compressFrame(frame, fbound, src, n, &prefs);
        size_t got = 0;
        if (!LZ4F_isError(fsize)) {
            LZ4F_dctx *dctx;
            if (!LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
                size_t in = fsize, out = n, rc;
                rc = LZ4F_decompress(dctx, back, &out, frame, &in, NULL);
                if (!LZ4F_isError(rc))
                    got = out;
                LZ4F_freeDecompressionContext(dctx);
            }
        }
        ok += got == n && memcmp(src, back, n) == 0;
        printf(
            "round %ld: src %zu xxh32 %08x fast %d %08x accel %d hc %d %016llx frame %zu ok %d\n",
            r, n, h32, fast, hfast, accel, hc, hhc, LZ4F_isError(fsize) ? 0 : fsize, ok);
        fflush(stdout);
    }
    free(src);
    free(dst);
    free(back);
    free(frame);
    return 0;
}
