/* alloc_wrappers.c - allocation wrappers whose size is a parameter: the
 * element type comes from the cast or the assignment at the call site
 * (levpp's allocation hints). A wrapper called with a cast and with a
 * typed assignment, calloc and realloc wrappers, a wrapper calling a
 * wrapper, the xmalloc pattern (a local returned), a wrapper whose
 * result is a byte buffer, and one whose result goes to a void * (as
 * lz4frame keeps its contexts): typed by the sizeof in its arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    int value;
    struct node *next;
    double weight;
};

struct pair {
    struct node *a, *b;
};

static void *my_alloc(void *opaque, size_t items, size_t size)
{
    (void)opaque;
    return malloc(items * size);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}

static void *xcalloc(size_t n, size_t size) { return calloc(n, size); }

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q && n)
        abort();
    return q;
}

/* a wrapper of a wrapper of a wrapper */
static void *pool_get(size_t n) { return xmalloc(n); }
static void *arena_get(size_t n) { return (void *)pool_get(n); }

/* a wrapper that also allocates scratch memory of its own */
static void *alloc_logged(size_t n, unsigned *count)
{
    char *note = xmalloc(32);
    snprintf(note, 32, "alloc %zu", n);
    *count += (unsigned)strlen(note);
    return my_alloc(NULL, 1, n);
}

int main(void)
{
    struct node *head = NULL;
    unsigned logged = 0;
    for (int i = 0; i < 3000; i++) {
        struct node *n;
        switch (i % 6) {
        case 0:
            n = (struct node *)my_alloc(NULL, 1, sizeof(struct node));
            break;
        case 1:
            n = xmalloc(sizeof *n);
            break;
        case 2:
            n = xcalloc(1, sizeof(struct node));
            break;
        case 3:
            n = arena_get(sizeof(struct node));
            break;
        case 4:
            n = alloc_logged(sizeof(struct node), &logged);
            break;
        default:
            n = (struct node *)xrealloc(NULL, sizeof(struct node));
            break;
        }
        n->value = i;
        n->weight = i * 0.5;
        n->next = head;
        head = n;
    }
    /* an array of pointers grown by a realloc wrapper */
    struct node **index = NULL;
    size_t len = 0;
    for (struct node *p = head; p; p = p->next) {
        if (len % 64 == 0)
            index = xrealloc(index, (len + 64) * sizeof *index);
        index[len++] = p;
    }
    /* an array of structs holding pointers */
    struct pair *pairs = my_alloc(NULL, len / 2, sizeof(struct pair));
    for (size_t i = 0; i + 1 < len; i += 2) {
        pairs[i / 2].a = index[i];
        pairs[i / 2].b = index[i + 1];
    }
    long sum = 0;
    for (size_t i = 0; i < len / 2; i++)
        sum += pairs[i].a->value - pairs[i].b->value + (long)pairs[i].b->weight;
    /* byte buffers */
    unsigned char *bytes = my_alloc(NULL, 4096, 1);
    memset(bytes, 3, 4096);
    char *text = (char *)xcalloc(100, 1);
    for (int i = 0; i < 99; i++)
        text[i] = (char)('a' + i % 26);
    long bsum = 0;
    for (int i = 0; i < 4096; i++)
        bsum += bytes[i];
    /* kept in a void *: the sizeof in the arguments gives the type, so
     * the pointers it holds move with every image */
    void *ctx = my_alloc(NULL, 1, sizeof(struct pair));
    ((struct pair *)ctx)->a = index[0];
    ((struct pair *)ctx)->b = index[len - 1];
    for (int i = 0; i < 3000; i++)
        bsum += ((struct pair *)ctx)->a->value % 7 + ((struct pair *)ctx)->b->value;
    free(ctx);
    printf("nodes %zu sum %ld bytes %ld text %.10s logged %u\n", len, sum, bsum, text, logged);
    free(bytes);
    free(text);
    free(pairs);
    free(index);
    return 0;
}
