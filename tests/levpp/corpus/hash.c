/* hash.c - a hash table with chained entries: keys copied with strdup,
 * compared with strcmp, values formatted with snprintf, buckets grown
 * with realloc and rehashing; word counting over a fixed text.
 * Exit status: the number of distinct words modulo 64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *key;
    int count;
    char label[24];
    struct entry *next;
};

struct table {
    struct entry **buckets;
    size_t nbuckets, size;
};

static unsigned long hash_str(const char *s)
{
    unsigned long h = 5381;
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

static int grow(struct table *t)
{
    size_t n = t->nbuckets * 2;
    struct entry **b = calloc(n, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct entry *e = t->buckets[i];
        while (e) {
            struct entry *next = e->next;
            unsigned long h = hash_str(e->key);
            h %= n;
            e->next = b[h];
            b[h] = e;
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
    return 0;
}

static struct entry *lookup(struct table *t, const char *key, int create)
{
    unsigned long h = hash_str(key);
    h %= t->nbuckets;
    for (struct entry *e = t->buckets[h]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    if (!create)
        return NULL;
    if (t->size + 1 > t->nbuckets) {
        int rc = grow(t);
        if (rc)
            return NULL;
        h = hash_str(key);
        h %= t->nbuckets;
    }
    struct entry *e = malloc(sizeof(struct entry));
    if (!e)
        return NULL;
    e->key = strdup(key);
    e->count = 0;
    e->next = t->buckets[h];
    t->buckets[h] = e;
    t->size++;
    return e;
}

/* Splits text into lower-case words and counts them. */
static int count_words(struct table *t, const char *text)
{
    char word[32];
    size_t len = 0;
    int words = 0;
    for (const char *p = text;; p++) {
        char c = *p;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c >= 'a' && c <= 'z') {
            if (len + 1 < sizeof word)
                word[len++] = c;
            continue;
        }
        if (len) {
            word[len] = '\0';
            struct entry *e = lookup(t, word, 1);
            if (!e)
                return -1;
            e->count++;
            snprintf(e->label, sizeof e->label, "%s#%d", e->key, e->count);
            words++;
            len = 0;
        }
        if (!c)
            break;
    }
    return words;
}

static void destroy(struct table *t)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct entry *e = t->buckets[i];
        while (e) {
            struct entry *next = e->next;
            free(e->key);
            free(e);
            e = next;
        }
    }
    free(t->buckets);
}

static const char s_text[] =
    "It was the best of times, it was the worst of times, it was the age of wisdom, "
    "it was the age of foolishness, it was the epoch of belief, it was the epoch of "
    "incredulity, it was the season of Light, it was the season of Darkness, it was "
    "the spring of hope, it was the winter of despair.";

int main(void)
{
    struct table t = {NULL, 2, 0};
    t.buckets = calloc(t.nbuckets, sizeof(struct entry *));
    if (!t.buckets)
        return 100;
    int words = count_words(&t, s_text);
    printf("%d words, %zu distinct, %zu buckets\n", words, t.size, t.nbuckets);
    const char *probe[] = {"it", "was", "times", "despair", "hope", "nothing", "of"};
    for (int i = 0; i < 7; i++) {
        struct entry *e = lookup(&t, probe[i], 0);
        if (e)
            printf("%-8s %2d %s\n", probe[i], e->count, e->label);
        else
            printf("%-8s absent\n", probe[i]);
    }
    int most = 0;
    char best[32] = "";
    for (size_t i = 0; i < t.nbuckets; i++)
        for (struct entry *e = t.buckets[i]; e; e = e->next)
            if (e->count > most || (e->count == most && strcmp(e->key, best) < 0)) {
                most = e->count;
                strcpy(best, e->key);
            }
    printf("most frequent: %s (%d)\n", best, most);
    int distinct = (int)t.size;
    destroy(&t);
    return distinct % 64;
}
