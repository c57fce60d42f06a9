/* qoi_driver.c - a deterministic, CPU-bound run of QOI through its public
 * API: each round paints an image from a seeded generator (gradients,
 * flat rectangles, noise and a translucent disc, so that every kind of
 * QOI chunk occurs), encodes it as RGBA and as RGB, decodes each back
 * (also RGBA as RGB), checks the round trips and prints one line of sizes
 * and checksums.
 *
 * qoi.h is given to levpp as a file of its own, compiled with
 * QOI_IMPLEMENTATION; here it is included for its declarations only.
 *
 * usage: qoi_driver ROUNDS [SIDE]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#undef QOI_IMPLEMENTATION
#include "qoi.h"

static unsigned int pcg(unsigned long long *s)
{
    unsigned long long x = *s;
    *s = x * 6364136223846793005ULL + 1ULL;
    unsigned int v = (unsigned int)(((x >> 18) ^ x) >> 27), rot = (unsigned int)(x >> 59);
    return (v >> rot) | (v << ((32 - rot) & 31));
}

static void paint(unsigned char *px, unsigned w, unsigned h, unsigned long long seed)
{
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++) {
            unsigned char *p = px + 4 * ((size_t)y * w + x);
            p[0] = (unsigned char)(x * 255 / w);
            p[1] = (unsigned char)(y * 255 / h);
            p[2] = (unsigned char)((x + y) / 4);
            p[3] = 255;
        }
    for (int k = 0; k < 40; k++) {
        unsigned r = pcg(&seed), x0 = r % w, y0 = (r >> 12) % h, rw = 8 + (r >> 3) % (w / 4),
                 rh = 8 + (r >> 17) % (h / 4);
        unsigned c = pcg(&seed);
        for (unsigned y = y0; y < y0 + rh && y < h; y++)
            for (unsigned x = x0; x < x0 + rw && x < w; x++) {
                unsigned char *p = px + 4 * ((size_t)y * w + x);
                if (k % 4 == 3) {
                    unsigned n = pcg(&seed);
                    p[0] = (unsigned char)n;
                    p[1] = (unsigned char)(p[1] + (n >> 8) % 5);
                    p[2] = (unsigned char)(n >> 16);
                } else {
                    memcpy(p, &c, 3);
                }
            }
    }
    unsigned cx = w / 2, cy = h / 2, rad = (w < h ? w : h) / 3;
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++) {
            long dx = (long)x - (long)cx, dy = (long)y - (long)cy;
            if ((unsigned long)(dx * dx + dy * dy) < (unsigned long)rad * rad)
                px[4 * ((size_t)y * w + x) + 3] = (unsigned char)(128 + (x ^ y) % 64);
        }
}

static unsigned long fnv(const unsigned char *p, size_t n)
{
    unsigned long h = 2166136261UL;
    for (size_t i = 0; i < n; i++)
        h = ((h ^ p[i]) * 16777619UL) & 0xffffffffUL;
    return h;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    unsigned side = (unsigned)(argc > 2 ? atoi(argv[2]) : 512);
    unsigned char *px = malloc((size_t)side * side * 4), *rgb = malloc((size_t)side * side * 3);
    if (!px || !rgb)
        return 1;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        unsigned w = side - (unsigned)(r % 7) * 8, h = side - (unsigned)(r % 5) * 8;
        paint(px, w, h, (unsigned long long)r);
        size_t np = (size_t)w * h;
        for (size_t i = 0; i < np; i++)
            memcpy(rgb + 3 * i, px + 4 * i, 3);
        qoi_desc d = {w, h, 4, QOI_SRGB};
        int len4 = 0, len3 = 0, ok = 0;
        unsigned char *e4 = qoi_encode(px, &d, &len4);
        d.channels = 3;
        unsigned char *e3 = qoi_encode(rgb, &d, &len3);
        qoi_desc o;
        unsigned char *b4 = e4 ? qoi_decode(e4, len4, &o, 4) : NULL;
        ok += b4 && o.width == w && o.height == h && memcmp(b4, px, np * 4) == 0;
        unsigned char *b3 = e4 ? qoi_decode(e4, len4, &o, 3) : NULL;
        ok += b3 && memcmp(b3, rgb, np * 3) == 0;
        free(b3);
        b3 = e3 ? qoi_decode(e3, len3, &o, 3) : NULL;
        ok += b3 && o.channels == 3 && memcmp(b3, rgb, np * 3) == 0;
        printf("round %ld: %ux%u rgba %d %08lx rgb %d %08lx ok %d\n", r, w, h, len4,
               e4 ? fnv(e4, (size_t)len4) : 0, len3, e3 ? fnv(e3, (size_t)len3) : 0, ok);
        fflush(stdout);
        free(e4);
        free(e3);
        free(b4);
        free(b3);
    }
    free(px);
    free(rgb);
    return 0;
}
