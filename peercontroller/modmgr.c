/* modmgr.c - the module manager (modmgr.h): task modules cached by the
 * BLAKE2b-256 hash of their bytes, in memory and in DIR/modules/<hex>.so,
 * checked against their hash whenever they come in, and evicted by size
 * and age (a file's modification time is when it was last used); and the
 * architecture of a module's ELF header against this machine's.
 */
#define _GNU_SOURCE
#include "modmgr.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lev_errors.h"
#include "rt.h"
#include "vec.h"

#define S_FILE_MAX ((size_t)1 << 30) /* a module file read back from disk */

typedef struct s_entry {
    struct s_entry *next;
    uint8_t hash[PC_HASH_LEN];
    uint8_t *bytes; /* malloc'd */
    size_t len;
    int64_t used_s; /* when it was last put or got (wall clock, s) */
} s_entry;

struct pc_modmgr {
    pthread_mutex_t mu;
    s_entry *list; /* newest first */
    char *dir;     /* data_dir/modules, or NULL */
    bool warned;   /* a disk write failure was printed */
    unsigned tmp_seq;
    size_t max_bytes;          /* the cache's size (0: no bound) */
    int64_t max_age_s;         /* and age of a module unused (0: none) */
    uint64_t evicted, refused; /* modules evicted, and too large to cache */
    size_t held, held_bytes;   /* modules cached, and their bytes, at the last eviction */
};

static int64_t s_now_s(void) { return (int64_t)time(NULL); }

static pthread_once_t s_sodium_once = PTHREAD_ONCE_INIT;

static void s_sodium_init(void)
{
    if (sodium_init() < 0) {
        fprintf(stderr, "levpeer: libsodium cannot initialise\n");
        abort();
    }
}

void pc_module_hash(const void *bytes, size_t len, uint8_t out[PC_HASH_LEN])
{
    pthread_once(&s_sodium_once, s_sodium_init);
    crypto_generichash(out, PC_HASH_LEN, bytes, len, NULL, 0);
}

void pc_module_hash_hex(const uint8_t hash[PC_HASH_LEN], char out[2 * PC_HASH_LEN + 1])
{
    sodium_bin2hex(out, 2 * PC_HASH_LEN + 1, hash, PC_HASH_LEN);
}

/* ===================================================================
 * Manager
 * =================================================================== */

int pc_modmgr_new(pc_modmgr **out, const char *data_dir)
{
    if (!out)
        return rt_err(LEV_EINVAL, "pc_modmgr_new: NULL out");
    *out = NULL;
    pthread_once(&s_sodium_once, s_sodium_init);
    pc_modmgr *mm = calloc(1, sizeof *mm);
    if (!mm)
        return LEV_ENOMEM;
    pthread_mutex_init(&mm->mu, NULL);
    if (data_dir) {
        if (asprintf(&mm->dir, "%s/modules", data_dir) < 0) {
            mm->dir = NULL;
            pc_modmgr_destroy(&mm);
            return LEV_ENOMEM;
        }
        if ((mkdir(data_dir, 0777) && errno != EEXIST) ||
            (mkdir(mm->dir, 0777) && errno != EEXIST)) {
            int rc =
                rt_err(LEV_EIO, "cannot make the module cache %s: %s", mm->dir, strerror(errno));
            pc_modmgr_destroy(&mm);
            return rc;
        }
    }
    *out = mm;
    return 0;
}

void pc_modmgr_destroy(pc_modmgr **mm_p)
{
    if (!mm_p || !*mm_p)
        return;
    pc_modmgr *mm = *mm_p;
    *mm_p = NULL;
    for (s_entry *e = mm->list, *next; e; e = next) {
        next = e->next;
        free(e->bytes);
        free(e);
    }
    free(mm->dir);
    pthread_mutex_destroy(&mm->mu);
    free(mm);
}

/* Under mm->mu: the cached entry of `hash`, or NULL. */
static s_entry *s_find(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN])
{
    for (s_entry *e = mm->list; e; e = e->next)
        if (!memcmp(e->hash, hash, PC_HASH_LEN))
            return e;
    return NULL;
}

/* Under mm->mu: caches bytes (ownership taken) under hash; NULL on
 * exhaustion (bytes are then freed). */
static s_entry *s_add(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN], uint8_t *bytes, size_t len)
{
    s_entry *e = calloc(1, sizeof *e);
    if (!e) {
        free(bytes);
        return NULL;
    }
    memcpy(e->hash, hash, PC_HASH_LEN);
    e->bytes = bytes;
    e->len = len;
    e->used_s = s_now_s();
    e->next = mm->list;
    mm->list = e;
    return e;
}

/* The path of a module's file in the cache directory (malloc'd), with a
 * suffix; NULL on exhaustion. */
static char *s_path(const pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN], const char *suffix)
{
    char hex[2 * PC_HASH_LEN + 1];
    pc_module_hash_hex(hash, hex);
    char *p;
    return asprintf(&p, "%s/%s.so%s", mm->dir, hex, suffix) < 0 ? NULL : p;
}

/* Writes all of b to fd; false on failure (errno set). */
static bool s_write_all(int fd, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        b += w;
        n -= (size_t)w;
    }
    return true;
}

/* Under mm->mu: writes a module to its file through a temporary one
 * (synced, renamed). A failure is printed once and otherwise ignored:
 * the module stays cached in memory. */
static void s_store(pc_modmgr *mm, const s_entry *e)
{
    char tmp_suffix[48];
    snprintf(tmp_suffix, sizeof tmp_suffix, ".tmp.%ld.%u", (long)getpid(), mm->tmp_seq++);
    char *path = s_path(mm, e->hash, ""), *tmp = s_path(mm, e->hash, tmp_suffix);
    int fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) : -1;
    bool ok = path && fd >= 0 && s_write_all(fd, e->bytes, e->len) && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0 && close(fd) && ok) {
        ok = false;
        err = errno;
    }
    if (ok && rename(tmp, path)) {
        ok = false;
        err = errno;
    }
    if (!ok && tmp)
        unlink(tmp);
    if (!ok && !mm->warned) {
        mm->warned = true;
        fprintf(stderr, "levpeer: cannot write the module cache file %s: %s (kept in memory)\n",
                path ? path : mm->dir, strerror(err));
    }
    free(path);
    free(tmp);
}

int pc_modmgr_put(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN], const void *bytes, size_t len)
{
    if (!mm || !hash || !bytes || !len)
        return rt_err(LEV_EINVAL, "pc_modmgr_put: no manager, hash or bytes");
    uint8_t got[PC_HASH_LEN];
    pc_module_hash(bytes, len, got);
    if (memcmp(got, hash, PC_HASH_LEN)) {
        char want_hex[2 * PC_HASH_LEN + 1], got_hex[2 * PC_HASH_LEN + 1];
        pc_module_hash_hex(hash, want_hex);
        pc_module_hash_hex(got, got_hex);
        return rt_err(LEV_EMODULE,
                      "the module's %zu bytes are damaged: they hash to %s, expected %s", len,
                      got_hex, want_hex);
    }
    int rc = 0;
    pthread_mutex_lock(&mm->mu);
    if (mm->max_bytes && len > mm->max_bytes && !s_find(mm, hash)) {
        mm->refused++;
        pthread_mutex_unlock(&mm->mu);
        return rt_err(LEV_ERANGE,
                      "a module of %zu bytes is above this peer's module cache of %zu bytes "
                      "(levpeer --module-cache)",
                      len, mm->max_bytes);
    }
    if (!s_find(mm, hash)) {
        uint8_t *copy = malloc(len);
        s_entry *e = NULL;
        if (copy) {
            memcpy(copy, bytes, len);
            e = s_add(mm, hash, copy, len);
        }
        if (!e)
            rc = rt_err(LEV_ENOMEM, "no memory to cache a module of %zu bytes", len);
        else if (mm->dir)
            s_store(mm, e);
    }
    pthread_mutex_unlock(&mm->mu);
    return rc;
}

/* Reads a whole file of at most S_FILE_MAX bytes into *out (malloc'd).
 * 0, -ENOENT when it does not exist, or LEV_EIO / LEV_ENOMEM. */
static int s_read_file(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ENOENT
                               : rt_err(LEV_EIO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    uint8_t *b = NULL;
    size_t n = 0;
    if (fstat(fd, &st) || st.st_size < 0 || (size_t)st.st_size > S_FILE_MAX) {
        rc = rt_err(LEV_EIO, "cannot read %s: not a readable file of at most 1 GiB", path);
    } else if (!(b = malloc((size_t)st.st_size ? (size_t)st.st_size : 1))) {
        rc = LEV_ENOMEM;
    } else {
        while (n < (size_t)st.st_size) {
            ssize_t r = read(fd, b + n, (size_t)st.st_size - n);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            n += (size_t)r;
        }
    }
    close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    *out = b;
    *len = n;
    return 0;
}

/* Under mm->mu: the entry of `hash`, read from disk if needed. */
static int s_get_locked(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN], s_entry **out)
{
    char hex[2 * PC_HASH_LEN + 1];
    pc_module_hash_hex(hash, hex);
    if ((*out = s_find(mm, hash)) != NULL)
        return 0;
    if (!mm->dir)
        return rt_err(LEV_EMODULE, "module %s is not cached", hex);
    char *path = s_path(mm, hash, "");
    if (!path)
        return LEV_ENOMEM;
    uint8_t *b = NULL;
    size_t len = 0;
    int rc = s_read_file(path, &b, &len);
    if (rc == -ENOENT) {
        rc = rt_err(LEV_EMODULE, "module %s is not cached", hex);
    } else if (rc == 0) {
        uint8_t got[PC_HASH_LEN];
        pc_module_hash(b, len, got);
        if (memcmp(got, hash, PC_HASH_LEN)) {
            unlink(path);
            free(b);
            rc = rt_err(LEV_EMODULE,
                        "the cached file of module %s is damaged (%zu bytes that hash to "
                        "something else); it was removed",
                        hex, len);
        } else if (!(*out = s_add(mm, hash, b, len))) {
            rc = LEV_ENOMEM;
        } else {
            (*out)->used_s = 0; /* its file's time is of its last use: renewed by the get */
        }
    }
    free(path);
    return rc;
}

int pc_modmgr_get(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN], const uint8_t **bytes,
                  size_t *len)
{
    if (!mm || !hash || !bytes || !len)
        return rt_err(LEV_EINVAL, "pc_modmgr_get: NULL argument");
    pthread_mutex_lock(&mm->mu);
    s_entry *e = NULL;
    int rc = s_get_locked(mm, hash, &e);
    if (!rc) {
        *bytes = e->bytes;
        *len = e->len;
        int64_t now = s_now_s();
        if (mm->dir && now - e->used_s >= 60) { /* its file's age says when it was used */
            char *path = s_path(mm, hash, "");
            if (path)
                utimensat(AT_FDCWD, path, NULL, 0);
            free(path);
        }
        e->used_s = now;
    }
    pthread_mutex_unlock(&mm->mu);
    return rc;
}

bool pc_modmgr_has(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN])
{
    const uint8_t *b;
    size_t n;
    return pc_modmgr_get(mm, hash, &b, &n) == 0;
}

/* ===================================================================
 * Eviction
 * =================================================================== */

void pc_modmgr_limit(pc_modmgr *mm, size_t max_bytes, int max_age_s)
{
    if (!mm)
        return;
    pthread_mutex_lock(&mm->mu);
    mm->max_bytes = max_bytes;
    mm->max_age_s = max_age_s > 0 ? max_age_s : 0;
    pthread_mutex_unlock(&mm->mu);
}

/* A cached module, in memory or on disk or both. */
typedef struct s_cand {
    uint8_t hash[PC_HASH_LEN];
    size_t len;
    int64_t used_s;
    s_entry *mem; /* or NULL */
    bool disk;
} s_cand;

/* The hash of a cache file's name ("<64 hex digits>.so"); false if it is
 * not one (temporary files, anything else). */
static bool s_name_hash(const char *name, uint8_t out[PC_HASH_LEN])
{
    size_t hexlen = 2 * PC_HASH_LEN;
    if (strlen(name) != hexlen + 3 || strcmp(name + hexlen, ".so"))
        return false;
    size_t got = 0;
    return sodium_hex2bin(out, PC_HASH_LEN, name, hexlen, NULL, &got, NULL) == 0 &&
           got == PC_HASH_LEN;
}

/* Under mm->mu: every cached module (*out malloc'd; NULL with 0 when
 * there is none, or no memory: nothing is evicted then). */
static size_t s_candidates(pc_modmgr *mm, s_cand **out)
{
    size_t n = 0, cap = 0;
    s_cand *c = NULL;
    for (s_entry *e = mm->list; e; e = e->next) {
        if (RT_VEC_RESERVE(c, cap, n, 1))
            goto fail;
        c[n++] = (s_cand){.len = e->len, .used_s = e->used_s, .mem = e};
        memcpy(c[n - 1].hash, e->hash, PC_HASH_LEN);
    }
    DIR *d = mm->dir ? opendir(mm->dir) : NULL;
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        uint8_t hash[PC_HASH_LEN];
        struct stat st;
        if (!s_name_hash(de->d_name, hash) || fstatat(dirfd(d), de->d_name, &st, 0) ||
            !S_ISREG(st.st_mode))
            continue;
        size_t i = 0;
        while (i < n && memcmp(c[i].hash, hash, PC_HASH_LEN))
            i++;
        if (i == n) {
            if (RT_VEC_RESERVE(c, cap, n, 1)) {
                closedir(d);
                goto fail;
            }
            c[n++] = (s_cand){.len = (size_t)st.st_size, .used_s = (int64_t)st.st_mtime};
            memcpy(c[i].hash, hash, PC_HASH_LEN);
        } else if ((int64_t)st.st_mtime > c[i].used_s) {
            c[i].used_s = (int64_t)st.st_mtime;
        }
        c[i].disk = true;
    }
    if (d)
        closedir(d);
    *out = c;
    return n;
fail:
    free(c);
    *out = NULL;
    return 0;
}

static int s_by_use(const void *a, const void *b)
{
    const s_cand *x = a, *y = b;
    return (x->used_s > y->used_s) - (x->used_s < y->used_s);
}

size_t pc_modmgr_evict(pc_modmgr *mm, const uint8_t (*keep)[PC_HASH_LEN], size_t nkeep)
{
    if (!mm)
        return 0;
    pthread_mutex_lock(&mm->mu);
    s_cand *c = NULL;
    size_t n = s_candidates(mm, &c), total = 0, held = 0, gone = 0;
    for (size_t i = 0; i < n; i++)
        total += c[i].len;
    if (n) /* the least recently used first */
        qsort(c, n, sizeof *c, s_by_use);
    int64_t now = s_now_s();
    for (size_t i = 0; i < n; i++) {
        bool kept = false;
        for (size_t k = 0; k < nkeep && !kept; k++)
            kept = !memcmp(keep[k], c[i].hash, PC_HASH_LEN);
        bool old = mm->max_age_s && now - c[i].used_s > mm->max_age_s;
        if (kept || !(old || (mm->max_bytes && total > mm->max_bytes))) {
            held++;
            continue;
        }
        if (c[i].disk) {
            char *path = s_path(mm, c[i].hash, "");
            if (path)
                unlink(path);
            free(path);
        }
        for (s_entry **pp = &mm->list; c[i].mem && *pp; pp = &(*pp)->next)
            if (*pp == c[i].mem) {
                *pp = c[i].mem->next;
                free(c[i].mem->bytes);
                free(c[i].mem);
                break;
            }
        total -= c[i].len;
        gone++;
    }
    mm->evicted += gone;
    mm->held = held;
    mm->held_bytes = total;
    pthread_mutex_unlock(&mm->mu);
    free(c);
    return gone;
}

void pc_modmgr_status(pc_modmgr *mm, pc_modmgr_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!mm)
        return;
    pthread_mutex_lock(&mm->mu);
    st->held = mm->held;
    st->bytes = mm->held_bytes;
    st->evicted = mm->evicted;
    st->refused = mm->refused;
    st->max_bytes = mm->max_bytes;
    pthread_mutex_unlock(&mm->mu);
}

/* ===================================================================
 * Architecture
 * =================================================================== */

/* Names of the architectures Leverage knows: an ELF machine with its
 * class and byte order. */
typedef struct s_arch {
    uint16_t machine;
    uint8_t elf_class, data;
    const char *name;
} s_arch;

static const s_arch s_archs[] = {
    {EM_X86_64, ELFCLASS64, ELFDATA2LSB, "x86_64"},
    {EM_X86_64, ELFCLASS32, ELFDATA2LSB, "x32"},
    {EM_386, ELFCLASS32, ELFDATA2LSB, "i386"},
    {EM_AARCH64, ELFCLASS64, ELFDATA2LSB, "aarch64"},
    {EM_AARCH64, ELFCLASS64, ELFDATA2MSB, "aarch64_be"},
    {EM_ARM, ELFCLASS32, ELFDATA2LSB, "arm"},
    {EM_ARM, ELFCLASS32, ELFDATA2MSB, "armeb"},
    {EM_RISCV, ELFCLASS64, ELFDATA2LSB, "riscv64"},
    {EM_RISCV, ELFCLASS32, ELFDATA2LSB, "riscv32"},
    {EM_PPC64, ELFCLASS64, ELFDATA2LSB, "ppc64le"},
    {EM_PPC64, ELFCLASS64, ELFDATA2MSB, "ppc64"},
    {EM_S390, ELFCLASS64, ELFDATA2MSB, "s390x"},
    {EM_LOONGARCH, ELFCLASS64, ELFDATA2LSB, "loongarch64"},
    {EM_MIPS, ELFCLASS64, ELFDATA2LSB, "mips64el"},
    {EM_MIPS, ELFCLASS64, ELFDATA2MSB, "mips64"},
};

/* Writes the name of (machine, class, byte order) into out. */
static void s_arch_name(uint16_t machine, uint8_t elf_class, uint8_t data, char out[PC_ARCH_MAX])
{
    for (size_t i = 0; i < sizeof s_archs / sizeof s_archs[0]; i++)
        if (s_archs[i].machine == machine && s_archs[i].elf_class == elf_class &&
            s_archs[i].data == data) {
            snprintf(out, PC_ARCH_MAX, "%s", s_archs[i].name);
            return;
        }
    snprintf(out, PC_ARCH_MAX, "elf-machine-%u-%s-%s", (unsigned)machine,
             elf_class == ELFCLASS64   ? "64bit"
             : elf_class == ELFCLASS32 ? "32bit"
                                       : "badclass",
             data == ELFDATA2LSB   ? "le"
             : data == ELFDATA2MSB ? "be"
                                   : "badorder");
}

/* The ELF machine of the code this file was compiled into. */
static uint16_t s_machine_self(void)
{
    static const uint16_t m =
#if defined(__x86_64__)
        EM_X86_64;
#elif defined(__aarch64__)
        EM_AARCH64;
#elif defined(__i386__)
        EM_386;
#elif defined(__arm__)
        EM_ARM;
#elif defined(__riscv)
        EM_RISCV;
#elif defined(__powerpc64__)
        EM_PPC64;
#elif defined(__s390x__)
        EM_S390;
#elif defined(__loongarch__)
        EM_LOONGARCH;
#elif defined(__mips__)
        EM_MIPS;
#else
        EM_NONE;
#endif
    return m;
}

static char s_self_name[PC_ARCH_MAX];
static pthread_once_t s_self_once = PTHREAD_ONCE_INIT;

static void s_arch_self_init(void)
{
    s_arch_name(s_machine_self(), UINTPTR_MAX > 0xFFFFFFFFu ? ELFCLASS64 : ELFCLASS32,
                __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB, s_self_name);
}

const char *pc_arch_self(void)
{
    pthread_once(&s_self_once, s_arch_self_init);
    return s_self_name;
}

int pc_module_arch(const void *bytes, size_t len, char out[PC_ARCH_MAX])
{
    const uint8_t *b = bytes;
    out[0] = '\0';
    if (!b || len < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG))
        return rt_err(LEV_EMODULE, "the module is not an ELF file (%zu bytes, no ELF magic)", len);
    /* e_machine follows e_ident and e_type (16 + 2 bytes) in either class,
     * in the file's byte order. */
    if (len < EI_NIDENT + 4)
        return rt_err(LEV_EMODULE, "the module is truncated: %zu bytes, no ELF header", len);
    uint8_t data = b[EI_DATA];
    const uint8_t *m = b + EI_NIDENT + 2;
    uint16_t machine =
        data == ELFDATA2MSB ? (uint16_t)(m[0] << 8 | m[1]) : (uint16_t)(m[1] << 8 | m[0]);
    s_arch_name(machine, b[EI_CLASS], data, out);
    return 0;
}

int pc_arch_check(const char *arch)
{
    const char *self = pc_arch_self();
    if (arch && !strcmp(arch, self))
        return 0;
    return rt_err(LEV_EMODULE, "module built for %s, this peer is %s",
                  arch && *arch ? arch : "an unnamed architecture", self);
}

int pc_module_arch_check(const void *bytes, size_t len)
{
    char arch[PC_ARCH_MAX];
    int rc = pc_module_arch(bytes, len, arch);
    return rc ? rc : pc_arch_check(arch);
}
