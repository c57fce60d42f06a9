// c4_bench.c - a deterministic, CPU-bound program in the subset of C that
// c4 compiles (char, int, pointers, enums, if, while, return, no for, no
// structs), run by c4: each round sieves primes, sorts an array made by a
// seeded generator and hashes a string, and prints one line.
//
// usage: c4 c4_bench.c ROUNDS [SIZE]   ROUNDS 0: run until killed

#include <stdio.h>
#include <stdlib.h>

int seed;

int next_rand(int n)
{
    seed = (seed * 1103515245 + 12345) & 2147483647;
    return seed % n;
}

int atoi_(char *s)
{
    int v;
    v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + *s - '0';
        ++s;
    }
    return v;
}

int sieve(char *flags, int n)
{
    int i;
    int j;
    int count;
    memset(flags, 1, n);
    count = 0;
    i = 2;
    while (i < n) {
        if (flags[i]) {
            ++count;
            j = i + i;
            while (j < n) {
                flags[j] = 0;
                j = j + i;
            }
        }
        ++i;
    }
    return count;
}

void shellsort(int *a, int n)
{
    int gap;
    int i;
    int j;
    int t;
    gap = n / 2;
    while (gap > 0) {
        i = gap;
        while (i < n) {
            t = a[i];
            j = i;
            while (j >= gap && a[j - gap] > t) {
                a[j] = a[j - gap];
                j = j - gap;
            }
            a[j] = t;
            ++i;
        }
        gap = gap / 2;
    }
}

int main(int argc, char **argv)
{
    int rounds;
    int size;
    int r;
    int i;
    int sum;
    int h;
    char *flags;
    int *a;
    char *text;
    rounds = 20;
    size = 20000;
    if (argc > 1)
        rounds = atoi_(argv[1]);
    if (argc > 2)
        size = atoi_(argv[2]);
    flags = malloc(size);
    a = malloc(size * sizeof(int));
    text = malloc(size + 1);
    r = 1;
    while (rounds == 0 || r <= rounds) {
        seed = r;
        i = 0;
        while (i < size) {
            a[i] = next_rand(100000);
            text[i] = 'a' + next_rand(26);
            ++i;
        }
        text[size] = 0;
        shellsort(a, size);
        sum = 0;
        i = 0;
        while (i < size) {
            sum = (sum + a[i] * (i % 13)) % 1000000007;
            i = i + 3;
        }
        h = 5381;
        i = 0;
        while (text[i]) {
            h = (h * 33 + text[i]) & 4294967295;
            ++i;
        }
        printf("round %d: primes %d sum %d hash %d\n", r, sieve(flags, size), sum, h);
        ++r;
    }
    free(flags);
    free(a);
    free(text);
    return 0;
}
