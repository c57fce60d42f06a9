/* fuzz_levpp.c - levpp (preproc/) on any C text: its output compiles, or
 * it refuses the input with an error that names a place. Input: u8
 * options (bit 0: --main-task, bit 1: --no-auto-poll; the seeds use the
 * digits '0' to '3'), then the C text; a NUL byte ends one input and
 * starts the next (a.c, b.c, c.c, d.c: at most 4, one run of levpp over
 * all of them, as for the sources of one target).
 *
 * levpp runs in a child process (fork), from pp_main as the program
 * does: it keeps its state in statics that it neither resets nor frees,
 * and a refusal may end in exit(). The child copies its coverage
 * counters into memory it shares with this process, which takes them
 * into its own, so that libFuzzer sees what levpp did. A fork and exit
 * of this sanitized program costs about 4 ms, against 10 ms for levpp
 * on a short input it refuses and 30 to 60 ms on a program of its
 * corpus. Before the first, the parent asks the C compiler for its GNU C
 * version (pp_cc_gnuc_flag: no child asks again) and parses one file
 * with libclang, so that each child starts with libclang set up (its
 * runs are shorter so).
 *
 * What levpp promises, checked on every input:
 *  - it ends by returning (no signal, no sanitizer report, no exit but
 *    its status) within S_LIMIT seconds, with status 0 or 1;
 *  - 0: every output is written (OUT.lev.c, no OUT.lev.c.tmp left);
 *  - 1: no output is written, and the errors printed include one that
 *    names a place: `FILE:LINE:COL: error:` (levpp's own or clang's), or
 *    `IN.c: error:` for an input as a whole (no main for --main-task,
 *    a file libclang cannot parse);
 *  - every output of a run that succeeded compiles: `cc -std=gnu11
 *    -fsyntax-only` with the errors the corpus of tests/levpp makes of
 *    wrong code (implicit declarations, incompatible pointers, integer
 *    conversions, return types) and the include directories of the
 *    Leverage headers. An output that does not compile is a failure
 *    unless an input does not compile natively either (with or without
 *    -D__LEVPP__=1): levpp parses with clang, and code that clang takes
 *    and cc does not is not levpp's to mend. One exception, an open
 *    defect of levpp: its outputs include lev_task.h, which declares
 *    the lev_* API and includes <stdio.h>, <time.h>, <sys/types.h>,
 *    <stdarg.h>, <stddef.h> and <stdint.h>, so an input whose own
 *    file-scope names clash with theirs (a global `time`, a static
 *    `lev_checkpoint` of its own) compiles natively, is taken, and its
 *    output does not compile. An input that does not compile with
 *    `-include lev_task.h` either is counted as such, not failed, unless
 *    the environment sets FUZZ_LEVPP_STRICT.
 * Every output taken is compiled, in the replay builds and while
 * fuzzing alike: cc -fsyntax-only costs less than levpp's own run (it
 * starts the C compiler's preprocessor too), and most mutated inputs are
 * refused before any output exists.
 *
 * Text that is not C is refused: levpp takes no input that clang reports
 * an error in. A file of several inputs whose outputs each compile may
 * still not link (the same definition in two inputs): not checked.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "levpp.h"

extern char **environ;

#ifndef FUZZ_LEVPP_INCLUDES /* the Leverage headers' directories, ':'-separated */
#define FUZZ_LEVPP_INCLUDES ""
#endif
#ifndef FUZZ_LEVPP_TESTS /* tests/levpp, where the seeds come from */
#define FUZZ_LEVPP_TESTS "."
#endif

enum {
    S_MAX_FILES = 4,
    S_MAX_SIZE = 1 << 16, /* longer inputs are skipped */
    S_LIMIT = 60,         /* seconds one run of levpp may take */
    S_LOG_MAX = 1 << 20   /* bytes of levpp's or cc's messages read back */
};

/* What the child leaves for the parent: whether pp_main returned, and
 * the coverage counters then. */
typedef struct s_shared {
    int done;
    uint8_t counters[];
} s_shared;

/* The main program's load address (the first object listed). */
static int s_base(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
    return 1;
}

/* This program's coverage counters (a libFuzzer build: one per edge),
 * the section __sancov_cntrs as its ELF section headers place it; NULL
 * when it has none. (Naming the linker's __start___sancov_cntrs in C
 * would shadow the one the instrumentation registers the counters with.) */
static uint8_t *s_counters(size_t *n)
{
    uint8_t *p = NULL;
    ElfW(Shdr) *sh = NULL;
    char *names = NULL;
    ElfW(Ehdr) eh;
    FILE *f = fopen("/proc/self/exe", "rb");
    *n = 0;
    if (!f || fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_shentsize != sizeof *sh || !eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
        goto out;
    sh = calloc(eh.e_shnum, sizeof *sh);
    if (!sh || fseek(f, (long)eh.e_shoff, SEEK_SET) ||
        fread(sh, sizeof *sh, eh.e_shnum, f) != eh.e_shnum)
        goto out;
    const ElfW(Shdr) *strs = &sh[eh.e_shstrndx];
    names = calloc(1, strs->sh_size + 1);
    if (!names || fseek(f, (long)strs->sh_offset, SEEK_SET) ||
        fread(names, 1, strs->sh_size, f) != strs->sh_size)
        goto out;
    for (unsigned i = 0; i < eh.e_shnum; i++)
        if (sh[i].sh_name < strs->sh_size && !strcmp(names + sh[i].sh_name, "__sancov_cntrs") &&
            sh[i].sh_size) {
            uintptr_t base = 0;
            dl_iterate_phdr(s_base, &base);
            p = (uint8_t *)(base + sh[i].sh_addr);
            *n = sh[i].sh_size;
        }
out:
    free(names);
    free(sh);
    if (f)
        fclose(f);
    return p;
}

static struct {
    pid_t pid;     /* the parent's */
    char dir[200]; /* inputs DIR/a.c..., outputs DIR/out/ */
    char in[S_MAX_FILES][300], out[S_MAX_FILES][300], tmp[S_MAX_FILES][300];
    char outdir[300];
    const char *incs[32]; /* -I directories of the Leverage headers */
    unsigned nincs;
    int log, cc_log; /* memfds: levpp's messages, cc's */
    s_shared *sh;
    uint8_t *counters;
    size_t ncounters;
    char *text; /* a log read back */
    unsigned long runs, taken, refused, compiled, not_native, clash, ccs;
    double t_levpp, t_cc; /* seconds in levpp's runs, in cc's */
} s;

static double s_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void s_cleanup(void)
{
    if (getpid() != s.pid || !s.dir[0])
        return;
    for (int i = 0; i < S_MAX_FILES; i++) {
        unlink(s.in[i]);
        unlink(s.out[i]);
        unlink(s.tmp[i]);
    }
    rmdir(s.outdir);
    rmdir(s.dir);
    fprintf(stderr,
            "fuzz_levpp: %lu runs of levpp: %lu taken (%lu with every output compiled, %lu "
            "whose input cc does not compile, %lu whose input clashes with lev_task.h), %lu "
            "refused; %.1f ms a run of levpp, %.1f ms a run of cc\n",
            s.runs, s.taken, s.compiled, s.not_native, s.clash, s.refused,
            s.runs ? 1e3 * s.t_levpp / (double)s.runs : 0.0,
            s.ccs ? 1e3 * s.t_cc / (double)s.ccs : 0.0);
}

static void s_init(void)
{
    if (s.pid)
        return;
    s.pid = getpid();
    const char *tmp = getenv("TMPDIR");
    snprintf(s.dir, sizeof s.dir, "%s/lev-fuzz-levpp-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s.dir))
        fuzz_fail("mkdtemp", strerror(errno));
    snprintf(s.outdir, sizeof s.outdir, "%s/out", s.dir);
    if (mkdir(s.outdir, 0700))
        fuzz_fail("mkdir", strerror(errno));
    for (int i = 0; i < S_MAX_FILES; i++) {
        snprintf(s.in[i], sizeof s.in[i], "%s/%c.c", s.dir, 'a' + i);
        snprintf(s.out[i], sizeof s.out[i], "%s/out/%c.lev.c", s.dir, 'a' + i);
        snprintf(s.tmp[i], sizeof s.tmp[i], "%s/out/%c.lev.c.tmp", s.dir, 'a' + i);
    }
    static char incs[] = FUZZ_LEVPP_INCLUDES;
    for (char *save, *d = strtok_r(incs, ":", &save); d && s.nincs < 32;
         d = strtok_r(NULL, ":", &save))
        s.incs[s.nincs++] = d;
    s.log = memfd_create("levpp", 0);
    s.cc_log = memfd_create("cc", 0);
    if (s.log < 0 || s.cc_log < 0)
        fuzz_fail("memfd_create", strerror(errno));
    s.counters = s_counters(&s.ncounters);
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    if (!s.counters)
        fuzz_fail("fuzz_levpp", "no coverage counters found: libFuzzer would not see levpp's");
#endif
    s.sh = mmap(NULL, sizeof *s.sh + s.ncounters, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s.sh == MAP_FAILED)
        fuzz_fail("mmap", strerror(errno));
    s.text = malloc(S_LOG_MAX + 1);
    if (!s.text)
        fuzz_fail("malloc", "no room for a log");
    pp_cc_gnuc_flag();
    { /* libclang set up for every child (the file need not parse) */
        CXIndex idx = clang_createIndex(0, 0);
        static const char text[] = "#include <stdio.h>\nint main(void) { return 0; }\n";
        struct CXUnsavedFile uf = {"warm.c", text, sizeof text - 1};
        CXTranslationUnit tu;
        if (!clang_parseTranslationUnit2(idx, "warm.c", NULL, 0, &uf, 1, 0, &tu))
            clang_disposeTranslationUnit(tu);
        clang_disposeIndex(idx);
    }
    atexit(s_cleanup);
}

static void s_truncate(int fd)
{
    if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) < 0)
        fuzz_fail("ftruncate", strerror(errno));
}

/* The text of memfd fd (up to S_LOG_MAX bytes), in s.text. */
static const char *s_read_log(int fd)
{
    ssize_t n = pread(fd, s.text, S_LOG_MAX, 0);
    s.text[n > 0 ? n : 0] = '\0';
    return s.text;
}

static void s_write(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f))
        fuzz_fail(path, "cannot write the input");
}

/* Writes the inputs split at NUL bytes, and removes those of an earlier
 * run past them (one may #include another); their number. */
static int s_inputs(const uint8_t *p, size_t n)
{
    int k = 0;
    while (k < S_MAX_FILES - 1) {
        const uint8_t *z = memchr(p, 0, n);
        if (!z)
            break;
        s_write(s.in[k++], p, (size_t)(z - p));
        n -= (size_t)(z - p) + 1;
        p = z + 1;
    }
    s_write(s.in[k++], p, n);
    for (int i = k; i < S_MAX_FILES; i++)
        unlink(s.in[i]);
    return k;
}

/* The child: levpp on the n inputs; never returns. */
static void __attribute__((noreturn)) s_child(int n, int opts)
{
    if (dup2(s.log, 2) < 0 || dup2(s.log, 1) < 0)
        _exit(125);
    signal(SIGALRM, SIG_DFL);
    alarm(S_LIMIT);
    char *argv[16 + S_MAX_FILES + 2 * 32];
    int argc = 0;
    argv[argc++] = "levpp";
    if (opts & 1)
        argv[argc++] = "--main-task";
    if (opts & 2)
        argv[argc++] = "--no-auto-poll";
    for (int i = 0; i < n; i++)
        argv[argc++] = s.in[i];
    argv[argc++] = "-o";
    argv[argc++] = n > 1 ? s.outdir : s.out[0];
    argv[argc++] = "--";
    argv[argc++] = "-I";
    argv[argc++] = s.dir;
    for (unsigned i = 0; i < s.nincs; i++) {
        argv[argc++] = "-I";
        argv[argc++] = (char *)s.incs[i];
    }
    argv[argc] = NULL;
    int rc = pp_main(argc, argv);
    if (s.ncounters)
        memcpy(s.sh->counters, s.counters, s.ncounters);
    s.sh->done = 1;
    _exit(rc);
}

/* Runs levpp on the n inputs; its wait status. */
static int s_levpp(int n, int opts)
{
    for (int i = 0; i < S_MAX_FILES; i++) {
        unlink(s.out[i]);
        unlink(s.tmp[i]);
    }
    s_truncate(s.log);
    s.sh->done = 0;
    double t0 = s_now();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        fuzz_fail("fork", strerror(errno));
    if (!pid)
        s_child(n, opts);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            fuzz_fail("waitpid", strerror(errno));
    if (s.ncounters && s.sh->done) /* what levpp covered, for libFuzzer */
        for (size_t i = 0; i < s.ncounters; i++)
            if (s.sh->counters[i] > s.counters[i])
                s.counters[i] = s.sh->counters[i];
    s.t_levpp += s_now() - t0;
    return st;
}

/* Whether line l holds an error that names a place: `FILE:LINE:COL:
 * error:`, or `IN: error:` for one of the n inputs. */
static int s_placed_line(const char *l, size_t len, int n)
{
    const char *e = memmem(l, len, ": error: ", 9), *fe = memmem(l, len, ": fatal error: ", 15);
    if (!e || (fe && fe < e))
        e = fe;
    if (!e)
        return 0;
    for (int i = 0; i < n; i++)
        if ((size_t)(e - l) == strlen(s.in[i]) && !strncmp(l, s.in[i], (size_t)(e - l)))
            return 1;
    const char *p = e; /* back over :COL and :LINE */
    for (int fields = 0; fields < 2; fields++) {
        const char *d = p;
        while (d > l && d[-1] >= '0' && d[-1] <= '9')
            d--;
        if (d == p || d == l || d[-1] != ':')
            return 0;
        p = d - 1;
    }
    return p > l;
}

/* Whether the log holds an error that names a place (s_placed_line). */
static int s_placed_error(const char *log, int n)
{
    while (*log) {
        const char *nl = strchr(log, '\n');
        size_t len = nl ? (size_t)(nl - log) : strlen(log);
        if (s_placed_line(log, len, n))
            return 1;
        log += len + (nl != NULL);
    }
    return 0;
}

/* cc -std=gnu11 -fsyntax-only on path, with the include directories and
 * the option opt (and its argument arg) if not NULL; its exit status (its
 * messages in s.cc_log). */
static int s_cc(const char *path, const char *opt, const char *arg)
{
    const char *argv[16 + 2 * 32];
    int argc = 0;
    static const char *const head[] = {"cc",
                                       "-std=gnu11",
                                       "-fsyntax-only",
                                       "-Werror=implicit-function-declaration",
                                       "-Werror=incompatible-pointer-types",
                                       "-Werror=int-conversion",
                                       "-Werror=return-type"};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        argv[argc++] = head[i];
    if (opt)
        argv[argc++] = opt;
    if (arg)
        argv[argc++] = arg;
    argv[argc++] = "-I";
    argv[argc++] = s.dir;
    for (unsigned i = 0; i < s.nincs; i++) {
        argv[argc++] = "-I";
        argv[argc++] = s.incs[i];
    }
    argv[argc++] = path;
    argv[argc] = NULL;
    s_truncate(s.cc_log);
    double t0 = s_now();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, s.cc_log, 1);
    posix_spawn_file_actions_adddup2(&fa, s.cc_log, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, "cc", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        fuzz_fail("cannot run cc", strerror(rc));
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            fuzz_fail("waitpid", strerror(errno));
    s.t_cc += s_now() - t0;
    s.ccs++;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A failure, with what levpp printed and where its files are kept. */
static void __attribute__((noreturn)) s_fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_levpp: levpp printed:\n%s\nfuzz_levpp: its inputs and outputs: %s\n",
            s_read_log(s.log), s.dir);
    s.pid = -1; /* keep them */
    fuzz_fail(what, detail);
    abort();
}

/* The outputs of a run that succeeded compile, unless an input does not
 * compile natively. */
static void s_compile(int n)
{
    for (int i = 0; i < n; i++) {
        if (!s_cc(s.out[i], NULL, NULL))
            continue;
        int native = 1, clash = 0;
        for (int j = 0; j < n && native; j++)
            native = !s_cc(s.in[j], NULL, NULL) && !s_cc(s.in[j], "-D__LEVPP__=1", NULL);
        if (!native) {
            s.not_native++;
            return;
        }
        for (int j = 0; j < n && !clash; j++)
            clash = s_cc(s.in[j], "-include", "lev_task.h") != 0;
        if (clash && !getenv("FUZZ_LEVPP_STRICT")) {
            if (!s.clash++)
                fprintf(stderr,
                        "fuzz_levpp: an input whose names clash with lev_task.h's, "
                        "counted (FUZZ_LEVPP_STRICT=1: a failure); cc says:\n%s\n",
                        s_read_log(s.cc_log));
            return;
        }
        s_cc(s.out[i], NULL, NULL);
        fprintf(stderr, "fuzz_levpp: cc says:\n%s\n", s_read_log(s.cc_log));
        s_fail("levpp", "its output does not compile, and its input does");
    }
    s.compiled++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size || size > S_MAX_SIZE)
        return 0;
    s_init();
    int n = s_inputs(data + 1, size - 1);
    int st = s_levpp(n, data[0]);
    s.runs++;
    char why[64];
    if (WIFSIGNALED(st)) {
        snprintf(why, sizeof why, "killed by signal %d%s", WTERMSIG(st),
                 WTERMSIG(st) == SIGALRM ? " (ran too long)" : "");
        s_fail("levpp", why);
    }
    int rc = WEXITSTATUS(st);
    if ((rc != 0 && rc != 1) || !s.sh->done) {
        snprintf(why, sizeof why, "exited with status %d%s", rc,
                 s.sh->done ? "" : " without returning");
        s_fail("levpp", why);
    }
    struct stat sb;
    for (int i = 0; i < S_MAX_FILES; i++) {
        if (!stat(s.tmp[i], &sb))
            s_fail("levpp", "left a temporary output");
        int want = !rc && i < n, have = !stat(s.out[i], &sb);
        if (have != want)
            s_fail("levpp", want ? "succeeded without writing an output"
                                 : "wrote an output it was not asked for, or after an error");
    }
    if (rc) {
        s.refused++;
        if (!s_placed_error(s_read_log(s.log), n))
            s_fail("levpp", "refused an input without an error that names a place");
        return 0;
    }
    s.taken++;
    s_compile(n);
    return 0;
}

/* ===================================================================
 * Seeds: programs of levpp's own tests (tests/levpp), as levpp takes
 * them there; a header of their directory is written in place of its
 * #include (the harness gives levpp .c files only). Not all of them:
 * those that, picked one by one for the edges of levpp they add, reach
 * 95 % of what all of them reach (the rest add fewer than 10 edges
 * each), and the multi-file and task programs.
 * =================================================================== */

static void s_put(char **b, size_t *n, size_t *cap, const char *p, size_t k)
{
    if (*n + k + 1 > *cap) {
        *cap = 2 * (*n + k + 1);
        *b = realloc(*b, *cap);
        if (!*b)
            fuzz_fail("seeds", "out of memory");
    }
    memcpy(*b + *n, p, k);
    *n += k;
}

/* Appends the text of dir/name with the headers of dir (or dir/include)
 * it includes with quotes written in place, to depth 3. */
static void s_inline(char **b, size_t *n, size_t *cap, const char *dir, const char *name, int depth)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "fuzz_levpp: cannot read %s: %s\n", path, strerror(errno));
        exit(2);
    }
    char line[4096], inc[256];
    while (fgets(line, sizeof line, f)) {
        if (depth < 3 && sscanf(line, " # include \"%255[^\"]\"", inc) == 1 && !strchr(inc, '/')) {
            const char *where[] = {"", "/include"};
            int done = 0;
            for (int w = 0; w < 2 && !done; w++) {
                char d[1024], p[1300];
                snprintf(d, sizeof d, "%s%s", dir, where[w]);
                snprintf(p, sizeof p, "%s/%s", d, inc);
                if (!access(p, R_OK)) {
                    s_inline(b, n, cap, d, inc, depth + 1);
                    done = 1;
                }
            }
            if (done)
                continue;
        }
        s_put(b, n, cap, line, strlen(line));
    }
    fclose(f);
}

void fuzz_seeds(void (*emit)(const char *name, const void *p, size_t n))
{
    /* options ('0': none, '1': --main-task, '2': --no-auto-poll, '3':
     * both), directory under tests/levpp, its files (one run of levpp) */
    static const struct {
        const char *name, opts, *dir, *files[3];
    } seeds[] = {
        {"aligned_state", '1', "corpus", {"aligned_state.c"}},
        {"alloc_hooks", '1', "corpus", {"alloc_hooks.c"}},
        {"alloc_wrappers", '1', "corpus", {"alloc_wrappers.c"}},
        {"anon_members", '1', "corpus", {"anon_members.c"}},
        {"args", '1', "corpus", {"args.c"}},
        {"array_params", '1', "corpus", {"array_params.c"}},
        {"atomic", '1', "corpus", {"atomic.c"}},
        {"bitfields", '1', "corpus", {"bitfields.c"}},
        {"comma", '1', "corpus", {"comma.c"}},
        {"computed_goto", '1', "corpus", {"computed_goto.c"}},
        {"const_loops", '1', "corpus", {"const_loops.c"}},
        {"elvis", '1', "corpus", {"elvis.c"}},
        {"expr", '3', "corpus", {"expr.c"}},
        {"fallthrough_assert", '1', "corpus", {"fallthrough_assert.c"}},
        {"flexible_array", '1', "corpus", {"flexible_array.c"}},
        {"heap_macro", '1', "corpus", {"heap_macro.c"}},
        {"indirect", '1', "corpus", {"indirect.c"}},
        {"lazyframes", '1', "corpus", {"lazyframes.c"}},
        {"literal_ends", '1', "corpus", {"literal_ends.c"}},
        {"local_tag_clash", '1', "corpus", {"local_tag_clash.c"}},
        {"local_tag_vars", '1', "corpus", {"local_tag_vars.c"}},
        {"logical", '1', "corpus", {"logical.c"}},
        {"loop_incr", '1', "corpus", {"loop_incr.c"}},
        {"loops", '1', "corpus", {"loops.c"}},
        {"main_types", '1', "corpus", {"main_types.c"}},
        {"oldstyle_main", '1', "corpus", {"oldstyle_main.c"}},
        {"overlay_union", '1', "corpus", {"overlay_union.c"}},
        {"setjmp_shapes", '1', "corpus", {"setjmp_shapes.c"}},
        {"statics", '1', "corpus", {"statics.c"}},
        {"stdstreams", '1', "corpus", {"stdstreams.c"}},
        {"stmtexpr", '1', "corpus", {"stmtexpr.c"}},
        {"tagged_union", '1', "corpus", {"tagged_union.c"}},
        {"ternary", '1', "corpus", {"ternary.c"}},
        {"unbraced_tight", '1', "corpus", {"unbraced_tight.c"}},
        {"untyped", '1', "corpus", {"untyped.c"}},
        {"va_list_param", '1', "corpus", {"va_list_param.c"}},
        {"word_macros", '3', "corpus", {"word_macros.c"}},
        {"multi", '1', "corpus/multi", {"main.c", "stack.c"}},
        {"same_statics", '1', "corpus/same_statics", {"main.c", "other.c"}},
        {"tagged_multi", '1', "corpus/tagged_multi", {"main.c", "fill.c"}},
        {"tasks", '0', "tasks_run", {"tasks_a.c", "tasks_b.c"}},
        {"tasks_sum", '2', "tasks", {"tasks_sum.c"}},
        {"block", '0', "block", {"block.c"}},
        {"inline_asm", '1', "corpus", {"inline_asm.c"}},
        /* refused, each for its reason */
        {"addr_derived", '1', "diag", {"addr_derived.c"}},
        {"anon_union_ptr", '1', "diag", {"anon_union_ptr.c"}},
        {"asm_stmt_expr", '1', "diag", {"asm_stmt_expr.c"}},
        {"atomic_safepoint", '1', "diag", {"atomic_safepoint.c"}},
        {"atomic_task", '1', "diag", {"atomic_task.c"}},
        {"bitfield_anon", '1', "diag", {"bitfield_anon.c"}},
        {"block_macro", '1', "diag", {"block_macro.c"}},
        {"block_noproto", '1', "diag", {"block_noproto.c"}},
        {"block_vla_param", '1', "diag", {"block_vla_param.c"}},
        {"cli_cc_macro", '1', "diag", {"cli_cc_macro.c"}},
        {"cli_ok", '1', "diag", {"cli_ok.c"}},
        {"flexible_nested", '1', "diag", {"flexible_nested.c"}},
        {"frame_name", '1', "diag", {"frame_name.c"}},
        {"heap_unnamed", '1', "diag", {"heap_unnamed.c"}},
        {"asm_goto", '1', "diag", {"asm_goto.c"}},
        {"intptr_local", '1', "diag", {"intptr_local.c"}},
        {"intptr_memory", '1', "diag", {"intptr_memory.c"}},
        {"intptr_static", '1', "diag", {"intptr_static.c"}},
        {"jmp_buf_native", '1', "diag", {"jmp_buf_native.c"}},
        {"lev_return_expr", '1', "diag", {"lev_return_expr.c"}},
        {"main_signature", '1', "diag", {"main_signature.c"}},
        {"malformed", '1', "diag", {"malformed.c"}},
        {"missing_header", '1', "diag", {"missing_header.c"}},
        {"no_main", '1', "diag", {"no_main.c"}},
        {"pthread", '1', "diag", {"pthread.c"}},
        {"signal", '1', "diag", {"signal.c"}},
        {"statement_omp", '1', "diag", {"statement_omp.c"}},
        {"static_write", '1', "diag", {"static_write.c"}},
        {"tagged_union_note", '1', "diag", {"tagged_union_note.c"}},
        {"tagged_union_refused", '1', "diag", {"tagged_union_refused.c"}},
        {"task_signature", '1', "diag", {"task_signature.c"}},
        {"thrd_create", '1', "diag", {"thrd_create.c"}},
        {"two_defs", '1', "diag", {"two_defs_a.c", "two_defs_b.c"}},
        {"two_defs_a", '1', "diag", {"two_defs_a.c"}},
        {"two_defs_b", '1', "diag", {"two_defs_b.c"}},
        {"union_ptr_heap", '1', "diag", {"union_ptr_heap.c"}},
        {"unnamed_cond", '1', "diag", {"unnamed_cond.c"}},
        {"vla_overaligned", '1', "diag", {"vla_overaligned.c"}},
        {"align_local_name", '1', "diag", {"align_local_name.c"}},
        {"vla_param_call", '1', "diag", {"vla_param_call.c"}},
        {"vla_shape", '1', "diag", {"vla_shape.c"}},
    };
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
        char dir[1024], *b = NULL;
        size_t n = 0, cap = 0;
        snprintf(dir, sizeof dir, "%s/%s", FUZZ_LEVPP_TESTS, seeds[i].dir);
        s_put(&b, &n, &cap, &seeds[i].opts, 1);
        for (int f = 0; f < 3 && seeds[i].files[f]; f++) {
            if (f)
                s_put(&b, &n, &cap, "", 1);
            s_inline(&b, &n, &cap, dir, seeds[i].files[f], 0);
        }
        emit(seeds[i].name, b, n);
        free(b);
    }
    /* not C, and C that is almost nothing */
    static const char *const odd[][2] = {
        {"not_c", "1#!/bin/sh\necho hello\n"},
        {"empty_main", "1int main(void) { return 0; }\n"},
        {"empty", "0"},
    };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
        emit(odd[i][0], odd[i][1], strlen(odd[i][1]));
}
