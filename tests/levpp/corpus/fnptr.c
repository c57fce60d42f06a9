/* fnptr.c - function pointers: a table of operations, a callback kept in
 * a struct, qsort with comparison callbacks on an array of structs, and
 * a checkpointable function also called through a pointer (a resumable
 * call there; natively where qsort calls).
 * Exit status: the index of the winning record in the sorted array (2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef long (*binop)(long, long);

static long add(long a, long b) { return a + b; }
static long sub(long a, long b) { return a - b; }
static long mul(long a, long b) { return a * b; }

/* Has a loop, so it is checkpointable when called directly. */
static long power(long a, long b)
{
    long r = 1;
    for (long i = 0; i < b; i++)
        r *= a;
    return r;
}

struct op {
    const char *name;
    binop fn;
};

static struct op s_ops[] = {{"add", add}, {"sub", sub}, {"mul", mul}, {"pow", power}};

struct record {
    char name[12];
    int score;
    double weight;
};

static int by_score_desc(const void *a, const void *b)
{
    const struct record *x = a, *y = b;
    if (x->score != y->score)
        return y->score - x->score;
    return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
    const struct record *x = a, *y = b;
    return strcmp(x->name, y->name);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

struct folder {
    binop step;
    long init;
};

/* Folds v with the callback kept in f. */
static long fold(const struct folder *f, const long *v, int n)
{
    long acc = f->init;
    for (int i = 0; i < n; i++)
        acc = f->step(acc, v[i]);
    return acc;
}

static void print_records(const char *label, const struct record *r, int n)
{
    printf("%s:", label);
    for (int i = 0; i < n; i++)
        printf(" %s=%d", r[i].name, r[i].score);
    printf("\n");
}

int main(void)
{
    for (unsigned i = 0; i < sizeof s_ops / sizeof s_ops[0]; i++) {
        long r = s_ops[i].fn(7, 3);
        printf("%s(7, 3) = %ld\n", s_ops[i].name, r);
    }
    long direct = power(2, 20);
    binop p = power;
    long indirect = p(2, 20);
    printf("power direct %ld, through a pointer %ld\n", direct, indirect);

    struct record recs[5] = {
        {"delta", 40, 1.5}, {"alpha", 75, 0.5}, {"echo", 75, 2.0}, {"bravo", 10, 1.0},
        {"charlie", 60, 3.0},
    };
    qsort(recs, 5, sizeof recs[0], by_score_desc);
    print_records("by score", recs, 5);
    qsort(recs, 5, sizeof recs[0], by_name);
    print_records("by name", recs, 5);

    long vals[7] = {5, -3, 12, 7, 0, 7, -8};
    qsort(vals, 7, sizeof vals[0], cmp_long);
    printf("sorted longs:");
    for (int i = 0; i < 7; i++)
        printf(" %ld", vals[i]);
    printf("\n");

    struct folder folders[3] = {{add, 0}, {mul, 1}, {sub, 100}};
    for (int i = 0; i < 3; i++) {
        long r = fold(&folders[i], vals, 7);
        printf("fold %d = %ld\n", i, r);
    }
    folders[1].step = power;
    folders[1].init = 2;
    long small[2] = {3, 2};
    long r = fold(&folders[1], small, 2);
    printf("fold with power = %ld\n", r);

    struct record key = {"charlie", 0, 0};
    const struct record *hit = bsearch(&key, recs, 5, sizeof recs[0], by_name);
    int index = hit ? (int)(hit - recs) : -1;
    printf("bsearch charlie: index %d score %d\n", index, hit ? hit->score : -1);
    return index;
}
