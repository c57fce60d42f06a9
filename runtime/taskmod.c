/* taskmod.c - task modules as files: the module a program carries (an
 * ELF note in its image: the module's bytes, or its path), and the loader
 * that turns a module's bytes into registered, runnable tasks (memfd or
 * private temporary file, dlopen, checks, publication).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GC_THREADS
#include <gc/gc.h>

#include "module.h"
#include "rt.h"
#include "taskmod.h"

#include "lev_task.h"

/* ===================================================================
 * Digest
 * =================================================================== */

uint64_t rt_taskmod_digest(const void *bytes, size_t len)
{
    const unsigned char *b = bytes;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h ? h : 1;
}

/* ===================================================================
 * The carried module: an ELF note of the program
 * =================================================================== */

typedef struct s_note_find {
    const uint8_t *desc;
    size_t len;
    uint32_t type;
} s_note_find;

/* Looks through one PT_NOTE segment for the first Leverage note; true if
 * found. Notes that overrun the segment end the walk. */
static bool s_note_scan(const uint8_t *p, size_t n, size_t align, s_note_find *f)
{
    const size_t owner_len = sizeof LEV_NOTE_OWNER; /* with its NUL */
    size_t off = 0;
    while (n - off >= sizeof(ElfW(Nhdr))) {
        ElfW(Nhdr) h;
        memcpy(&h, p + off, sizeof h);
        size_t name_at = off + sizeof h;
        size_t name_pad = ((size_t)h.n_namesz + align - 1) & ~(align - 1);
        size_t desc_pad = ((size_t)h.n_descsz + align - 1) & ~(align - 1);
        if (name_pad > n - name_at || desc_pad > n - name_at - name_pad)
            return false;
        size_t desc_at = name_at + name_pad;
        if (h.n_namesz == owner_len && memcmp(p + name_at, LEV_NOTE_OWNER, owner_len) == 0 &&
            (h.n_type == LEV_NOTE_TASK_MODULE || h.n_type == LEV_NOTE_TASK_MODULE_PATH)) {
            f->desc = p + desc_at;
            f->len = h.n_descsz;
            f->type = h.n_type;
            return true;
        }
        off = desc_at + desc_pad;
    }
    return false;
}

/* dl_iterate_phdr callback: stops at the first object carrying a note
 * (the main program comes first). */
static int s_note_object(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    s_note_find *f = ud;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        if (s_note_scan(p, ph->p_memsz, ph->p_align == 8 ? 8 : 4, f))
            return 1;
    }
    return 0;
}

/* Reads a whole file into a malloc'd buffer. 0, LEV_EMODULE (missing),
 * LEV_EIO or LEV_ENOMEM. */
static int s_read_file(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return rt_err(errno == ENOENT ? LEV_EMODULE : LEV_EIO, "cannot open the task module %s: %s",
                      path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return rt_err(LEV_EIO, "the task module %s is not a regular file", path);
    }
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return rt_err(LEV_ENOMEM, "no memory for the %zu bytes of the task module %s", n, path);
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : 0;
            close(fd);
            free(buf);
            return rt_err(LEV_EIO, "cannot read the task module %s: %s", path,
                          e ? strerror(e) : "file shrank while read");
        }
        got += (size_t)r;
    }
    close(fd);
    *out = buf;
    *len = n;
    return 0;
}

/* Serialises loading, and guards the carried module and the loaded list. */
static pthread_mutex_t s_load_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_taskmod_carried s_carried;
static bool s_carried_found;

/* rt_taskmod_carried_get with s_load_lock held. */
static int s_carried_get_locked(const rt_taskmod_carried **out)
{
    if (s_carried_found) {
        *out = &s_carried;
        return 0;
    }
    s_note_find f = {0};
    if (!dl_iterate_phdr(s_note_object, &f))
        return rt_err(LEV_EMODULE,
                      "this program carries no task module "
                      "(build it with leverage_add_tasks, or see LEV_TASK_MODULE_EMBED)");
    rt_taskmod_carried c = {0};
    if (f.type == LEV_NOTE_TASK_MODULE) {
        if (!f.len)
            return rt_err(LEV_EMODULE, "the program's embedded task module is empty");
        c.bytes = f.desc;
        c.len = f.len;
    } else {
        if (!f.len || memchr(f.desc, '\0', f.len) != f.desc + f.len - 1)
            return rt_err(LEV_EMODULE, "the program's task module note holds no path");
        char *path = strdup((const char *)f.desc);
        if (!path)
            return rt_err(LEV_ENOMEM, "no memory for the task module's path");
        uint8_t *buf = NULL;
        int rc = s_read_file(path, &buf, &c.len);
        if (rc == 0 && !c.len)
            rc = rt_err(LEV_EMODULE, "the task module %s is empty", path);
        if (rc) {
            free(buf);
            free(path);
            return rc;
        }
        c.bytes = buf;
        c.path = path;
    }
    c.digest = rt_taskmod_digest(c.bytes, c.len);
    s_carried = c;
    s_carried_found = true;
    *out = &s_carried;
    return 0;
}

int rt_taskmod_carried_get(const rt_taskmod_carried **out)
{
    if (!out)
        return rt_err(LEV_EINVAL, "rt_taskmod_carried_get: NULL argument");
    pthread_mutex_lock(&s_load_lock);
    int rc = s_carried_get_locked(out);
    pthread_mutex_unlock(&s_load_lock);
    return rc;
}

/* ===================================================================
 * Checks before dlopen
 * =================================================================== */

#if defined(__x86_64__)
#define S_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define S_MACHINE EM_AARCH64
#elif defined(__i386__)
#define S_MACHINE EM_386
#elif defined(__arm__)
#define S_MACHINE EM_ARM
#elif defined(__riscv)
#define S_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define S_MACHINE EM_PPC64
#elif defined(__s390x__)
#define S_MACHINE EM_S390
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define S_ELFDATA ELFDATA2LSB
#else
#define S_ELFDATA ELFDATA2MSB
#endif

#if UINTPTR_MAX > 0xFFFFFFFFu
#define S_ELFCLASS ELFCLASS64
#else
#define S_ELFCLASS ELFCLASS32
#endif

/* True if [off, off + n) lies within len bytes. */
static bool s_within(uint64_t off, uint64_t n, size_t len) { return off <= len && n <= len - off; }

/* Checks that bytes are a whole shared object for this machine, so that
 * the dynamic loader never maps a segment past their end (which would
 * crash at the first touch). 0 or LEV_EMODULE naming the problem. */
static int s_check_elf(const uint8_t *b, size_t len)
{
    ElfW(Ehdr) eh;
    if (len < EI_NIDENT || memcmp(b, ELFMAG, SELFMAG) != 0)
        return rt_err(LEV_EMODULE, "the task module is not an ELF file (%zu bytes, no ELF magic)",
                      len);
    if (len < sizeof eh)
        return rt_err(LEV_EMODULE,
                      "the task module is truncated: %zu bytes, shorter than an "
                      "ELF header",
                      len);
    memcpy(&eh, b, sizeof eh);
    if (eh.e_ident[EI_CLASS] != S_ELFCLASS || eh.e_ident[EI_DATA] != S_ELFDATA)
        return rt_err(LEV_EMODULE, "the task module is an ELF file of another word size or "
                                   "byte order than this machine's");
#ifdef S_MACHINE
    if (eh.e_machine != S_MACHINE)
        return rt_err(LEV_EMODULE,
                      "the task module is for another machine (ELF machine %u, "
                      "this one is %u)",
                      (unsigned)eh.e_machine, (unsigned)S_MACHINE);
#endif
    if (eh.e_type != ET_DYN)
        return rt_err(LEV_EMODULE, "the task module is not a shared object (ELF type %u)",
                      (unsigned)eh.e_type);
    if (eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0 ||
        !s_within(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr)), len))
        return rt_err(LEV_EMODULE,
                      "the task module is damaged or truncated: its program "
                      "headers lie outside its %zu bytes",
                      len);
    if (eh.e_shoff && (eh.e_shentsize != sizeof(ElfW(Shdr)) ||
                       !s_within(eh.e_shoff, (uint64_t)eh.e_shnum * eh.e_shentsize, len)))
        return rt_err(LEV_EMODULE,
                      "the task module is damaged or truncated: its section "
                      "headers lie outside its %zu bytes",
                      len);
    bool load = false, dynamic = false;
    for (ElfW(Half) i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        memcpy(&ph, b + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC)
            continue;
        if (!s_within(ph.p_offset, ph.p_filesz, len) || ph.p_filesz > ph.p_memsz)
            return rt_err(LEV_EMODULE,
                          "the task module is damaged or truncated: segment %u "
                          "(bytes %llu..%llu) lies outside its %zu bytes",
                          (unsigned)i, (unsigned long long)ph.p_offset,
                          (unsigned long long)ph.p_offset + ph.p_filesz, len);
        load |= ph.p_type == PT_LOAD;
        dynamic |= ph.p_type == PT_DYNAMIC;
    }
    if (!load || !dynamic)
        return rt_err(LEV_EMODULE, "the task module is not a shared object (no %s segment)",
                      load ? "dynamic" : "loadable");
    return 0;
}

/* 0 if a module that this process loads binds the runtime's entry points
 * (registration, and what task code calls: lev_return, lev_report...) to
 * the runtime running this code; LEV_EUNSUPPORTED if one would bind to
 * another copy, or to none (a static libleverage in a program that does
 * not export its symbols). Naming them here also links them into such a
 * program, so that an exporting one has them all. */
static int s_check_runtime_visible(void)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } entries[] = {
        {"lev_module_register", (void (*)(void))lev_module_register},
        {"lev_return", (void (*)(void))lev_return},
        {"lev_report", (void (*)(void))lev_report},
        {"lev_self", (void (*)(void))lev_self},
        {"lev_checkpoint", (void (*)(void))lev_checkpoint},
        {"lev_yield", (void (*)(void))lev_yield},
        {"lev_safepoint", (void (*)(void))lev_safepoint},
        {"lev_send", (void (*)(void))lev_send},
        {"lev_recv", (void (*)(void))lev_recv},
        {"lev_global_lock", (void (*)(void))lev_global_lock},
        {"lev_global_unlock", (void (*)(void))lev_global_unlock},
        {"lev_global_read", (void (*)(void))lev_global_read},
        {"lev_global_put", (void (*)(void))lev_global_put},
        {"lev_send_try", (void (*)(void))lev_send_try},
        {"lev_recv_try", (void (*)(void))lev_recv_try},
        {"lev_global_lock_try", (void (*)(void))lev_global_lock_try},
        {"lev_global_read_try", (void (*)(void))lev_global_read_try},
    };
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        void *seen = dlsym(RTLD_DEFAULT, entries[i].name), *mine;
        memcpy(&mine, &entries[i].fn, sizeof mine);
        if (seen == mine)
            continue;
        return rt_err(LEV_EUNSUPPORTED,
                      "a task module loaded here would not reach this program's Leverage runtime "
                      "(%s %s): link the program with libleverage.so, or export its symbols "
                      "(-rdynamic; CMake ENABLE_EXPORTS)",
                      seen ? "another copy of" : "the program does not export", entries[i].name);
    }
    return 0;
}

/* ===================================================================
 * Loading
 * =================================================================== */

/* A module loaded from a file: the bytes it came from (by digest), the
 * dlopen handle that keeps it (NULL when an equal module was registered
 * already), and the memfd whose /proc/self/fd name it was opened by (kept
 * open so that the name stays unique while loaded; -1 if none). */
typedef struct s_loaded {
    uint64_t digest;
    size_t len;
    void *handle;
    int fd;
    const lev_module *mod;
    struct s_loaded *next;
} s_loaded;

static s_loaded *s_loaded_list;
static bool s_use_tmpfile;

void rt_taskmod_use_tmpfile(bool on)
{
    pthread_mutex_lock(&s_load_lock);
    s_use_tmpfile = on;
    pthread_mutex_unlock(&s_load_lock);
}

/* Writes all n bytes to fd. 0 or errno. */
static int s_write_all(int fd, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* dlopen of a module file, with the GC's wrapper (no collection while the
 * loader holds its lock); a failure's message goes to err. */
static void *s_dlopen(const char *path, char *err, size_t errlen)
{
    dlerror();
    void *h = GC_dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s", e ? e : "dlopen failed");
    }
    return h;
}

/* dlclose without a collection running meanwhile: the collector walks the
 * loaded objects under the dynamic loader's lock, which dlclose holds. */
static void s_dlclose(void *h)
{
    GC_disable();
    dlclose(h);
    GC_enable();
}

/* Opens bytes as a shared object through the memfd mfd, named by
 * /proc/self/fd; on success the fd stays open (its name stays unique while
 * the object is loaded) and goes to *fd, else it is closed. */
static void *s_dlopen_memfd(int mfd, const uint8_t *b, size_t len, int *fd, int *rc, char *err,
                            size_t errlen)
{
    int e = s_write_all(mfd, b, len);
    if (e) {
        close(mfd);
        *rc = LEV_EIO;
        snprintf(err, errlen, "cannot write the module to a memfd: %s", strerror(e));
        return NULL;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    void *h = s_dlopen(path, err, errlen);
    if (h)
        *fd = mfd;
    else
        close(mfd);
    return h;
}

/* Opens bytes as a shared object through a private temporary file in
 * TMPDIR (else /tmp), unlinked as soon as it is open or refused. */
static void *s_dlopen_tmpfile(const uint8_t *b, size_t len, int *rc, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char tpl[4096];
    int n = snprintf(tpl, sizeof tpl, "%s/lev-task-module-XXXXXX.so", dir);
    if (n < 0 || (size_t)n >= sizeof tpl) {
        *rc = LEV_EIO;
        snprintf(err, errlen, "TMPDIR is too long");
        return NULL;
    }
    int tfd = mkostemps(tpl, 3, O_CLOEXEC);
    if (tfd < 0) {
        *rc = LEV_EIO;
        snprintf(err, errlen, "cannot create a temporary file in %.256s: %s", dir, strerror(errno));
        return NULL;
    }
    int e = s_write_all(tfd, b, len);
    close(tfd);
    if (e) {
        unlink(tpl);
        *rc = LEV_EIO;
        snprintf(err, errlen, "cannot write the module to %.256s: %s", tpl, strerror(e));
        return NULL;
    }
    void *h = s_dlopen(tpl, err, errlen);
    unlink(tpl);
    return h;
}

/* Opens bytes as a shared object through a memfd (its fd, kept open, in
 * *fd) or, where there is no memfd or no /proc, a temporary file. The
 * handle, or NULL with the reason in err and *rc LEV_EIO (the bytes could
 * not be stored) or LEV_EMODULE (the loader refused them). */
static void *s_dlopen_bytes(const uint8_t *b, size_t len, int *fd, int *rc, char *err,
                            size_t errlen)
{
    *fd = -1;
    *rc = LEV_EMODULE;
    int mfd = s_use_tmpfile ? -1 : memfd_create("lev-task-module", MFD_CLOEXEC);
    if (mfd >= 0 && access("/proc/self/fd", X_OK) == 0)
        return s_dlopen_memfd(mfd, b, len, fd, rc, err, errlen);
    if (mfd >= 0)
        close(mfd);
    return s_dlopen_tmpfile(b, len, rc, err, errlen);
}

/* The registered module whose descriptor lies in the object of handle h
 * (an object that was loaded before, whose constructors do not run
 * again), or NULL. */
static const lev_module *s_module_in(void *h)
{
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
        return NULL;
    const lev_module *v[64];
    uint32_t n = rt_module_list(v, 64);
    for (uint32_t i = 0; i < n && i < 64; i++) {
        Dl_info info;
        struct link_map *owner = NULL;
        if (dladdr1(v[i]->desc, &info, (void **)&owner, RTLD_DL_LINKMAP) && owner == lm)
            return v[i];
    }
    return NULL;
}

/* 0 if a module of hash `got` is what was asked for (`want`, 0: any), else
 * LEV_EMODULE naming both. */
static int s_hash_check(uint64_t got, uint64_t want)
{
    if (!want || got == want)
        return 0;
    return rt_err(LEV_EMODULE, "the task module has hash %016llx, expected %016llx",
                  (unsigned long long)got, (unsigned long long)want);
}

/* Loads the module file (path, or else bytes) whose bytes have digest d,
 * with s_load_lock held; on failure closes what it opened. */
static int s_load_locked(const char *path, const uint8_t *b, size_t len, uint64_t d, uint64_t hash,
                         const lev_module **out)
{
    int rc = s_check_elf(b, len);
    if (rc)
        return rc;
    rc = s_check_runtime_visible();
    if (rc)
        return rc;
    s_loaded *e = calloc(1, sizeof *e);
    if (!e)
        return rt_err(LEV_ENOMEM, "no memory to load a task module");
    e->fd = -1;

    char err[512] = "";
    rt_module_hold hold;
    rt_module_hold_begin(&hold);
    void *h = path ? s_dlopen(path, err, sizeof err)
                   : s_dlopen_bytes(b, len, &e->fd, &rc, err, sizeof err);
    rt_module_hold_end(&hold);
    const lev_module *m = NULL;
    if (!h) {
        rc = rt_err(path ? LEV_EMODULE : rc, "cannot load the task module: %s", err);
        goto fail;
    }
    if (hold.nheld > 1) {
        rc = rt_err(LEV_EMODULE,
                    "the shared object registers %u Leverage modules; a task module "
                    "registers one",
                    hold.nheld);
        goto fail;
    }
    if (hold.nheld == 0) {
        /* Loaded before (by path, outside the loader), or no module at all. */
        m = s_module_in(h);
        if (!m) {
            rc = rt_err(LEV_EMODULE, "the shared object registers no Leverage task module%s%s",
                        hold.err ? ": its registration failed: " : "",
                        hold.err ? hold.detail : " (is it levpp output?)");
            goto fail;
        }
        if ((rc = s_hash_check(lev_module_hash(m), hash)))
            goto fail;
    } else {
        if ((rc = s_hash_check(hold.held->hash, hash)))
            goto fail;
        lev_module *fresh = hold.held;
        hold.held = NULL;
        if (!rt_module_publish(fresh, &m)) {
            /* The same module is registered already: keep that one. */
            s_dlclose(h);
            h = NULL;
            if (e->fd >= 0)
                close(e->fd);
            e->fd = -1;
        }
    }
    e->digest = d;
    e->len = len;
    e->handle = h;
    e->mod = m;
    e->next = s_loaded_list;
    s_loaded_list = e;
    *out = m;
    return 0;
fail:
    /* Modules held from this load are freed before their code goes. */
    rt_module_discard(hold.held);
    if (h)
        s_dlclose(h);
    if (e->fd >= 0)
        close(e->fd);
    free(e);
    return rc;
}

/* rt_taskmod_load with s_load_lock held; path, if not NULL, names the file
 * that holds these bytes, to be loaded by that name. */
static int s_load(const char *path, const uint8_t *b, size_t len, uint64_t digest, uint64_t hash,
                  const lev_module **out)
{
    uint64_t d = rt_taskmod_digest(b, len);
    if (digest && d != digest)
        return rt_err(LEV_EMODULE,
                      "the task module is damaged: its %zu bytes have digest "
                      "%016llx, expected %016llx",
                      len, (unsigned long long)d, (unsigned long long)digest);
    for (s_loaded *e = s_loaded_list; e; e = e->next)
        if (e->digest == d && e->len == len) {
            int rc = s_hash_check(lev_module_hash(e->mod), hash);
            if (rc == 0)
                *out = e->mod;
            return rc;
        }
    if (hash) {
        const lev_module *m = rt_module_by_hash(hash);
        if (m) {
            *out = m;
            return 0;
        }
    }
    return s_load_locked(path, b, len, d, hash, out);
}

int rt_taskmod_load(const void *bytes, size_t len, uint64_t digest, uint64_t hash,
                    const lev_module **out)
{
    if (!bytes || !len || !out)
        return rt_err(LEV_EINVAL, "rt_taskmod_load: no bytes or no result pointer");
    rt_init();
    pthread_mutex_lock(&s_load_lock);
    int rc = s_load(NULL, bytes, len, digest, hash, out);
    pthread_mutex_unlock(&s_load_lock);
    return rc;
}

int rt_taskmod_load_carried(const lev_module **out)
{
    if (!out)
        return rt_err(LEV_EINVAL, "rt_taskmod_load_carried: NULL argument");
    rt_init();
    pthread_mutex_lock(&s_load_lock);
    const rt_taskmod_carried *c = NULL;
    int rc = s_carried_get_locked(&c);
    if (rc == 0)
        rc = s_load(c->path, c->bytes, c->len, c->digest, 0, out);
    pthread_mutex_unlock(&s_load_lock);
    return rc;
}

int lev_task_module_load(uint64_t *hash)
{
    const lev_module *m = NULL;
    int rc = rt_taskmod_load_carried(&m);
    if (rc == 0 && hash)
        *hash = lev_module_hash(m);
    return rc;
}
