/* words.c - a heap that keeps changing: each round makes pseudo-random
 * words (snprintf into a frame buffer, strdup onto the heap), counts them
 * in a hash table whose bucket array grows with realloc, keeps the most
 * recent ones in a linked list whose old nodes are freed, and asks for a
 * checkpoint with lev_checkpoint() between rounds. One flushed line per
 * round. Built natively, lev_checkpoint() is a stub that does nothing.
 * usage: words [ROUNDS [WORDS_PER_ROUND]]   (default 12 40; ROUNDS 0: until killed)
 * Exit status: the number of distinct words modulo 100.
 */
/* levpp-test: resume 0 2500 */
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

struct word {
    char *text;
    unsigned count;
    struct word *chain;
};

struct recent {
    const struct word *w;
    struct recent *next;
};

static struct word **g_buckets;
static size_t g_nbuckets, g_distinct;
static unsigned long long g_state = 88172645463325252ull;
static char g_syllables[][4] = {"ka", "lo", "mi", "ne", "sul", "ta", "ri", "vo"};

static unsigned rnd(unsigned bound)
{
    g_state ^= g_state << 13;
    g_state ^= g_state >> 7;
    g_state ^= g_state << 17;
    return (unsigned)(g_state % bound);
}

static size_t hash_of(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int rehash(void)
{
    size_t n = g_nbuckets ? g_nbuckets * 4 : 16;
    struct word **fresh = calloc(n, sizeof(struct word *));
    if (!fresh)
        return -1;
    for (size_t i = 0; i < g_nbuckets; i++) {
        struct word *w = g_buckets[i];
        while (w) {
            struct word *next = w->chain;
            size_t h = hash_of(w->text);
            w->chain = fresh[h % n];
            fresh[h % n] = w;
            w = next;
        }
    }
    free(g_buckets);
    g_buckets = fresh;
    g_nbuckets = n;
    return 0;
}

static struct word *intern(const char *text)
{
    if (g_distinct >= g_nbuckets) {
        int rc = rehash();
        if (rc)
            return NULL;
    }
    size_t h = hash_of(text);
    h %= g_nbuckets;
    struct word *w = g_buckets[h];
    while (w && strcmp(w->text, text) != 0)
        w = w->chain;
    if (!w) {
        w = malloc(sizeof *w);
        if (!w)
            return NULL;
        w->text = strdup(text);
        w->count = 0;
        w->chain = g_buckets[h];
        g_buckets[h] = w;
        g_distinct++;
    }
    w->count++;
    return w;
}

/* Keeps at most keep entries in the list; frees the rest. */
static struct recent *trim(struct recent *head, int keep)
{
    struct recent **link = &head;
    while (*link && keep-- > 0)
        link = &(*link)->next;
    struct recent *rest = *link;
    *link = NULL;
    while (rest) {
        struct recent *next = rest->next;
        free(rest);
        rest = next;
    }
    return head;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 12;
    int per_round = argc > 2 ? atoi(argv[2]) : 40;
    struct recent *recent = NULL;
    unsigned long long sum = 0;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        for (int i = 0; i < per_round; i++) {
            char buf[32];
            int len = 0;
            int parts = 1 + (int)rnd(3);
            for (int p = 0; p < parts; p++)
                len += snprintf(buf + len, sizeof buf - (size_t)len, "%s", g_syllables[rnd(8)]);
            struct word *w = intern(buf);
            if (!w)
                return 99;
            struct recent *node = malloc(sizeof(struct recent));
            if (!node)
                return 99;
            node->w = w;
            node->next = recent;
            recent = node;
            sum += w->count * (unsigned long long)(unsigned char)w->text[0];
        }
        recent = trim(recent, 10);
        printf("round %d distinct %zu buckets %zu newest %s sum %llu\n", r, g_distinct, g_nbuckets,
               recent->w->text, sum);
        fflush(stdout);
        lev_checkpoint();
    }
    const struct word *top = NULL;
    for (size_t i = 0; i < g_nbuckets; i++)
        for (const struct word *w = g_buckets[i]; w; w = w->chain)
            if (!top || w->count > top->count ||
                (w->count == top->count && strcmp(w->text, top->text) < 0))
                top = w;
    printf("most common %s x%u of %zu distinct\n", top ? top->text : "-", top ? top->count : 0,
           g_distinct);
    recent = trim(recent, 0);
    for (size_t i = 0; i < g_nbuckets; i++) {
        struct word *w = g_buckets[i];
        while (w) {
            struct word *next = w->chain;
            free(w->text);
            free(w);
            w = next;
        }
    }
    free(g_buckets);
    return (int)(g_distinct % 100);
}
