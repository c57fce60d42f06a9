/* stdstreams.c - pointers to the standard streams held across safe
 * points, in locals and in a heap object: they are captured by name and
 * come back as the new process's streams. */
#include <stdio.h>
#include <stdlib.h>

struct sink {
    FILE *out;
    FILE *err;
    long lines;
};

static void emit(struct sink *s, long i)
{
    fprintf(s->out, "line %ld\n", i);
    s->lines++;
}

int main(int argc, char **argv)
{
    (void)argv;
    FILE *out = argc > 5 ? stderr : stdout;
    FILE *in = stdin;
    struct sink *s = malloc(sizeof(struct sink));
    s->out = out;
    s->err = stderr;
    s->lines = 0;
    long sum = 0;
    for (long i = 0; i < 300; i++) {
        emit(s, i);
        for (long k = 0; k < 50; k++)
            sum += (i * k) % 7;
    }
    fprintf(out, "sum %ld\n", sum);
    fprintf(out, "lines %ld\n", s->lines);
    fprintf(out, "same out: %d, err: %d, in: %d\n", s->out == stdout, s->err == stderr,
            in == stdin);
    free(s);
    return 0;
}
