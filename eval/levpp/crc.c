/* crc.c - CRC-32 (the reflected polynomial 0xEDB88320 of zlib and
 * Ethernet), table-driven, byte at a time, over a buffer R times.
 * usage: crc [LEN [R]]   (default 1000000 100)
 * Prints the last CRC on standard output and the time of the passes
 * (nanoseconds) on standard error as `ns N`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint32_t s_table[256];

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        s_table[i] = c;
    }
}

static uint32_t crc32(const unsigned char *buf, long len, uint32_t crc)
{
    crc = ~crc;
    for (long i = 0; i < len; i++)
        crc = s_table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

int main(int argc, char **argv)
{
    long len = argc > 1 ? atol(argv[1]) : 1000000;
    long rounds = argc > 2 ? atol(argv[2]) : 100;
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
    if (!buf)
        return 1;
    for (long i = 0; i < len; i++)
        buf[i] = (unsigned char)(i * 131 + (i >> 7));
    make_table();
    long long t0 = now_ns();
    uint32_t crc = 0;
    for (long r = 0; r < rounds; r++)
        crc = crc32(buf, len, crc);
    long long t1 = now_ns();
    printf("%08x\n", (unsigned)crc);
    fprintf(stderr, "ns %lld\n", t1 - t0);
    free(buf);
    return 0;
}
