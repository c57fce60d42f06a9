/* miniz_driver.c - a deterministic, CPU-bound run of miniz through its
 * public API: each round generates a block of text-like data from a seeded
 * generator, deflates and inflates it (zlib API and the tdefl/tinfl heap
 * functions), builds a ZIP archive of a few members in memory, reads it
 * back, checks every round trip and prints one line of sizes and CRC-32 /
 * Adler-32 checksums.
 *
 * usage: miniz_driver ROUNDS [KIB]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "miniz.h"

static unsigned long long next_rand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void fill(unsigned char *buf, size_t n, unsigned long long seed)
{
    static const char *const words[] = {"int ", "char ", "return ", "while ", "(",   ") ",
                                        "{\n",  "}\n",   "x",       "y",      " = ", " + ",
                                        "; ",   "if ",   "0",       "1"};
    size_t i = 0;
    while (i < n) {
        unsigned long long r = next_rand(&seed);
        if (r % 13 == 0 && i > 256) {
            size_t len = 4 + r % 40, from = (size_t)(r >> 8) % (i - 64);
            for (size_t k = 0; k < len && i < n; k++)
                buf[i++] = buf[from + k];
        } else if (r % 5 == 0) {
            buf[i++] = (unsigned char)(r >> 16);
        } else {
            const char *w = words[r % 16];
            while (*w && i < n)
                buf[i++] = (unsigned char)*w++;
        }
    }
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    size_t n = (size_t)(argc > 2 ? atol(argv[2]) : 128) * 1024;
    mz_ulong bound = mz_compressBound((mz_ulong)n);
    unsigned char *src = malloc(n), *dst = malloc(bound), *back = malloc(n);
    if (!src || !dst || !back)
        return 1;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        fill(src, n, (unsigned long long)r);
        mz_ulong crc = mz_crc32(MZ_CRC32_INIT, src, n);
        mz_ulong adler = mz_adler32(MZ_ADLER32_INIT, src, n);
        int ok = 0;

        mz_ulong zlen = bound, blen = (mz_ulong)n;
        int level = 1 + (int)(r % 9);
        if (mz_compress2(dst, &zlen, src, (mz_ulong)n, level) == MZ_OK &&
            mz_uncompress(back, &blen, dst, zlen) == MZ_OK && blen == n &&
            memcmp(src, back, n) == 0)
            ok++;
        mz_ulong zcrc = mz_crc32(MZ_CRC32_INIT, dst, zlen);

        size_t rawlen = 0, outlen = 0;
        void *raw = tdefl_compress_mem_to_heap(src, n, &rawlen, TDEFL_DEFAULT_MAX_PROBES);
        void *out = raw ? tinfl_decompress_mem_to_heap(raw, rawlen, &outlen, 0) : NULL;
        if (out && outlen == n && memcmp(out, src, n) == 0)
            ok++;
        mz_free(raw);
        mz_free(out);

        mz_zip_archive zw;
        memset(&zw, 0, sizeof zw);
        void *zip = NULL;
        size_t ziplen = 0;
        char name[32];
        int members = 1 + (int)(r % 4);
        if (mz_zip_writer_init_heap(&zw, 0, 0)) {
            for (int m = 0; m < members; m++) {
                sprintf(name, "dir/member%d.txt", m);
                mz_zip_writer_add_mem(&zw, name, src + (size_t)m * (n / 8), n / 2,
                                      (mz_uint)(m * 3) % 10);
            }
            mz_zip_writer_finalize_heap_archive(&zw, &zip, &ziplen);
            mz_zip_writer_end(&zw);
        }
        mz_zip_archive zr;
        memset(&zr, 0, sizeof zr);
        mz_ulong zipcrc = 0;
        if (zip && mz_zip_reader_init_mem(&zr, zip, ziplen, 0)) {
            int good = (int)mz_zip_reader_get_num_files(&zr) == members;
            for (int m = 0; m < members; m++) {
                size_t len = 0;
                sprintf(name, "dir/member%d.txt", m);
                void *p = mz_zip_reader_extract_file_to_heap(&zr, name, &len, 0);
                good = good && p && len == n / 2 && memcmp(p, src + (size_t)m * (n / 8), len) == 0;
                if (p)
                    zipcrc = mz_crc32(zipcrc, p, len);
                mz_free(p);
            }
            ok += good;
            mz_zip_reader_end(&zr);
        }
        mz_free(zip);
        printf(
            "round %ld: src %zu crc %08lx adler %08lx zlib %lu %08lx raw %zu zip %zu %08lx ok %d\n",
            r, n, (unsigned long)crc, (unsigned long)adler, (unsigned long)zlen,
            (unsigned long)zcrc, rawlen, ziplen, (unsigned long)zipcrc, ok);
        fflush(stdout);
    }
    free(src);
    free(dst);
    free(back);
    return 0;
}
