/* montecarlo.c - the C library's random numbers across safe points: rand()
 * before any srand (the sequence of seed 1), then srand with a fixed
 * seed, a Monte Carlo estimate of pi drawn point by point with rand(), a
 * deck shuffled with random() after srandom, and a dice histogram; the
 * generator's state must continue exactly after every capture and
 * restore; rand is also called from a macro and in a macro's argument.
 * One flushed line per round, integers only.
 * usage: montecarlo [ROUNDS [SAMPLES_PER_ROUND]]   (default 12 2000; ROUNDS 0: until killed)
 * Exit status: the number of rounds whose estimate is within 0.05 of pi.
 */
/* levpp-test: resume 0 40000 */
#include <stdio.h>
#include <stdlib.h>

#define DECK 52
#define ROLL() (rand() % 6)                    /* rand in a macro's body */
#define UNIT(x) ((x) / ((double)RAND_MAX + 1)) /* and in a macro's argument */

static int g_deck[DECK];
static long g_dice[6];

/* Fisher-Yates with random(). */
static void shuffle(int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(random() % (i + 1));
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Hits inside the quarter circle among n points of [0, 1)^2. */
static long quarter_circle(long n)
{
    long hits = 0;
    for (long i = 0; i < n; i++) {
        double x = UNIT(rand());
        double y = UNIT(rand());
        if (x * x + y * y < 1.0)
            hits++;
    }
    return hits;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 12;
    long samples = argc > 2 ? atol(argv[2]) : 2000;
    if (rounds < 0 || samples < 1)
        return 99;

    int a = rand(), b = rand(), c = rand();
    printf("unseeded: %d %d %d\n", a, b, c);
    srand(20240607u);
    for (int i = 0; i < DECK; i++)
        g_deck[i] = i;

    int close = 0;
    long total = 0, inside = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        long hits = quarter_circle(samples);
        inside += hits;
        total += samples;
        /* pi * 1e6, from all points so far */
        long est = (long)(4.0 * 1e6 * (double)inside / (double)total);
        if (est > 3091593 && est < 3191593)
            close++;
        if (r % 4 == 3)
            srandom((unsigned)rand());
        shuffle(g_deck, DECK);
        for (int k = 0; k < 60; k++)
            g_dice[ROLL()]++;
        printf("round %d: hits %ld pi*1e6 %ld top %d %d %d dice %ld %ld %ld %ld %ld %ld\n", r, hits,
               est, g_deck[0], g_deck[1], g_deck[2], g_dice[0], g_dice[1], g_dice[2], g_dice[3],
               g_dice[4], g_dice[5]);
        fflush(stdout);
    }
    printf("next: %d %ld\n", rand(), random());
    return close;
}
