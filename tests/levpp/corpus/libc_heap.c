/* libc_heap.c - C library calls that return memory of their own: getline
 * and getdelim (growing one buffer), strndup, asprintf and vasprintf,
 * open_memstream. levpp makes them allocate on the VT heap, so what they
 * return is held across safe points and travels with the image.
 * Exit status: 0. levpp-test: resume 0 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_text[] = "alpha beta\ngamma\n\ndelta epsilon zeta\nlast line without end";

static int fmt(char **out, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vasprintf(out, f, ap);
    va_end(ap);
    return n;
}

static unsigned long hash(const char *s, size_t n)
{
    unsigned long h = 5381;
    for (size_t i = 0; i < n; i++)
        h = h * 33 + (unsigned char)s[i];
    return h;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    char *line = NULL, *word = NULL;
    size_t cap = 0, wcap = 0;
    char *mem = NULL;
    size_t memlen = 0;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        /* No safe point while a stream of the C library is open: a FILE
         * cannot travel. Straight-line reads, no loop. */
        FILE *in = fmemopen((void *)s_text, sizeof s_text - 1, "r");
        if (!in)
            return 1;
        ssize_t n1 = getline(&line, &cap, in);
        char *first = n1 > 0 ? strndup(line, (size_t)n1) : NULL;
        ssize_t n2 = getline(&line, &cap, in);
        ssize_t n3 = getdelim(&word, &wcap, ' ', in);
        fclose(in);
        in = NULL; /* a closed stream's pointer, kept, would stop a capture */
        unsigned long h = (first ? hash(first, (size_t)n1) : 0) * 7;
        h = (h + (n2 > 0 ? hash(line, (size_t)n2) : 0)) * 7;
        h += n3 > 0 ? hash(word, (size_t)n3) : 0;
        int lines = (n1 > 0) + (n2 > 0), words = n3 > 0;
        free(first);
        char *head = strndup(s_text, (size_t)r + 3);
        char *msg = NULL;
        if (!head || asprintf(&msg, "round %d: %d lines, %d words, head '%s'", r, lines, words,
                              head) < 0)
            return 1;
        char *tail = NULL;
        if (fmt(&tail, "hash %lx", h) < 0)
            return 1;
        FILE *out = open_memstream(&mem, &memlen);
        if (!out)
            return 1;
        fprintf(out, "%s|%s|", msg, tail);
        fputs(r % 2 ? "odd" : "even", out);
        fclose(out);
        out = NULL;
        printf("%s, %s, memstream %zu bytes %lx\n", msg, tail, memlen, hash(mem, memlen));
        fflush(stdout);
        free(head);
        free(msg);
        free(tail);
    }
    free(line);
    free(word);
    free(mem);
    return 0;
}
