/* overlay_union.c - the opaque-state idiom (as lz4's LZ4_stream_t): a
 * union of a byte array, which only gives the size, and the struct that
 * holds the state with its pointers. Such unions live in a local, on the
 * heap (one, and an array of them), in a file-scope variable, and as a
 * member of a struct; their pointers must move with every image.
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

struct state {
    const char *base;
    struct state *prev;
    unsigned hash;
    int len;
};

typedef union stream_u {
    char minStateSize[64];
    struct state internal_donotuse;
} stream_t;

struct holder {
    int id;
    stream_t streams[2];
    stream_t one;
};

static stream_t g_stream;

static void init_stream(stream_t *s, const char *base, stream_t *prev)
{
    memset(s, 0, sizeof *s);
    s->internal_donotuse.base = base;
    s->internal_donotuse.prev = prev ? &prev->internal_donotuse : NULL;
    s->internal_donotuse.len = (int)strlen(base);
}

static unsigned feed(stream_t *s, int round)
{
    struct state *st = &s->internal_donotuse;
    for (int i = 0; i < st->len; i++)
        st->hash = st->hash * 31u + (unsigned char)st->base[i] + (unsigned)round;
    lev_checkpoint();
    return st->hash ^ (st->prev ? st->prev->hash : 0u);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    char *text = malloc(32);
    if (!text)
        return 1;
    strcpy(text, "the quick brown fox");
    stream_t local;
    init_stream(&local, text, NULL);
    stream_t *heap = (stream_t *)malloc(sizeof(stream_t));
    stream_t *many = calloc(3, sizeof *many);
    struct holder *h = malloc(sizeof *h);
    if (!heap || !many || !h)
        return 1;
    init_stream(heap, text + 4, &local);
    for (int i = 0; i < 3; i++)
        init_stream(&many[i], text + 10 + i, i ? &many[i - 1] : heap);
    init_stream(&g_stream, "static text", &many[2]);
    h->id = 7;
    init_stream(&h->streams[0], text + 1, &g_stream);
    init_stream(&h->streams[1], text + 2, &h->streams[0]);
    init_stream(&h->one, text + 3, &h->streams[1]);
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        unsigned x = feed(&local, r) ^ feed(heap, r) ^ feed(&g_stream, r) ^ feed(&h->one, r);
        for (int i = 0; i < 3; i++)
            x ^= feed(&many[i], r);
        for (int i = 0; i < 2; i++)
            x ^= feed(&h->streams[i], r);
        printf("round %d: %08x %s|%s|%s\n", r, x, heap->internal_donotuse.base,
               g_stream.internal_donotuse.base, h->one.internal_donotuse.prev->base);
        fflush(stdout);
    }
    free(many);
    free(heap);
    free(h);
    free(text);
    return 0;
}
