/* stdio_out.c - prints 41 numbered lines to stdout or stderr, buffered as
 * its arguments say, with safe points between them, and holds twice on
 * the way (loops, polled, while a file exists), so that a test can take a
 * checkpoint there, kill it and resume it in a new process.
 *
 * usage: stdio_out STREAM MODE WIDTH H1 H2
 *   STREAM  out | err
 *   MODE    default | line | full | none: setvbuf of the stream (full:
 *           a buffer of 1000 bytes)
 *   WIDTH   0: short lines ("line 7 of 41"); else lines of 40 to about
 *           300 bytes, so the buffer is written out part-way through a
 *           line now and then
 *   H1, H2  after line H1 (then H2): create file reachedH1, hold while
 *           file hold1 (hold2) exists; 0: no hold
 * Exit status 0; 2 on bad arguments. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long g_spin;

/* Creates file `name`, through the kernel (not stdio). */
static void mark(const char *name)
{
    int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

static void hold_while(const char *file)
{
    while (access(file, F_OK) == 0)
        for (int k = 0; k < 1000; k++)
            g_spin += k % 5;
}

int main(int argc, char **argv)
{
    if (argc != 6)
        return 2;
    FILE *out = strcmp(argv[1], "err") == 0 ? stderr : stdout;
    const char *mode = argv[2];
    int width = atoi(argv[3]), h1 = atoi(argv[4]), h2 = atoi(argv[5]);
    int rc = 0;
    if (strcmp(mode, "line") == 0)
        rc = setvbuf(out, NULL, _IOLBF, 0);
    else if (strcmp(mode, "full") == 0)
        rc = setvbuf(out, NULL, _IOFBF, 1000);
    else if (strcmp(mode, "none") == 0)
        rc = setvbuf(out, NULL, _IONBF, 0);
    else if (strcmp(mode, "default") != 0)
        return 2;
    if (rc != 0)
        return 2;
    for (int i = 1; i <= 41; i++) {
        if (width) {
            int n = 40 + (i * 97) % 260;
            fprintf(out, "line %d of 41 ", i);
            for (int k = 0; k < n; k++)
                fputc('a' + (i + k) % 26, out);
            fputc('\n', out);
        } else {
            fprintf(out, "line %d of 41\n", i);
        }
        for (int k = 0; k < 20000; k++)
            g_spin += k % 3;
        if (i == h1 || i == h2) {
            char name[32];
            snprintf(name, sizeof name, "reached%d", i);
            mark(name);
            hold_while(i == h1 ? "hold1" : "hold2");
        }
    }
    return g_spin < 0;
}
