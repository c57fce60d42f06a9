/* lodepng_driver.c - a deterministic, CPU-bound run of LodePNG through its
 * public API: each round paints an image from a seeded generator (bands,
 * tiles, a few colours and some noise), encodes it as 32-bit RGBA and as
 * 24-bit RGB PNG in memory (LodePNG's own deflate, filters chosen per
 * row), decodes each back, checks the round trips and prints one line of
 * sizes and checksums.
 *
 * lodepng.cpp, which is also C, is given to levpp as lodepng.c.
 *
 * usage: lodepng_driver ROUNDS [SIDE]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lodepng.h"

static unsigned mix(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static void paint(unsigned char *rgba, unsigned w, unsigned h, unsigned seed)
{
    static const unsigned char pal[8][3] = {{250, 250, 240}, {30, 30, 40},  {200, 40, 40},
                                            {40, 160, 60},   {50, 80, 200}, {240, 200, 20},
                                            {120, 120, 120}, {160, 60, 180}};
    unsigned tile = 8 + mix(&seed) % 24;
    for (unsigned y = 0; y < h; y++)
        for (unsigned x = 0; x < w; x++) {
            unsigned char *p = rgba + 4 * ((size_t)y * w + x);
            unsigned c = ((x / tile) * 7 + (y / tile) * 3 + seed % 5) % 8;
            if (y % 97 < 20) {
                p[0] = (unsigned char)(x + y);
                p[1] = (unsigned char)(x * 2);
                p[2] = (unsigned char)(255 - y);
            } else {
                memcpy(p, pal[c], 3);
            }
            if (x % 61 == y % 53)
                p[0] = (unsigned char)mix(&seed);
            p[3] = (unsigned char)(x < w / 8 ? 128 + x % 128 : 255);
        }
}

/* Fletcher-style sums of 16-bit words, in one 32-bit value. */
static unsigned long sum16(const unsigned char *p, size_t n)
{
    unsigned long a = 1, b = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        a = (a + ((unsigned long)p[i] << 8 | p[i + 1])) % 65535;
        b = (b + a) % 65535;
    }
    return b << 16 | a;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    unsigned side = (unsigned)(argc > 2 ? atoi(argv[2]) : 256);
    size_t most = (size_t)side * side;
    unsigned char *rgba = malloc(most * 4), *rgb = malloc(most * 3);
    if (!rgba || !rgb)
        return 1;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        unsigned w = side - (unsigned)(r % 5) * 4, h = side - (unsigned)(r % 3) * 4;
        paint(rgba, w, h, (unsigned)r);
        size_t np = (size_t)w * h;
        for (size_t i = np; i-- > 0;) {
            rgb[3 * i] = rgba[4 * i];
            rgb[3 * i + 1] = rgba[4 * i + 1];
            rgb[3 * i + 2] = rgba[4 * i + 2];
        }
        unsigned char *png4 = NULL, *png3 = NULL, *b4 = NULL, *b3 = NULL;
        size_t n4 = 0, n3 = 0;
        unsigned e4 = lodepng_encode32(&png4, &n4, rgba, w, h);
        unsigned e3 = lodepng_encode24(&png3, &n3, rgb, w, h);
        unsigned w4 = 0, h4 = 0, w3 = 0, h3 = 0;
        unsigned d4 = e4 ? e4 : lodepng_decode32(&b4, &w4, &h4, png4, n4);
        unsigned d3 = e3 ? e3 : lodepng_decode24(&b3, &w3, &h3, png3, n3);
        int ok = !d4 && w4 == w && h4 == h && memcmp(b4, rgba, np * 4) == 0;
        ok += !d3 && w3 == w && h3 == h && memcmp(b3, rgb, np * 3) == 0;
        printf("round %ld: %ux%u rgba %zu %08lx rgb %zu %08lx errors %u %u ok %d\n", r, w, h, n4,
               png4 ? sum16(png4, n4) : 0, n3, png3 ? sum16(png3, n3) : 0, e4, e3, ok);
        fflush(stdout);
        free(png4);
        free(png3);
        free(b4);
        free(b3);
    }
    free(rgba);
    free(rgb);
    return 0;
}
