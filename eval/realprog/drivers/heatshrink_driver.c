/* heatshrink_driver.c - a deterministic, CPU-bound run of heatshrink
 * through its public API: each round writes a log-like text from a seeded
 * generator, compresses it with the streaming encoder (input sunk in
 * pieces of varying size, output polled into a small buffer) under a
 * window and look-ahead chosen by the round, decompresses it the same way,
 * checks the round trip and prints one line of sizes and checksums.
 *
 * usage: heatshrink_driver ROUNDS [KIB]   ROUNDS 0: run until killed
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatshrink_decoder.h"
#include "heatshrink_encoder.h"

/* A multiply-with-carry generator (state in two 16-bit halves). */
static uint32_t mwc(uint32_t *s)
{
    uint32_t lo = 36969 * (*s & 0xffff) + (*s >> 16);
    *s = lo;
    return lo * 2654435761u;
}

/* Lines of a made-up server log: a clock, a level, a handful of message
 * templates with numbers, sometimes a run of one byte. */
static size_t make_log(uint8_t *buf, size_t cap, uint32_t seed)
{
    static const char *const level[] = {"INFO", "WARN", "DEBUG", "ERROR"};
    static const char *const what[] = {
        "accepted connection from 10.0.%u.%u", "request /api/v1/items/%u took %u ms",
        "cache miss for key user:%u:%u", "flushed %u pages in %u us"};
    size_t n = 0;
    unsigned t = 36000;
    while (n + 160 < cap) {
        uint32_t r = mwc(&seed);
        t += r % 7;
        n += (size_t)sprintf((char *)buf + n, "%02u:%02u:%02u %-5s ", t / 3600 % 24, t / 60 % 60,
                             t % 60, level[r % 4]);
        n += (size_t)sprintf((char *)buf + n, what[(r >> 3) % 4], (r >> 5) % 256, (r >> 13) % 1000);
        if ((r >> 24) % 16 == 0) {
            size_t run = 8 + (r >> 8) % 64;
            memset(buf + n, '.', run);
            n += run;
        }
        buf[n++] = '\n';
    }
    return n;
}

static uint32_t fnv(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Compresses IN into OUT (capacity CAP); returns the compressed size. */
static size_t compress(const uint8_t *in, size_t n, uint8_t *out, size_t cap, uint8_t w, uint8_t l)
{
    heatshrink_encoder *hse = heatshrink_encoder_alloc(w, l);
    size_t at = 0, o = 0, piece = 700;
    if (!hse)
        return 0;
    while (at < n) {
        size_t sunk = 0, len = n - at < piece ? n - at : piece;
        heatshrink_encoder_sink(hse, (uint8_t *)in + at, len, &sunk);
        at += sunk;
        piece = 300 + (piece * 7) % 900;
        HSE_poll_res pr;
        do {
            size_t got = 0;
            pr = heatshrink_encoder_poll(hse, out + o, cap - o < 256 ? cap - o : 256, &got);
            o += got;
        } while (pr == HSER_POLL_MORE);
    }
    while (heatshrink_encoder_finish(hse) == HSER_FINISH_MORE) {
        size_t got = 0;
        heatshrink_encoder_poll(hse, out + o, cap - o < 256 ? cap - o : 256, &got);
        o += got;
    }
    heatshrink_encoder_free(hse);
    return o;
}

static size_t expand(const uint8_t *in, size_t n, uint8_t *out, size_t cap, uint8_t w, uint8_t l)
{
    heatshrink_decoder *hsd = heatshrink_decoder_alloc(512, w, l);
    size_t at = 0, o = 0;
    if (!hsd)
        return 0;
    while (at < n) {
        size_t sunk = 0;
        heatshrink_decoder_sink(hsd, (uint8_t *)in + at, n - at, &sunk);
        at += sunk;
        HSD_poll_res pr;
        do {
            size_t got = 0;
            pr = heatshrink_decoder_poll(hsd, out + o, cap - o < 512 ? cap - o : 512, &got);
            o += got;
        } while (pr == HSDR_POLL_MORE && o < cap);
    }
    while (heatshrink_decoder_finish(hsd) == HSDR_FINISH_MORE && o < cap) {
        size_t got = 0;
        heatshrink_decoder_poll(hsd, out + o, cap - o < 512 ? cap - o : 512, &got);
        o += got;
    }
    heatshrink_decoder_free(hsd);
    return o;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    size_t cap = (size_t)(argc > 2 ? atol(argv[2]) : 128) * 1024;
    uint8_t *src = malloc(cap), *z = malloc(cap * 2), *back = malloc(cap);
    if (!src || !z || !back)
        return 1;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        size_t n = make_log(src, cap, (uint32_t)r * 2654435761u);
        uint8_t w = (uint8_t)(8 + r % 5), l = (uint8_t)(4 + r % 3);
        size_t zn = compress(src, n, z, cap * 2, w, l);
        size_t bn = expand(z, zn, back, cap, w, l);
        int ok = bn == n && memcmp(src, back, n) == 0;
        printf("round %ld: window %u lookahead %u src %zu %08x packed %zu %08x ok %d\n", r, w, l, n,
               fnv(src, n), zn, fnv(z, zn), ok);
        fflush(stdout);
    }
    free(src);
    free(z);
    free(back);
    return 0;
}
