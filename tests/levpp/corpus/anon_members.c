/* anon_members.c - structs and unions with anonymous members, whose
 * fields are named as the enclosing record's: an anonymous union in a
 * struct, an anonymous struct in a struct, an anonymous struct first in an
 * anonymous union, anonymous members nested two deep, in frame locals, in
 * heap objects, in an array of structs and in a static. Every byte of
 * them must survive a capture: each round overwrites every member through
 * one view and reads it back through the other.
 * The output is compared with the native run's; exit status 0, or 1 on
 * bad arguments. */
/* levpp-test: resume 0 400 */
#include <stdio.h>
#include <stdlib.h>

struct word {
    int tag;
    union { /* anonymous union: 8 bytes at offset 8 */
        long i;
        double d;
        struct { /* anonymous struct first in it */
            int lo, hi;
        };
    };
    struct { /* anonymous struct */
        short a, b;
        union { /* nested two deep */
            unsigned char bytes[4];
            unsigned u;
        };
    };
};

struct cell {
    struct word w[3]; /* array of structs with anonymous members */
    long sum;
};

static struct word s_word; /* a static with anonymous members */

static unsigned long fold(const struct word *w)
{
    return (unsigned long)w->tag * 7 + (unsigned long)w->lo * 31 + (unsigned long)w->hi +
           (unsigned long)(unsigned short)w->a * 131 + (unsigned long)(unsigned short)w->b +
           w->bytes[0] + w->bytes[3] * 3u;
}

static void set(struct word *w, long k)
{
    w->tag = (int)(k % 5);
    w->i = k * 1000003L + 17;
    w->a = (short)k;
    w->b = (short)(k * 3);
    w->u = (unsigned)(k * 2654435761u);
}

static unsigned long round_(int r, int work)
{
    struct word local;
    struct cell *heap = calloc(1, sizeof *heap);
    if (!heap)
        return 0;
    unsigned long acc = 0;
    for (int k = 0; k < work; k++) {
        set(&local, r * 1000L + k);
        set(&heap->w[k % 3], r * 7L + k);
        set(&s_word, k);
        acc += fold(&local) + fold(&heap->w[0]) + fold(&heap->w[1]) + fold(&heap->w[2]) +
               fold(&s_word);
        local.d = local.d * 0.5; /* through the other view of the union */
        acc += (unsigned long)local.lo + (unsigned long)local.hi;
    }
    heap->sum = (long)(acc % 1000000007UL);
    unsigned long out = (unsigned long)heap->sum;
    free(heap);
    return out;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int work = argc > 2 ? atoi(argv[2]) : 50;
    if (rounds < 0 || work < 3)
        return 1;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        printf("round %d: %lu\n", r, round_(r, work));
        fflush(stdout);
    }
    return 0;
}
