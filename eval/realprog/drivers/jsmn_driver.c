/* jsmn_driver.c - a deterministic, CPU-bound run of jsmn through its
 * public API: each round writes a JSON document from a seeded generator
 * (nested objects and arrays, strings with escapes, numbers, literals),
 * counts its tokens (jsmn_parse with no token array), parses it into an
 * array of that many tokens several times, and prints one line: the
 * document's size, the token count and a checksum of every token's type,
 * extent and size.
 *
 * usage: jsmn_driver ROUNDS [KIB [PASSES]]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSMN_HEADER
#include "jsmn.h"

static unsigned long long next_rand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

struct doc {
    char *b;
    size_t n, cap;
    unsigned long long seed;
};

static void put(struct doc *d, const char *s)
{
    size_t k = strlen(s);
    if (d->n + k < d->cap) {
        memcpy(d->b + d->n, s, k);
        d->n += k;
    }
}

/* One value, at most DEPTH levels of containers deep; containers stop
 * growing once the document is within 1 KiB of its capacity. */
static void value(struct doc *d, int depth)
{
    static const char *const words[] = {
        "alpha", "beta", "gamma", "delta", "x", "yz", "a \\\"quoted\\\" word", "tab\\tand\\nline"};
    char tmp[64];
    unsigned long long r = next_rand(&d->seed);
    int kind = (int)(r % (depth > 0 ? 7 : 5));
    switch (kind) {
    case 0:
        sprintf(tmp, "%lld", (long long)(r >> 4) % 200000 - 100000);
        put(d, tmp);
        break;
    case 1:
        sprintf(tmp, "%llu.%03llue-%llu", (r >> 5) % 1000, (r >> 15) % 1000, (r >> 25) % 20);
        put(d, tmp);
        break;
    case 2:
    case 3:
        put(d, "\"");
        put(d, words[(r >> 3) % 8]);
        sprintf(tmp, "_%llu\"", (r >> 7) % 10000);
        put(d, tmp);
        break;
    case 4:
        put(d, (r >> 3) % 3 == 0 ? "null" : (r >> 3) % 3 == 1 ? "true" : "false");
        break;
    case 5: {
        int n = (int)((r >> 4) % 12);
        put(d, "[");
        for (int i = 0; i < n && d->n + 1024 < d->cap; i++) {
            if (i)
                put(d, ", ");
            value(d, depth - 1);
        }
        put(d, "]");
        break;
    }
    default: {
        int n = (int)((r >> 4) % 10);
        put(d, "{");
        for (int i = 0; i < n && d->n + 1024 < d->cap; i++) {
            sprintf(tmp, "%s\"%s%d\": ", i ? ",\n  " : "", words[(r >> (8 + i)) % 4], i);
            put(d, tmp);
            value(d, depth - 1);
        }
        put(d, "}");
        break;
    }
    }
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    size_t cap = (size_t)(argc > 2 ? atol(argv[2]) : 256) * 1024;
    int passes = argc > 3 ? atoi(argv[3]) : 40;
    struct doc d;
    d.cap = cap + 2;
    d.b = malloc(d.cap);
    if (!d.b)
        return 1;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        d.n = 0;
        d.seed = (unsigned long long)r;
        put(&d, "[");
        for (int i = 0; d.n + 1024 < cap; i++) {
            if (i)
                put(&d, ",\n");
            value(&d, 6);
        }
        put(&d, "]");
        jsmn_parser p;
        jsmn_init(&p);
        int count = jsmn_parse(&p, d.b, d.n, NULL, 0);
        if (count <= 0) {
            printf("round %ld: count %d\n", r, count);
            return 1;
        }
        jsmntok_t *tok = malloc((size_t)count * sizeof *tok);
        if (!tok)
            return 1;
        unsigned long h = 2166136261UL;
        int got = 0;
        for (int k = 0; k < passes; k++) {
            jsmn_init(&p);
            got = jsmn_parse(&p, d.b, d.n, tok, (unsigned)count);
            for (int i = 0; i < got; i += 1 + k % 7) {
                h = ((h ^ (unsigned long)tok[i].type) * 16777619UL) & 0xffffffffUL;
                h = ((h ^ (unsigned long)(tok[i].end - tok[i].start)) * 16777619UL) & 0xffffffffUL;
                h = ((h ^ (unsigned long)tok[i].size) * 16777619UL) & 0xffffffffUL;
            }
        }
        /* A document cut short is an error, and too few tokens is another. */
        jsmn_init(&p);
        int part = jsmn_parse(&p, d.b, d.n / 2, tok, (unsigned)count);
        jsmn_init(&p);
        int nomem = jsmn_parse(&p, d.b, d.n, tok, (unsigned)count / 2);
        printf("round %ld: bytes %zu tokens %d parsed %d part %d nomem %d fnv %08lx\n", r, d.n,
               count, got, part, nomem, h);
        fflush(stdout);
        free(tok);
    }
    free(d.b);
    return 0;
}
