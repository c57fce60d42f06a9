/* rtmain.c - the runner of whole-program mode: runs `main` of a --main-task
 * program as one virtual thread on an executor, keeps its newest image in a
 * checkpoint file, and resumes a program from such a file in a new process.
 *
 * argv and the environment go into the VT heap: one array of char *
 * (argv[0..argc-1], NULL, the environment strings, NULL) and one byte
 * object per string, so an image carries them and a resumed process gets
 * the same argv and environment back. A resumed process's standard
 * streams are put where the image's stood (rt_stdstreams_resume: stdin at
 * the offset the program had consumed, stdout's file cut back).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor.h"
#include "heap.h"
#include "image.h"
#include "lev_task.h"
#include "module.h"
#include "rt.h"
#include "streams.h"
#include "vt.h"

extern char **environ;

#define S_EXIT_RUNTIME 2 /* exit status when the runtime cannot go on */
#define S_DEFAULT_CK_MS 1000

typedef struct s_ckfile {
    const char *path;
    char *tmp;   /* path + ".tmp" */
    char *dir;   /* directory holding path, synced after the rename */
    bool warned; /* one message per run for write errors */
} s_ckfile;

/* ===================================================================
 * Checkpoint file
 * =================================================================== */

static int s_write_all(int fd, const uint8_t *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Writes the image to the checkpoint file (tmp, fsync, rename). */
static int s_ckfile_write(s_ckfile *ck, const uint8_t *img, size_t len, const char **what)
{
    *what = "open";
    int fd = open(ck->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    *what = "write";
    if (s_write_all(fd, img, len) || (*what = "fsync", fsync(fd))) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *what = "close";
    if (close(fd))
        return -1;
    *what = "rename";
    if (rename(ck->tmp, ck->path))
        return -1;
    int dfd = open(ck->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd); /* best effort: the rename is durable once this returns */
        close(dfd);
    }
    return 0;
}

static void s_on_image(rt_vt *vt, uint8_t *img, size_t len, void *ud)
{
    (void)vt;
    s_ckfile *ck = ud;
    const char *what = "";
    if (s_ckfile_write(ck, img, len, &what) && !ck->warned) {
        ck->warned = true;
        fprintf(stderr, "lev: cannot write checkpoint %s: %s %s: %s\n", ck->path, what, ck->tmp,
                strerror(errno));
    }
    free(img);
}

static int s_ckfile_init(s_ckfile *ck, const char *path)
{
    size_t n = strlen(path);
    ck->path = path;
    ck->tmp = malloc(n + 5);
    ck->dir = malloc(n + 2);
    if (!ck->tmp || !ck->dir)
        return LEV_ENOMEM;
    memcpy(ck->tmp, path, n);
    memcpy(ck->tmp + n, ".tmp", 5);
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(ck->dir, ".");
    } else if (slash == path) {
        strcpy(ck->dir, "/");
    } else {
        memcpy(ck->dir, path, (size_t)(slash - path));
        ck->dir[slash - path] = '\0';
    }
    return 0;
}

/* ===================================================================
 * Starting and resuming
 * =================================================================== */

/* Copies argv and the environment into the VT heap (see the top). */
static int s_copy_args(const lev_module *m, lev_main_frame *mf, int argc, char **argv)
{
    size_t nenv = 0;
    while (environ && environ[nenv])
        nenv++;
    char **av = lev_alloc(m, LEV_T_PTR, (size_t)argc + nenv + 2);
    if (!av)
        return rt_err(LEV_ENOMEM, "cannot copy the arguments");
    mf->argc = argc;
    mf->argv = av; /* reachable from the frame from now on */
    for (int i = 0; i < argc; i++)
        if (!(av[i] = lev_strdup(m, argv[i] ? argv[i] : "")))
            return rt_err(LEV_ENOMEM, "cannot copy argument %d", i);
    for (size_t j = 0; j < nenv; j++)
        if (!(av[(size_t)argc + 1 + j] = lev_strdup(m, environ[j])))
            return rt_err(LEV_ENOMEM, "cannot copy the environment");
    return 0;
}

/* Whether fn is a --main-task main of m. */
static int s_check_main(const lev_module *m, uint32_t fn)
{
    if (!m)
        return rt_err(LEV_EINVAL, "no module");
    if (fn >= m->desc->nfns)
        return rt_err(LEV_EINVAL, "function id %u is not in module %s", fn, m->desc->name);
    const lev_fn_desc *fd = &m->desc->fns[fn];
    const rt_type *t = rt_module_type(m, fd->frame_type);
    if (!(fd->flags & LEV_FN_MAIN) || !fd->entry || !fd->frame_type || !t ||
        t->size < sizeof(lev_main_frame))
        return rt_err(LEV_EINVAL, "function %s is not a main task entry", fd->name);
    return 0;
}

static int s_start(const lev_module *m, uint32_t fn, int argc, char **argv, rt_vt **out)
{
    rt_vt *vt;
    void *frame;
    int rc = rt_vt_alloc(m, fn, &vt, &frame);
    if (rc)
        return rc;
    rc = s_copy_args(m, frame, argc, argv);
    if (rc) {
        rt_vt_destroy(&vt);
        return rc;
    }
    *out = vt;
    return 0;
}

/* Reads a whole file into a malloc'd buffer. */
static int s_read_file(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return rt_err(LEV_EIO, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return rt_err(LEV_EIO, "not a regular file");
    }
    if ((uint64_t)st.st_size > UINT32_MAX) {
        fclose(f);
        return rt_err(LEV_EIMAGE, "file of %lld bytes is larger than any image",
                      (long long)st.st_size);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *p = malloc(n ? n : 1);
    if (!p) {
        fclose(f);
        return LEV_ENOMEM;
    }
    size_t got = n ? fread(p, 1, n, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (err || got != n) {
        free(p);
        return rt_err(LEV_EIO, "read %zu of %zu bytes", got, n);
    }
    *buf = p;
    *len = n;
    return 0;
}

/* The string at p if it is a NUL-terminated heap byte string, else NULL. */
static const char *s_heap_str(const lev_module *m, const char *p)
{
    rt_objhdr *h = p ? rt_heap_find(p) : NULL;
    if (!h)
        return NULL;
    size_t size = rt_heap_obj_size(m, h);
    size_t off = (size_t)(p - (const char *)rt_obj_data(h));
    if (off >= size || !memchr(p, '\0', size - off))
        return NULL;
    return p;
}

/* Replaces this process's environment with the one recorded after argv. */
static void s_restore_env(const lev_module *m, lev_main_frame *mf)
{
    rt_objhdr *h = mf->argv ? rt_heap_find(mf->argv) : NULL;
    if (!h || mf->argc < 0 || RT_OBJ_TYPE(h) != LEV_T_PTR || h->count < (uint32_t)mf->argc + 2)
        return; /* an image without a recorded environment */
    clearenv();
    for (size_t i = (size_t)mf->argc + 1; i < h->count && mf->argv[i]; i++) {
        const char *s = s_heap_str(m, mf->argv[i]);
        const char *eq = s ? strchr(s, '=') : NULL;
        char *name = eq && eq > s ? strndup(s, (size_t)(eq - s)) : NULL;
        if (name)
            setenv(name, eq + 1, 1);
        free(name);
    }
}

static int s_resume(const lev_module *m, uint32_t fn, const char *path, rt_vt **out)
{
    uint8_t *img = NULL;
    size_t len = 0;
    int rc = s_read_file(path, &img, &len);
    if (rc)
        return rc;
    rt_image_info info;
    rc = rt_image_info_get(img, len, &info);
    if (!rc && info.module_hash != lev_module_hash(m))
        rc = rt_err(LEV_EMODULE, "the image is of module %016llx, this program is %s %016llx",
                    (unsigned long long)info.module_hash, m->desc->name,
                    (unsigned long long)lev_module_hash(m));
    rt_vt *vt = NULL;
    if (!rc)
        rc = rt_restore(m, img, len, &vt);
    free(img);
    if (rc || !vt)
        return rc ? rc : LEV_EFAILED;
    uint32_t entry = vt->entry;
    if (entry != fn) {
        rt_vt_destroy(&vt);
        return rt_err(LEV_EMODULE, "the image runs function id %u, not main (%u)", entry, fn);
    }
    *out = vt;
    return 0;
}

/* ===================================================================
 * The runner
 * =================================================================== */

static int s_fail(const char *prog, const char *what, const char *file, int rc)
{
    const char *detail = lev_errdetail();
    fprintf(stderr, "%s: %s%s%s: %s%s%s%s\n", prog, what, file ? " " : "", file ? file : "",
            lev_strerror(rc), *detail ? " (" : "", detail, *detail ? ")" : "");
    return S_EXIT_RUNTIME;
}

int lev_main_run(const lev_module_desc *desc, uint32_t fn, int argc, char **argv)
{
    const char *prog = argc > 0 && argv && argv[0] ? argv[0] : "lev";
    s_ckfile ck = {0};
    char *ck_copy = NULL, *resume_copy = NULL;
    rt_vt *vt = NULL;
    rt_exec *ex = NULL;
    rt_init();
    rt_err_clear();
    lev_module *m = NULL;
    int rc = desc ? lev_module_register(desc, &m) : rt_err(LEV_EINVAL, "no module");
    if (!rc)
        rc = m ? s_check_main(m, fn) : LEV_EINVAL;
    if (rc)
        return s_fail(prog, "cannot start", NULL, rc);

    /* The runtime's own settings come from this process, before a resumed
     * program gets its recorded environment back. */
    const char *ck_path = getenv("LEV_CHECKPOINT_FILE");
    const char *ck_ms_s = getenv("LEV_CHECKPOINT_MS");
    const char *resume = getenv("LEV_RESUME");
    long ck_ms = S_DEFAULT_CK_MS;
    if (ck_ms_s && *ck_ms_s) {
        char *end;
        errno = 0;
        ck_ms = strtol(ck_ms_s, &end, 10);
        if (errno || *end || ck_ms <= 0 || ck_ms > INT_MAX)
            return s_fail(prog, "bad LEV_CHECKPOINT_MS", ck_ms_s,
                          rt_err(LEV_EINVAL, "a positive number of milliseconds"));
    }
    ck_copy = ck_path && *ck_path ? strdup(ck_path) : NULL;
    resume_copy = resume && *resume ? strdup(resume) : NULL;
    if ((ck_path && *ck_path && !ck_copy) || (resume && *resume && !resume_copy) ||
        (ck_copy && s_ckfile_init(&ck, ck_copy))) {
        rc = s_fail(prog, "cannot start", NULL, LEV_ENOMEM);
        goto out;
    }
    rt_torture_every(); /* LEV_TORTURE is read once: from this process */

    if (resume_copy) {
        rc = s_resume(m, fn, resume_copy, &vt);
        if (rc) {
            rc = s_fail(prog, "cannot resume from", resume_copy, rc);
            goto out;
        }
        s_restore_env(m, rt_vt_bottom(vt));
        rc = rt_stdstreams_resume();
        if (rc) {
            rc = s_fail(prog, "cannot resume from", resume_copy, rc);
            goto out;
        }
    } else {
        rc = s_start(m, fn, argc, argv, &vt);
        if (rc) {
            rc = s_fail(prog, "cannot start", NULL, rc);
            goto out;
        }
    }

    if (!vt) { /* cannot happen: both paths set vt or fail */
        rc = s_fail(prog, "cannot start", NULL, LEV_EFAILED);
        goto out;
    }
    rt_exec_opts o = {.workers = 1};
    if (ck_copy) {
        o.checkpoint_ms = (int)ck_ms;
        o.on_image = s_on_image;
        o.ud = &ck;
    }
    rc = rt_exec_new(&ex, &o);
    if (!rc)
        rc = rt_exec_spawn(ex, vt);
    if (!rc)
        rc = rt_exec_wait(ex, vt, -1);
    if (rc) {
        rc = s_fail(prog, "cannot run", NULL, rc);
    } else if (vt->state != RT_VT_DONE) {
        rt_err(vt->err, "%s", vt->errdetail ? vt->errdetail : "");
        rc = s_fail(prog, "main failed", NULL, vt->err ? vt->err : LEV_EFAILED);
    } else {
        /* main stores its return value in its own frame; the bottom frame
         * stays in place when the VT ends. */
        rc = ((lev_main_frame *)rt_vt_bottom(vt))->ret;
    }
out:
    rt_exec_destroy(&ex);
    rt_vt_destroy(&vt);
    free(ck.tmp);
    free(ck.dir);
    free(ck_copy);
    free(resume_copy);
    return rc;
}
