/* literal_ends.c - statements whose last token before their `;` is the
 * `}` of a compound literal, standing unbraced as the last statement of
 * a loop that polls (for, while, if in a for, else, case, label, switch
 * body, loops nested in loops) or returned (`return (struct pt){...};`
 * in an unbraced if inside a loop), with and without checkpointable
 * calls in the literal. The statement and its `;` stay together whatever
 * levpp wraps around the loop. Each round prints one checksum line.
 * usage: literal_ends [ROUNDS]   (default 3); ROUNDS 0: rounds without end
 * Exit status: the last checksum modulo 100. */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

struct pt {
    int x, y;
};

typedef struct have {
    int island, epochs;
} have;

/* Checkpointable: its loop polls. */
static int step(int v)
{
    int r = v;
    for (int i = 0; i < 3; i++)
        r = r * 3 + i;
    return r % 97;
}

static unsigned mix(unsigned h, struct pt p) { return h * 31u + (unsigned)(p.x * 7 + p.y); }

/* for, if, assignment to an array element (no call in the literal) */
static unsigned s_for_if(int k)
{
    have list[8];
    int n = 0;
    for (int j = 0; j < 8; j++)
        if ((j + k) % 3)
            list[n++] = (have){j, j * k};
    unsigned h = (unsigned)n;
    for (int j = 0; j < n; j++)
        h = h * 17u + (unsigned)(list[j].island + list[j].epochs);
    return h;
}

/* while, a call in the literal */
static unsigned s_while(int k)
{
    struct pt p = {0, 0};
    unsigned h = 1;
    int i = 0;
    while (i++ < 4)
        p = (struct pt){step(i + k), p.x};
    h = mix(h, p);
    return h;
}

/* for, if / else, the literal in the else branch */
static unsigned s_else(int k)
{
    struct pt p = {1, 1};
    unsigned h = 2;
    for (int i = 0; i < 5; i++)
        if (i == k)
            h += 3;
        else
            p = (struct pt){.y = step(p.x + i), .x = i};
    return mix(h, p);
}

/* a case of a switch inside a loop, and the switch's body unbraced */
static unsigned s_case(int k)
{
    struct pt p = {2, 3};
    unsigned h = 3;
    for (int i = 0; i < 6; i++) {
        switch ((i + k) % 3) {
        case 0:
            p = (struct pt){p.y, step(i)};
            break;
        default:
            p = (struct pt){p.x + 1, p.y};
        }
        h = mix(h, p);
    }
    for (int i = 0; i < 3; i++)
        switch (i)
        default:
            p = (struct pt){p.y, p.x + i};
    return mix(h, p);
}

/* a label before the literal, in a loop made with goto and a for */
static unsigned s_label(int k)
{
    struct pt p = {0, 1};
    int n = 0;
again:
    for (int i = 0; i < 2; i++)
    last:
        p = (struct pt){step(p.y + i + n), p.x};
    if (++n < 3 + (k & 1))
        goto again;
    if (n < 0)
        goto last;
    return mix(5, p);
}

/* for in a for, an array of literals */
static unsigned s_nested(int k)
{
    struct pt grid[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            grid[i][j] = (struct pt){i * k + step(j), (int[]){j, i, k}[j % 3]};
    unsigned h = 7;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            h = mix(h, grid[i][j]);
    return h;
}

/* a literal returned from an unbraced if inside a loop */
static struct pt s_find(int k)
{
    for (int i = 0; i < 10; i++)
        if (step(i + k) % 5 == 0)
            return (struct pt){i, step(i)};
    return (struct pt){-1, -1};
}

/* a do whose body is the literal */
static unsigned s_do(int k)
{
    struct pt p = {k, 0};
    int n = 0;
    do
        p = (struct pt){p.y + step(n), p.x};
    while (++n < 3);
    return mix(11, p);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 3;
    unsigned sum = 0;
    for (long r = 0; rounds <= 0 || r < rounds; r++) {
        int k = (int)(r % 4);
        sum = sum * 3u + s_for_if(k);
        sum = sum * 3u + s_while(k);
        sum = sum * 3u + s_else(k);
        sum = sum * 3u + s_case(k);
        sum = sum * 3u + s_label(k);
        sum = sum * 3u + s_nested(k);
        sum = mix(sum, s_find(k));
        sum = sum * 3u + s_do(k);
        printf("round %ld: %u\n", r, sum);
        fflush(stdout);
    }
    return (int)(sum % 100);
}
