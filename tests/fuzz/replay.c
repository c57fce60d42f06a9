/* replay.c - the main of a harness built without libFuzzer (gcc, the
 * plain and sanitizer builds): runs every input file given (a directory:
 * every file in it) through LLVMFuzzerTestOneInput, so that ctest replays
 * the seed corpus and every crash ever found, and writes the seeds with
 * --seeds DIR.
 *
 *   fuzz_NAME [--seeds DIR] FILE|DIR...
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static const char *s_dir;
static int s_inputs;

static void s_emit(const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f)) {
        fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
}

static void s_run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz: cannot read %s: %s\n", path, strerror(errno));
        exit(2);
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n < cap)
            continue;
        unsigned char *more = realloc(buf, cap *= 2);
        if (!more)
            free(buf);
        buf = more;
    }
    fclose(f);
    if (!buf)
        exit(2);
    /* exactly n bytes, so that a read past them is caught */
    unsigned char *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    s_inputs++;
}

static void s_run(const char *path)
{
    struct stat st;
    if (stat(path, &st)) {
        fprintf(stderr, "fuzz: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        s_run_file(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        s_run(p);
    }
    if (d)
        closedir(d);
}

int main(int argc, char **argv)
{
    int i = 1;
    if (argc > 2 && !strcmp(argv[1], "--seeds")) {
        s_dir = argv[2];
        fuzz_seeds(s_emit);
        return 0;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: %s [--seeds DIR] FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (; i < argc; i++)
        s_run(argv[i]);
    printf("%d inputs, no failure\n", s_inputs);
    return 0;
}
