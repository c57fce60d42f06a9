/* word_macros.c - a program that defines, before levpp's own code, macros
 * named like the words that code and its headers might use (line, n, f,
 * s, fn, ap), and calls what levpp rewrites onto wrappers of its own
 * (atexit, rand, strndup, asprintf): the output must compile and behave.
 * Exit status: 0. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define line 1000
#define n 7
#define f 3
#define s "word"
#define fn x
#define ap y
#define l 11
#define o 13

static void bye(void) { printf("bye %d\n", line + n); }

int main(void)
{
    if (atexit(bye) != 0)
        return 1;
    srand(f);
    long sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += rand() % (n + l + o);
    char *w = strndup(s, 3);
    char *msg = NULL;
    if (!w || asprintf(&msg, "%s %ld", w, sum) < 0)
        return 1;
    printf("%s\n", msg);
    free(w);
    free(msg);
    return 0;
}
