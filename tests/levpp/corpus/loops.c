/* loops.c - every kind of loop, with break, continue, goto, switch and
 * early returns, in functions that are checkpointable because they loop.
 * Exit status: the number of primes below 200 modulo 50 (46 % 50). */
#include <stdio.h>

/* Returns 1 if n is prime; returns early from inside the loop. */
static int is_prime(int n)
{
    if (n < 2)
        return 0;
    for (int d = 2; d * d <= n; d++) {
        if (n % d == 0)
            return 0;
    }
    return 1;
}

static int count_primes(int below)
{
    int count = 0;
    int n = 0;
    while (n < below) {
        n++;
        if (n % 2 == 0 && n != 2)
            continue;
        int p = is_prime(n);
        if (p)
            count++;
    }
    return count;
}

/* Collatz steps with a do-while and a break at a cap. */
static int collatz(long n)
{
    int steps = 0;
    do {
        if (n == 1)
            break;
        n = n % 2 ? 3 * n + 1 : n / 2;
        steps++;
        if (steps > 1000)
            break;
    } while (1);
    return steps;
}

/* Finds the first pair (i, j) with i*j == target, leaving two loops
 * with a goto. */
static int find_pair(int target, int *pi, int *pj)
{
    int i, j;
    for (i = 1; i < 100; i++)
        for (j = i; j < 100; j++)
            if (i * j == target && i + j > 20)
                goto found;
    return 0;
found:
    *pi = i;
    *pj = j;
    return 1;
}

/* A switch inside a loop, with fallthrough, default and a continue
 * taken from within the switch. */
static int classify(const char *s)
{
    int score = 0;
    for (int k = 0; s[k] != '\0'; k++) {
        switch (s[k]) {
        case 'a':
        case 'e':
        case 'i':
        case 'o':
        case 'u':
            score += 3;
            /* fall through */
        case 'y':
            score += 1;
            break;
        case ' ':
            continue;
        case '!':
            return -score;
        default:
            score += 2;
            break;
        }
        score++;
    }
    return score;
}

/* A loop with no body statements but its header, and a nested loop
 * whose inner counter shadows nothing. */
static unsigned mix(unsigned n)
{
    unsigned h = 2166136261u, i;
    for (i = 0; i < n; i++)
        ;
    for (unsigned r = 0; r < 3; r++) {
        unsigned k = 0;
        while (k < i) {
            h = (h ^ (k + r)) * 16777619u;
            k += 7;
        }
    }
    return h;
}

int main(void)
{
    int primes = count_primes(200);
    printf("primes below 200: %d\n", primes);

    long best = 0;
    int best_steps = -1;
    for (long n = 1; n < 300; n++) {
        int s = collatz(n);
        if (s > best_steps) {
            best_steps = s;
            best = n;
        }
    }
    printf("longest collatz below 300: %ld (%d steps)\n", best, best_steps);

    int i = 0, j = 0;
    int found = find_pair(96, &i, &j);
    if (found)
        printf("pair for 96: %d x %d\n", i, j);
    found = find_pair(97, &i, &j);
    printf("pair for 97: %s\n", found ? "yes" : "no");

    const char *words[] = {"leverage", "why try", "a cat sat", "stop! here", ""};
    for (int w = 0; w < 5; w++) {
        int c = classify(words[w]);
        printf("classify(\"%s\") = %d\n", words[w], c);
    }

    unsigned h = mix(100);
    printf("mix(100) = %08x\n", h);

    int k = 10;
    while (1) {
        if (--k < 3)
            break;
        if (k % 3)
            continue;
        printf("countdown %d\n", k);
    }
    return primes % 50;
}
