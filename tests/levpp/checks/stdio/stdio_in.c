/* stdio_in.c - reads its standard input item by item in the way its
 * arguments say and prints one line per item (its number, length and a
 * hash of its bytes), holding once on the way (a loop, polled, while
 * file `hold` exists), so that a test can take a checkpoint there, kill
 * it and resume it in a new process.
 *
 * usage: stdio_in STYLE MODE HOLD PEND
 *   STYLE  getline | fgets (64 bytes) | fread (37 bytes) | scanf (a
 *          word: "%63s") | getchar (to the end of a line) | mix (the five
 *          in turn, with peeks (getc, ungetc of the same byte) and a
 *          byte read and '#' pushed back in its place now and then)
 *   MODE   default | line | full (1000 bytes) | none: setvbuf of stdin
 *   HOLD   hold after item HOLD; 0: at the end of the input
 *   PEND   none | same | other: before holding, peek at the next byte
 *          (same), or read it and push '#' back in its place (other)
 * Before holding it writes file `reached` holding the number of bytes it
 * took from its file descriptor (the input holds no '#': every '#' it
 * reads is one it pushed back). At the end it prints the totals and,
 * after a hold at the end, whether stdin is still at its end.
 * Exit status 0; 2 on bad arguments. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long g_spin, g_taken;

static unsigned long hash(const char *s, size_t n)
{
    unsigned long h = 5381;
    for (size_t i = 0; i < n; i++)
        h = h * 33 + (unsigned char)s[i];
    return h & 0xffffffffUL;
}

/* Counts the bytes of an item that came from the file descriptor. */
static void took(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g_taken += s[i] != '#';
}

/* Reads one item in style k into *item (a buffer of cap bytes, or the
 * getline buffer); its length, or -1 at the end. */
static long item_of(int k, char **line, size_t *cap, char *buf)
{
    long n = -1;
    switch (k) {
    case 0:
        n = getline(line, cap, stdin);
        if (n > 0)
            memcpy(buf, *line, (size_t)n < 300 ? (size_t)n : 300);
        return n < 0 ? -1 : n < 300 ? n : 300;
    case 1:
        if (!fgets(buf, 64, stdin))
            return -1;
        return (long)strlen(buf);
    case 2:
        n = (long)fread(buf, 1, 37, stdin);
        return n > 0 ? n : -1;
    case 3: {
        int used = 0;
        if (scanf("%63s%n", buf, &used) != 1)
            return -1;
        g_taken += used - (long)strlen(buf); /* the white space it skipped */
        return (long)strlen(buf);
    }
    default: {
        int c;
        n = 0;
        while ((c = getchar()) != EOF) {
            buf[n++] = (char)c;
            if (c == '\n' || n == 300)
                break;
        }
        return n > 0 ? n : -1;
    }
    }
}

int main(int argc, char **argv)
{
    static const char *const styles[] = {"getline", "fgets", "fread", "scanf", "getchar", "mix"};
    if (argc != 5)
        return 2;
    int style = -1;
    for (int k = 0; k < 6; k++)
        if (strcmp(argv[1], styles[k]) == 0)
            style = k;
    const char *mode = argv[2], *pend = argv[4];
    long hold = atol(argv[3]);
    int rc = 0;
    if (strcmp(mode, "line") == 0)
        rc = setvbuf(stdin, NULL, _IOLBF, 0);
    else if (strcmp(mode, "full") == 0)
        rc = setvbuf(stdin, NULL, _IOFBF, 1000);
    else if (strcmp(mode, "none") == 0)
        rc = setvbuf(stdin, NULL, _IONBF, 0);
    else if (strcmp(mode, "default") != 0)
        rc = 1;
    if (rc != 0 || style < 0)
        return 2;
    char *line = NULL;
    size_t cap = 0;
    char buf[304];
    long items = 0, bytes = 0;
    for (;;) {
        if (hold > 0 ? items == hold : feof(stdin) != 0) {
            if (strcmp(pend, "same") == 0) {
                int c = getchar();
                if (c != EOF)
                    ungetc(c, stdin);
            } else if (strcmp(pend, "other") == 0) {
                int c = getchar();
                if (c != EOF)
                    g_taken++;
                ungetc('#', stdin);
            }
            int fd = open("reached", O_CREAT | O_WRONLY | O_TRUNC, 0644);
            if (fd >= 0) {
                char num[32];
                int len = snprintf(num, sizeof num, "%ld\n", g_taken);
                if (write(fd, num, (size_t)len) != len)
                    return 2;
                close(fd);
            }
            while (access("hold", F_OK) == 0)
                for (int k = 0; k < 1000; k++)
                    g_spin += k % 5;
            if (hold == 0)
                break;
        }
        int k = style == 5 ? (int)(items % 5) : style;
        if (style == 5 && items % 7 == 3) { /* peek */
            int c = getchar();
            if (c != EOF)
                ungetc(c, stdin);
        }
        if (style == 5 && items % 11 == 5) { /* a byte replaced by '#' */
            int c = getchar();
            if (c != EOF) {
                g_taken++;
                ungetc('#', stdin);
            }
        }
        long n = item_of(k, &line, &cap, buf);
        if (n < 0) {
            if (hold == 0)
                continue; /* hold at the end, then stop */
            break;
        }
        took(buf, (size_t)n);
        items++;
        bytes += n;
        printf("item %ld %s len %ld hash %08lx\n", items, styles[k], n, hash(buf, (size_t)n));
        for (int j = 0; j < 200; j++)
            g_spin += j % 3;
    }
    printf("end: items %ld bytes %ld\n", items, bytes);
    if (hold == 0) {
        printf("after the end: feof %d\n", feof(stdin) != 0);
        printf("then getchar %d\n", getchar());
    }
    free(line);
    return g_spin < 0;
}
