/* auth.c - keys and the admission of peers and clients (auth.h): key
 * files read and written, the set of authorised keys, and the ZAP
 * handler, answered from the peer's loop, that admits a CurveZMQ
 * connection only when its key is in the set and logs each refused
 * address once.
 */
#include "auth.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "lev_errors.h"
#include "log.h"
#include "tsan_sync.h"
#include "vec.h"

#define S_ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define S_REFUSED_LOGGED 256 /* addresses whose refusal was logged */

struct pc_auth {
    void *zap;
    uint8_t (*keys)[32];
    size_t nkeys, capkeys;
    char logged[S_REFUSED_LOGGED][64];
    size_t nlogged;
    uint64_t refused;
};

static int s_err(char *err, size_t cap, int rc, const char *fmt, const char *a, int line,
                 const char *why)
{
    if (err && cap)
        snprintf(err, cap, fmt, a, line, why);
    return rc;
}

int pc_key_generate(pc_keypair *k)
{
    memset(k, 0, sizeof *k);
    if (!zmq_has("curve") || zmq_curve_keypair(k->pub, k->sec))
        return LEV_EUNSUPPORTED;
    return 0;
}

/* Whether s is 40 characters of Z85 that decode to 32 bytes. */
static bool s_z85_ok(const char *s, uint8_t out[32])
{
    uint8_t tmp[32];
    return strlen(s) == PC_KEY_Z85 && zmq_z85_decode(out ? out : tmp, s) != NULL;
}

int pc_key_write(const char *base, const pc_keypair *k, char *err, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.key", base);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return s_err(err, cap, LEV_EIO, "%s: cannot create it%.0d: %s", path, 0,
                     errno == EEXIST ? "a file is there already (not replaced)" : strerror(errno));
    char text[256];
    int n = snprintf(text, sizeof text,
                     "# Leverage CurveZMQ key pair: keep this file secret\n"
                     "public-key = %s\nsecret-key = %s\n",
                     k->pub, k->sec);
    bool ok = write(fd, text, (size_t)n) == n;
    ok = !close(fd) && ok;
    if (!ok)
        return s_err(err, cap, LEV_EIO, "%s: cannot write it%.0d: %s", path, 0, strerror(errno));
    snprintf(path, sizeof path, "%s.pub", base);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "# Leverage public key\npublic-key = %s\n", k->pub) < 0 || fclose(f))
        return s_err(err, cap, LEV_EIO, "%s: cannot write it%.0d: %s", path, 0, strerror(errno));
    return 0;
}

/* Reads the key lines of path: each "public-key = K", "secret-key = K"
 * or (keys_only) a bare K; calls take(ctx, which, K) for each ('p', 's').
 * 0, or an error naming the line. */
static int s_read_lines(const char *path, bool bare_ok, int (*take)(void *, char, const char *),
                        void *ctx, char *err, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return s_err(err, cap, LEV_EIO, "%s%.0d: cannot read it: %s", path, 0, strerror(errno));
    char line[512];
    int ln = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        ln++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        p[strcspn(p, "\r\n")] = 0;
        if (!*p || *p == '#')
            continue;
        char which = 0, *val = p;
        if (!strncmp(p, "public-key", 10) || !strncmp(p, "secret-key", 10)) {
            which = p[0] == 'p' ? 'p' : 's';
            val = p + 10;
            while (*val == ' ' || *val == '\t')
                val++;
            if (*val++ != '=') {
                rc = s_err(err, cap, LEV_EINVAL, "%s:%d: %s", path, ln, "'=' expected");
                break;
            }
            while (*val == ' ' || *val == '\t')
                val++;
        } else if (bare_ok) {
            which = 'p';
        } else {
            rc = s_err(err, cap, LEV_EINVAL, "%s:%d: %s", path, ln,
                       "not a public-key or secret-key line");
            break;
        }
        size_t l = strlen(val);
        while (l && (val[l - 1] == ' ' || val[l - 1] == '\t'))
            val[--l] = 0;
        if (!s_z85_ok(val, NULL)) {
            rc = s_err(err, cap, LEV_EINVAL, "%s:%d: %s", path, ln,
                       "not a key (40 characters of Z85)");
            break;
        }
        rc = take(ctx, which, val);
        if (rc)
            s_err(err, cap, rc, "%s:%d: %s", path, ln, "a second key of that kind");
    }
    fclose(f);
    return rc;
}

static int s_take_pair(void *ctx, char which, const char *key)
{
    pc_keypair *k = ctx;
    char *slot = which == 'p' ? k->pub : k->sec;
    if (*slot)
        return LEV_EINVAL;
    memcpy(slot, key, PC_KEY_Z85 + 1);
    return 0;
}

int pc_key_read(const char *path, pc_keypair *k, char *err, size_t cap)
{
    memset(k, 0, sizeof *k);
    int rc = s_read_lines(path, false, s_take_pair, k, err, cap);
    if (!rc && !k->pub[0])
        rc = s_err(err, cap, LEV_EINVAL, "%s%.0d: %s", path, 0, "no public-key line");
    if (!rc && k->sec[0]) { /* the pair must match */
        char derived[PC_KEY_Z85 + 1];
        if (zmq_curve_public(derived, k->sec) || strcmp(derived, k->pub))
            rc = s_err(err, cap, LEV_EINVAL, "%s%.0d: %s", path, 0,
                       "its public key is not that of its secret key");
    }
    if (rc)
        memset(k, 0, sizeof *k);
    return rc;
}

static int s_take_auth(void *ctx, char which, const char *key)
{
    pc_auth *a = ctx;
    if (which != 'p')
        return 0; /* a pair's secret in an authorised file: only its public half counts */
    if (RT_VEC_RESERVE(a->keys, a->capkeys, a->nkeys, 1))
        return LEV_ENOMEM;
    zmq_z85_decode(a->keys[a->nkeys++], key);
    return 0;
}

static int s_load_authorized(pc_auth *a, const char *path, char *err, size_t cap)
{
    struct stat st;
    if (stat(path, &st))
        return s_err(err, cap, LEV_EIO, "%s%.0d: %s", path, 0, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return s_read_lines(path, true, s_take_auth, a, err, cap);
    DIR *d = opendir(path);
    if (!d)
        return s_err(err, cap, LEV_EIO, "%s%.0d: %s", path, 0, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".pub"))
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        rc = s_read_lines(p, true, s_take_auth, a, err, cap);
    }
    closedir(d);
    return rc;
}

int pc_auth_new(pc_auth **out, void *zctx, const pc_keypair *own, const char *authorized, char *err,
                size_t cap)
{
    *out = NULL;
    pc_auth *a = calloc(1, sizeof *a);
    if (!a)
        return LEV_ENOMEM;
    int rc = own ? s_take_auth(a, 'p', own->pub) : 0;
    if (!rc && authorized && *authorized)
        rc = s_load_authorized(a, authorized, err, cap);
    if (!rc && zctx) {
        a->zap = zmq_socket(zctx, ZMQ_REP);
        int zero = 0;
        if (!a->zap || zmq_setsockopt(a->zap, ZMQ_LINGER, &zero, sizeof zero) ||
            zmq_bind(a->zap, S_ZAP_ENDPOINT))
            rc = s_err(err, cap, LEV_EPEER, "%s%.0d: %s", S_ZAP_ENDPOINT, 0, zmq_strerror(errno));
    }
    if (rc) {
        pc_auth_destroy(&a);
        return rc;
    }
    *out = a;
    return 0;
}

void pc_auth_destroy(pc_auth **a_p)
{
    pc_auth *a = a_p ? *a_p : NULL;
    if (!a)
        return;
    if (a->zap)
        zmq_close(a->zap);
    free(a->keys);
    free(a);
    *a_p = NULL;
}

void *pc_auth_socket(pc_auth *a) { return a ? a->zap : NULL; }

bool pc_auth_allowed(const pc_auth *a, const uint8_t key[32])
{
    for (size_t i = 0; a && i < a->nkeys; i++)
        if (!memcmp(a->keys[i], key, 32))
            return true;
    return false;
}

size_t pc_auth_count(const pc_auth *a) { return a ? a->nkeys : 0; }

uint64_t pc_auth_refused(const pc_auth *a) { return a ? a->refused : 0; }

/* Logs a refused address once (the first S_REFUSED_LOGGED of them). */
static void s_refuse_log(pc_auth *a, const char *address, const char *why)
{
    for (size_t i = 0; i < a->nlogged; i++)
        if (!strcmp(a->logged[i], address))
            return;
    if (a->nlogged < S_REFUSED_LOGGED)
        snprintf(a->logged[a->nlogged++], sizeof a->logged[0], "%s", address);
    pc_log(PC_LOG_WARN, "refused a connection from %s: %s (logged once per address)", address, why);
}

/* One ZAP request, frames read whole; its reply sent. */
static void s_zap_one(pc_auth *a)
{
    zmq_msg_t f[8];
    int n = 0, more = 1;
    while (more && n < 8) {
        zmq_msg_init(&f[n]);
        if (zmq_msg_recv(&f[n], a->zap, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&f[n]);
            break;
        }
        LEV_TSAN_RECEIVED();
        more = zmq_msg_more(&f[n]);
        n++;
    }
    while (more) { /* a request longer than ZAP's: the rest is dropped */
        zmq_msg_t x;
        zmq_msg_init(&x);
        if (zmq_msg_recv(&x, a->zap, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&x);
            break;
        }
        more = zmq_msg_more(&x);
        zmq_msg_close(&x);
    }
    if (n < 2) {
        for (int i = 0; i < n; i++)
            zmq_msg_close(&f[i]);
        return;
    }
    /* version, request id, domain, address, routing id, mechanism, key */
    char address[64] = "?", mech[16] = "";
    if (n > 3)
        snprintf(address, sizeof address, "%.*s", (int)zmq_msg_size(&f[3]),
                 (const char *)zmq_msg_data(&f[3]));
    if (n > 5)
        snprintf(mech, sizeof mech, "%.*s", (int)zmq_msg_size(&f[5]),
                 (const char *)zmq_msg_data(&f[5]));
    bool ok = n == 7 && zmq_msg_size(&f[0]) == 3 && !memcmp(zmq_msg_data(&f[0]), "1.0", 3) &&
              !strcmp(mech, "CURVE") && zmq_msg_size(&f[6]) == 32 &&
              pc_auth_allowed(a, zmq_msg_data(&f[6]));
    if (!ok) {
        a->refused++;
        s_refuse_log(a, address,
                     strcmp(mech, "CURVE") ? "not CurveZMQ (a peer or client without keys)"
                                           : "its key is not authorised");
    }
    const char *code = ok ? "200" : "400";
    const char *text = ok ? "OK" : "not authorised";
    LEV_TSAN_SENT();
    zmq_send(a->zap, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(a->zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), ZMQ_SNDMORE);
    zmq_send(a->zap, code, 3, ZMQ_SNDMORE);
    zmq_send(a->zap, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(a->zap, "", 0, ZMQ_SNDMORE); /* user id */
    zmq_send(a->zap, "", 0, 0);           /* metadata */
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
}

void pc_auth_on_zap(pc_auth *a)
{
    for (int i = 0; a && a->zap && i < 64; i++) {
        int ev = 0;
        size_t l = sizeof ev;
        if (zmq_getsockopt(a->zap, ZMQ_EVENTS, &ev, &l) || !(ev & ZMQ_POLLIN))
            return;
        s_zap_one(a);
    }
}

int pc_client_keys(pc_keypair *mesh, pc_keypair *mine, char *err, size_t cap)
{
    const char *m = getenv("LEV_MESH_KEY"), *c = getenv("LEV_CLIENT_KEY");
    char why[448];
    if ((!m || !*m) && (!c || !*c))
        return 0;
    if (!m || !*m)
        return s_err(err, cap, LEV_EINVAL, "%s%.0d: %s", "LEV_CLIENT_KEY", 0,
                     "is set but not LEV_MESH_KEY (the mesh's key)");
    if (pc_key_read(m, mesh, why, sizeof why))
        return s_err(err, cap, LEV_EINVAL, "%s%.0d: %s", "LEV_MESH_KEY", 0, why);
    if (c && *c) {
        if (pc_key_read(c, mine, why, sizeof why))
            return s_err(err, cap, LEV_EINVAL, "%s%.0d: %s", "LEV_CLIENT_KEY", 0, why);
    } else {
        *mine = *mesh;
    }
    if (!mine->sec[0])
        return s_err(err, cap, LEV_EINVAL, "%s%.0d: %s", c && *c ? c : m, 0,
                     "a public key only: the client's key pair (NAME.key) is needed, in "
                     "LEV_CLIENT_KEY");
    return 1;
}

int pc_key_derive_links(const pc_keypair *mesh, pc_keypair *out)
{
    uint8_t sec[32], seed[crypto_box_SEEDBYTES], pk[crypto_box_PUBLICKEYBYTES],
        sk[crypto_box_SECRETKEYBYTES];
    static const char purpose[] = "leverage executor links v1";
    memset(out, 0, sizeof *out);
    if (!mesh->sec[0] || !zmq_z85_decode(sec, mesh->sec))
        return LEV_EINVAL;
    crypto_generichash(seed, sizeof seed, (const uint8_t *)purpose, sizeof purpose - 1, sec,
                       sizeof sec);
    crypto_box_seed_keypair(pk, sk, seed);
    zmq_z85_encode(out->pub, pk, sizeof pk);
    zmq_z85_encode(out->sec, sk, sizeof sk);
    sodium_memzero(sec, sizeof sec);
    sodium_memzero(seed, sizeof seed);
    sodium_memzero(sk, sizeof sk);
    return 0;
}

int pc_auth_serve(void *sock, const pc_keypair *own)
{
    int one = 1;
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, own->sec, PC_KEY_Z85) ||
        zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "leverage", 8))
        return LEV_EINVAL;
    return 0;
}

int pc_auth_connect(void *sock, const pc_keypair *mine, const char *server)
{
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server, PC_KEY_Z85) ||
        zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, mine->pub, PC_KEY_Z85) ||
        zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, mine->sec, PC_KEY_Z85))
        return LEV_EINVAL;
    return 0;
}
