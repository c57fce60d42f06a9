/* tokens.c - strtok across safe points: lines of generated text are split
 * into words with strtok while the loop that asks for the next word polls
 * between the calls, so strtok's position must travel with the program.
 * The buffer being split is in turn a frame array, a heap copy (strdup)
 * and a file-scope array; words are counted in a small table, and one
 * sequence is abandoned half-way on the heap buffer. One flushed line per
 * round.
 * usage: tokens [ROUNDS [LINES_PER_ROUND]]   (default 10 20; ROUNDS 0: until killed)
 * Exit status: the number of distinct words modulo 100.
 */
/* levpp-test: resume 0 300 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXW 64

static const char *g_vocab[] = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"};
static const char *g_seps[] = {" ", ", ", "\t", "  ,", ","};
static char g_static_line[256];
static char g_words[MAXW][16];
static long g_counts[MAXW];
static int g_nwords;
static unsigned g_seed = 12345u;

static unsigned next(void)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return (g_seed >> 16) & 0x7fffu;
}

/* A line of words separated by runs of spaces, commas and tabs. */
static void make_line(char *buf, size_t size)
{
    size_t n = 0;
    int words = 3 + (int)(next() % 8);
    buf[0] = '\0';
    for (int i = 0; i < words && n + 24 < size; i++) {
        n += (size_t)snprintf(buf + n, size - n, "%s%s%s", i ? g_seps[next() % 5] : "",
                              g_vocab[next() % 8], next() % 3 ? "" : "s");
    }
}

static void count(const char *w)
{
    for (int i = 0; i < g_nwords; i++)
        if (!strcmp(g_words[i], w)) {
            g_counts[i]++;
            return;
        }
    if (g_nwords < MAXW) {
        snprintf(g_words[g_nwords], sizeof g_words[0], "%s", w);
        g_counts[g_nwords++] = 1;
    }
}

/* Splits buf in place; returns the number of words. */
static int split_count(char *buf)
{
    int n = 0;
    for (char *w = strtok(buf, " ,\t"); w; w = strtok(NULL, " ,\t")) {
        count(w);
        n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    int lines = argc > 2 ? atoi(argv[2]) : 20;
    if (rounds < 0 || lines < 1)
        return 99;
    long total = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        long in_round = 0;
        for (int l = 0; l < lines; l++) {
            char frame_line[256];
            make_line(frame_line, sizeof frame_line);
            switch (l % 3) {
            case 0:
                in_round += split_count(frame_line);
                break;
            case 1: {
                char *copy = strdup(frame_line);
                if (!copy)
                    return 98;
                in_round += split_count(copy);
                free(copy);
                break;
            }
            default:
                memcpy(g_static_line, frame_line, sizeof g_static_line);
                in_round += split_count(g_static_line);
                break;
            }
        }
        /* first two words of a fresh heap line, then the sequence is
         * left unfinished (the buffer stays alive until the next round) */
        static char *held;
        free(held);
        held = malloc(256);
        if (!held)
            return 98;
        make_line(held, 256);
        char *w1 = strtok(held, " ,\t");
        char *w2 = w1 ? strtok(NULL, " ,\t") : NULL;
        total += in_round;
        printf("round %d: %ld words, %d distinct, first %s %s\n", r, in_round, g_nwords,
               w1 ? w1 : "-", w2 ? w2 : "-");
        fflush(stdout);
    }
    for (int i = 0; i < g_nwords; i++)
        printf("%s %ld\n", g_words[i], g_counts[i]);
    printf("total %ld\n", total);
    return g_nwords % 100;
}
