/* streams.c - streams of the C library held open across safe points: a
 * file written a character at a time, read back a line at a time and
 * with fgetc to its end, one written and reread through "w+", a stream
 * switched to another file with freopen, a memory stream filled in a
 * loop, and a pointer kept to a stream after fclose. levpp renames fopen,
 * freopen, fclose and open_memstream so that images carry the streams: a
 * capture flushes them, and a resumed process reopens each file at its
 * offset ("w" files cut back to their size at the capture). Each round
 * has files of its own, which no later round changes: a resumed run finds
 * the files it reads as they were at the image (Leverage keeps no file
 * contents), and a killed run may have gone on for rounds past it.
 * Exit status: 0. levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long mix(unsigned long h, int c) { return h * 33 + (unsigned char)c; }

/* Writes `lines` lines to f a character at a time (the inner loops poll
 * now and then, with f open and part written). */
static void write_lines(FILE *f, int r, int lines)
{
    for (int i = 0; i < lines; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "round %d line %d value %lu\n", r, i,
                         (unsigned long)i * i * (unsigned long)r);
        for (int k = 0; k < n; k++)
            fputc(line[k], f);
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    FILE *closed = NULL;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        char name[32], other[32];
        snprintf(name, sizeof name, "streams_%d.txt", r);
        snprintf(other, sizeof other, "streams_other_%d.txt", r);

        FILE *out = fopen(name, "w");
        if (!out) {
            perror(name);
            return 1;
        }
        write_lines(out, r, 300);
        fclose(out);
        closed = out; /* dangling from here on: an image carries it as such */

        /* Read back: lines with fgets, then the rest with fgetc. */
        FILE *in = fopen(name, "r");
        char buf[128];
        unsigned long h = 5381;
        int lines = 0;
        while (lines < 150 && fgets(buf, sizeof buf, in)) {
            for (char *p = buf; *p; p++)
                h = mix(h, *p);
            lines++;
        }
        int c;
        long rest = 0;
        while ((c = fgetc(in)) != EOF) {
            h = mix(h, c);
            rest++;
        }
        int at_end = feof(in) != 0;
        fclose(in);

        /* Write, then read it all again through the same stream. */
        char both[40];
        snprintf(both, sizeof both, "streams_both_%d.txt", r);
        FILE *ap = fopen(both, "w+");
        write_lines(ap, r + 50, 120);
        fprintf(ap, "written last in round %d\n", r);
        rewind(ap);
        int total = 0;
        while (fgets(buf, sizeof buf, ap))
            total++;
        fclose(ap);

        /* freopen: the same FILE now reads another file. */
        FILE *w2 = fopen(other, "w");
        write_lines(w2, r + 100, 40);
        fclose(w2);
        FILE *sw = fopen(name, "r");
        sw = freopen(other, "r", sw);
        unsigned long h2 = 5381;
        while ((c = fgetc(sw)) != EOF)
            h2 = mix(h2, c);
        fclose(sw);

        /* A memory stream filled in a loop. */
        char *mem = NULL;
        size_t memlen = 0;
        FILE *ms = open_memstream(&mem, &memlen);
        for (int i = 0; i < 400; i++)
            fprintf(ms, "%d,", i * r);
        fflush(ms);
        size_t mid = memlen;
        for (int i = 0; i < 400; i++)
            fputc('a' + i % 26, ms);
        fclose(ms);
        unsigned long hm = 5381;
        for (size_t i = 0; i < memlen; i++)
            hm = mix(hm, mem[i]);
        free(mem);

        printf("round %d: %d lines + %ld bytes, hash %lx, at end %d; %d lines through w+; "
               "other %lx; memstream %zu then %zu bytes, hash %lx; closed %s\n",
               r, lines, rest, h, at_end, total, h2, mid, memlen, hm, closed ? "kept" : "none");
        fflush(stdout);
    }
    return 0;
}
