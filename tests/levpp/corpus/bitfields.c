/* bitfields.c - structs with bit-fields in frames (locals, parameters,
 * arrays of them, nested in other structs) and on the heap, alive across
 * the polls of the loops that update them: bit-fields first, between and
 * after named fields, a struct of bit-fields only, signed bit-fields, a
 * zero-width bit-field, and a struct that holds pointers too.
 * usage: bitfields [N [ROUNDS [WORK]]]   (default 9 4 200; ROUNDS 0: until killed)
 * Exit status: the sum of the checks modulo 100. */
/* levpp-test: resume 40 0 2000 */
#include <stdio.h>
#include <stdlib.h>

struct flags { /* bit-fields only */
    unsigned ready : 1;
    unsigned count : 7;
    signed delta : 5;
};

struct mixed { /* bit-fields first, between, after named fields */
    unsigned lo : 3;
    unsigned hi : 4;
    int value;
    unsigned char tag : 2;
    unsigned : 0;
    unsigned wide : 20;
    double weight;
    signed tail : 6;
};

struct owner { /* pointers beside bit-fields */
    struct owner *next;
    unsigned depth : 4;
    unsigned marked : 1;
    const char *label;
    struct flags f; /* nested */
    unsigned long long big : 40;
};

/* Takes a struct with bit-fields by value and returns one. */
static struct flags bump(struct flags f, int by)
{
    for (int i = 0; i < by; i++) {
        f.count = (f.count + 3) & 0x7f;
        f.delta = f.delta > 10 ? -12 : f.delta + 1;
    }
    f.ready = !f.ready;
    return f;
}

static long score(const struct mixed *m, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += m[i].lo + m[i].hi * 8 + m[i].value + m[i].tag + (long)m[i].wide + m[i].tail +
             (long)m[i].weight;
    return s;
}

static long run(int n, int round, int work)
{
    struct flags f = {1, 5, -3};
    struct mixed ms[8];
    struct owner *chain = NULL;
    for (int i = 0; i < 8; i++) {
        ms[i].lo = (unsigned)(i + round) & 7;
        ms[i].hi = (unsigned)(i * 3) & 15;
        ms[i].value = i * 100 + round;
        ms[i].tag = (unsigned char)(i & 3);
        ms[i].wide = (unsigned)(i * 4099 + round) & 0xfffff;
        ms[i].weight = i * 1.5;
        ms[i].tail = (i % 2 ? -1 : 1) * (i + round) % 31;
    }
    for (int i = 0; i < n; i++) {
        struct owner *o = malloc(sizeof *o);
        if (!o)
            return -1;
        o->next = chain;
        o->depth = (unsigned)i & 15;
        o->marked = (unsigned)(i % 3 == 0);
        o->label = i % 2 ? "odd" : "even";
        o->f = (struct flags){(unsigned)(i & 1), (unsigned)i & 0x7f, -i % 16};
        o->big = (unsigned long long)i * 0x123456789ULL & 0xffffffffffULL;
        chain = o;
    }
    struct mixed *heap = calloc(4, sizeof(struct mixed));
    if (!heap)
        return -1;
    for (int i = 0; i < 4; i++) {
        heap[i] = ms[i * 2];
        heap[i].tail = -heap[i].tail;
    }
    long spin = 0;
    for (int j = 0; j < work; j++)
        spin += j % 7;
    f = bump(f, n + round);
    long s = score(ms, 8) + score(heap, 4);
    long c = 0;
    int marked = 0;
    for (struct owner *o = chain; o; o = o->next) {
        c += o->depth * 2 + o->label[0] + o->f.count + o->f.delta + (long)(o->big % 1000);
        marked += o->marked;
    }
    while (chain) {
        struct owner *next = chain->next;
        free(chain);
        chain = next;
    }
    free(heap);
    printf("round %d: flags %u %u %d scores %ld chain %ld marked %d spin %ld\n", round, f.ready,
           f.count, f.delta, s, c, marked, spin);
    fflush(stdout);
    return s + c + f.count;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 9;
    int rounds = argc > 2 ? atoi(argv[2]) : 4;
    int work = argc > 3 ? atoi(argv[3]) : 200;
    if (n < 1 || n > 100000 || rounds < 0 || work < 0)
        return 99;
    long total = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++)
        total += run(n, r, work);
    printf("total %ld\n", total);
    return (int)(total % 100);
}
