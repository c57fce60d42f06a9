/* re_driver.c - a deterministic, CPU-bound run of tiny-regex-c through its
 * public API: each round generates lines of text from a seeded generator,
 * compiles a fixed set of patterns and matches every pattern against every
 * line (re_matchp on the compiled pattern and re_match on the pattern
 * text), then prints one line: the count of matches and a checksum of the
 * match positions and lengths.
 *
 * usage: re_driver ROUNDS [LINES]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "re.h"

static const char *const patterns[] = {
    "\\d+\\w?\\D\\d",
    "\\s+[a-zA-Z0-9?]*",
    "\\w*\\d?\\w\\?",
    "[^\\d]+\\\\?\\s",
    "[^\\w][^-1-4]",
    "a+b*[ac]*.+.*.[\\.].",
    "[-1-5]+[-1-2]-[-]",
    "\\s?[a-fKL098]+-?",
    "^[a-z]+ ",
    "[0-9]+$",
    "x.*y",
    "fo+ba?r",
    "[A-Z][a-z]*\\s\\d",
    "\\.\\.\\.",
    "b[aeiou]+[^aeiou]",
};
#define NPAT ((int)(sizeof patterns / sizeof patterns[0]))

static unsigned long long next_rand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void make_line(unsigned long long *s, char *line, int len)
{
    static const char alphabet[] = "abcdefxyz fooobar BAZ 0123456789 -?.\\\t";
    for (int i = 0; i < len; i++)
        line[i] = alphabet[next_rand(s) % (sizeof alphabet - 1)];
    line[len] = '\0';
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    int lines = argc > 2 ? atoi(argv[2]) : 200;
    char line[200];
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        unsigned long long s = (unsigned long long)r * 104729, sum = 0;
        long matches = 0;
        for (int l = 0; l < lines; l++) {
            make_line(&s, line, 20 + (int)(next_rand(&s) % 150));
            for (int p = 0; p < NPAT; p++) {
                int len = 0, len2 = 0;
                re_t re = re_compile(patterns[p]);
                int at = re ? re_matchp(re, line, &len) : -2;
                int at2 = re_match(patterns[p], line, &len2);
                if (at >= 0)
                    matches++;
                sum = sum * 31 + (unsigned long long)(at + 3) * 7 + (unsigned long long)len +
                      (at2 == at && len2 == len);
            }
        }
        printf("round %ld: lines %d matches %ld sum %016llx\n", r, lines, matches, sum);
        fflush(stdout);
    }
    return 0;
}
