/* levctl.c - the status tool of a Leverage mesh: asks a levpeer for its
 * status (S_STATUS), then every peer it lists as alive, merges the virtual
 * computers they deploy, and prints a readable report or one JSON
 * document. Holds the small JSON reader and writer the status needs.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "auth.h"
#include "status.h"
#include "tsan_sync.h"
#include "vec.h"
#include "wire.h"

#define LC_DEFAULT_TIMEOUT_MS 3000
#define LC_MAX_DEPTH 64           /* of nested JSON arrays and objects */
#define LC_MAX_STATUS (64u << 20) /* bytes of a status document */
#define LC_PATH 128               /* bytes of a member's path in a fault */
#define LC_WHY 512                /* bytes of a fault */

static const char s_usage[] =
    "usage: levctl status [--peer ENDPOINT] [--json] [--timeout MS]\n"
    "       levctl keygen NAME\n"
    "  Shows the mesh a levpeer belongs to: its peers, and the virtual computers\n"
    "  deployed on every peer that is alive, with their virtual threads.\n"
    "  --peer ENDPOINT  the levpeer to ask (default: $LEV_PEER)\n"
    "  --json           print one merged JSON document instead of a report\n"
    "  --timeout MS     how long to wait for each answer (default: 3000)\n"
    "  keygen NAME writes a new CurveZMQ key pair to NAME.key (mode 0600; it\n"
    "  replaces no file) and its public key to NAME.pub, and prints the latter.\n";

/* ===================================================================
 * JSON values
 * =================================================================== */

typedef enum jt { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ } jt;

typedef struct jv {
    jt t;
    double num;
    char *s;       /* J_STR */
    struct jv **v; /* J_ARR items, J_OBJ values */
    char **k;      /* J_OBJ keys */
    size_t n, cap, capk;
} jv;

/* Frees a value and everything under it; accepts NULL. */
static void s_jfree(jv *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        s_jfree(v->v[i]);
        if (v->k)
            free(v->k[i]);
    }
    free(v->v);
    free(v->k);
    free(v->s);
    free(v);
}

/* Appends item (and key, for objects) to a container; false on no memory. */
static bool s_jadd(jv *c, char *key, jv *item)
{
    if (RT_VEC_RESERVE(c->v, c->cap, c->n, 1) ||
        (c->t == J_OBJ && RT_VEC_RESERVE(c->k, c->capk, c->n, 1)))
        return false;
    if (c->t == J_OBJ)
        c->k[c->n] = key;
    c->v[c->n++] = item;
    return true;
}

/* The member `key` of an object, or NULL. */
static const jv *s_jget(const jv *o, const char *key)
{
    for (size_t i = 0; o && o->t == J_OBJ && i < o->n; i++)
        if (!strcmp(o->k[i], key))
            return o->v[i];
    return NULL;
}

/* ===================================================================
 * JSON reader
 * =================================================================== */

typedef struct jp {
    const char *p, *start, *end;
    const char *err; /* the first fault, with its offset in `at` */
    size_t at;
    int depth;
} jp;

static jv *s_jvalue(jp *p);

/* Records the first fault at the current position; returns NULL. */
static void *s_jerr(jp *p, const char *why)
{
    if (!p->err) {
        p->err = why;
        p->at = (size_t)(p->p - p->start);
    }
    return NULL;
}

static void s_jws(jp *p)
{
    while (p->p < p->end && (*p->p == ' ' || *p->p == '\t' || *p->p == '\n' || *p->p == '\r'))
        p->p++;
}

/* A new value of type t, or NULL (and the fault recorded). */
static jv *s_jnew(jp *p, jt t)
{
    jv *v = calloc(1, sizeof *v);
    if (!v)
        return s_jerr(p, "out of memory");
    v->t = t;
    return v;
}

/* Four hex digits of a \u escape, or -1. */
static long s_hex4(jp *p)
{
    long v = 0;
    for (int i = 0; i < 4; i++, p->p++) {
        if (p->p >= p->end)
            return -1;
        char c = *p->p;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Writes code point cp as UTF-8 at out; returns the bytes written. */
static size_t s_utf8(char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The escape after a backslash, appended at out; bytes written or 0. */
static size_t s_jescape(jp *p, char *out)
{
    if (p->p >= p->end)
        return 0;
    const char *simple = "\"\\/bfnrt", *means = "\"\\/\b\f\n\r\t";
    const char *e = strchr(simple, *p->p);
    if (*p->p && e) {
        p->p++;
        *out = means[e - simple];
        return 1;
    }
    if (*p->p != 'u')
        return 0;
    p->p++;
    long cp = s_hex4(p);
    if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
        if (p->end - p->p < 2 || p->p[0] != '\\' || p->p[1] != 'u')
            return 0;
        p->p += 2;
        long lo = s_hex4(p);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return 0;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return 0;
    }
    if (cp <= 0) /* no NUL inside a C string */
        return 0;
    return s_utf8(out, (unsigned long)cp);
}

/* A string (at its opening quote) as a malloc'd C string, or NULL. */
static char *s_jstring(jp *p)
{
    p->p++;
    const char *q = p->p;
    while (q < p->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= p->end)
        return s_jerr(p, "unterminated string");
    char *out = malloc((size_t)(q - p->p) + 1), *o = out;
    if (!out)
        return s_jerr(p, "out of memory");
    while (*p->p != '"') {
        unsigned char c = (unsigned char)*p->p;
        size_t n = 1;
        if (c < 0x20) {
            free(out);
            return s_jerr(p, "control character inside a string");
        }
        if (c == '\\') {
            p->p++;
            n = s_jescape(p, o);
            if (!n) {
                free(out);
                return s_jerr(p, "bad escape inside a string");
            }
        } else {
            *o = (char)c;
            p->p++;
        }
        o += n;
    }
    p->p++;
    *o = '\0';
    return out;
}

/* A number, checked against JSON's grammar before strtod reads it. */
static jv *s_jnumber(jp *p)
{
    const char *q = p->p;
    if (q < p->end && *q == '-')
        q++;
    if (q >= p->end || *q < '0' || *q > '9')
        return s_jerr(p, "bad number");
    if (*q == '0')
        q++;
    else
        while (q < p->end && *q >= '0' && *q <= '9')
            q++;
    if (q < p->end && *q == '.') {
        if (++q >= p->end || *q < '0' || *q > '9')
            return s_jerr(p, "bad number");
        while (q < p->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < p->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < p->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= p->end || *q < '0' || *q > '9')
            return s_jerr(p, "bad number");
        while (q < p->end && *q >= '0' && *q <= '9')
            q++;
    }
    char buf[64];
    if ((size_t)(q - p->p) >= sizeof buf)
        return s_jerr(p, "number too long");
    memcpy(buf, p->p, (size_t)(q - p->p));
    buf[q - p->p] = '\0';
    jv *v = s_jnew(p, J_NUM);
    if (v)
        v->num = strtod(buf, NULL);
    p->p = q;
    return v;
}

/* An array or object (at its opening bracket). */
static jv *s_jcontainer(jp *p, jt t)
{
    char close = t == J_ARR ? ']' : '}';
    if (++p->depth > LC_MAX_DEPTH)
        return s_jerr(p, "nested too deep");
    jv *c = s_jnew(p, t);
    p->p++;
    s_jws(p);
    if (c && p->p < p->end && *p->p == close) {
        p->p++;
        p->depth--;
        return c;
    }
    while (c) {
        char *key = NULL;
        s_jws(p);
        if (t == J_OBJ) {
            if (p->p >= p->end || *p->p != '"')
                break;
            if (!(key = s_jstring(p)))
                break;
            s_jws(p);
            if (p->p >= p->end || *p->p != ':') {
                free(key);
                s_jerr(p, "expected ':'");
                break;
            }
            p->p++;
        }
        jv *item = s_jvalue(p);
        if (!item || !s_jadd(c, key, item)) {
            free(key);
            s_jfree(item);
            break;
        }
        s_jws(p);
        if (p->p < p->end && *p->p == ',') {
            p->p++;
            continue;
        }
        if (p->p < p->end && *p->p == close) {
            p->p++;
            p->depth--;
            return c;
        }
        break;
    }
    s_jerr(p, t == J_ARR ? "expected ',' or ']'" : "expected a string key, ',' or '}'");
    s_jfree(c);
    return NULL;
}

/* Any value, after optional white space. */
static jv *s_jvalue(jp *p)
{
    s_jws(p);
    if (p->p >= p->end)
        return s_jerr(p, "unexpected end");
    static const struct {
        const char *word;
        jt t;
    } words[] = {{"null", J_NULL}, {"false", J_FALSE}, {"true", J_TRUE}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(p->end - p->p) >= n && !memcmp(p->p, words[i].word, n)) {
            p->p += n;
            return s_jnew(p, words[i].t);
        }
    }
    switch (*p->p) {
    case '{':
        return s_jcontainer(p, J_OBJ);
    case '[':
        return s_jcontainer(p, J_ARR);
    case '"': {
        char *s = s_jstring(p);
        jv *v = s ? s_jnew(p, J_STR) : NULL;
        if (v)
            v->s = s;
        else
            free(s);
        return v;
    }
    default:
        return s_jnumber(p);
    }
}

/* Parses a whole document; NULL with why[] naming the fault and its byte. */
static jv *s_jparse(const char *text, char *why, size_t cap)
{
    jp p = {.p = text, .start = text, .end = text + strlen(text)};
    jv *v = s_jvalue(&p);
    s_jws(&p);
    if (v && p.p != p.end) {
        s_jerr(&p, "text after the document");
        s_jfree(v);
        v = NULL;
    }
    if (!v)
        snprintf(why, cap, "%s at byte %zu", p.err ? p.err : "malformed", p.at);
    return v;
}

/* ===================================================================
 * JSON writer
 * =================================================================== */

/* Writes s as a JSON string literal, escaped as the peers escape theirs
 * (pc_json_str). */
static void s_jwrite_str(FILE *f, const char *s)
{
    pc_wbuf w;
    pc_wbuf_init(&w);
    pc_json_str(&w, s);
    if (!w.err)
        fwrite(w.data, 1, w.len, f);
    else
        fputs("\"\"", f);
    pc_wbuf_free(&w);
}

/* Writes v as JSON, indented by `indent` levels of two spaces. */
static void s_jwrite(FILE *f, const jv *v, int indent)
{
    switch (v->t) {
    case J_NULL:
        fputs("null", f);
        return;
    case J_FALSE:
    case J_TRUE:
        fputs(v->t == J_TRUE ? "true" : "false", f);
        return;
    case J_NUM:
        if (v->num == floor(v->num) && fabs(v->num) < 9e15)
            fprintf(f, "%.0f", v->num);
        else
            fprintf(f, "%.17g", v->num);
        return;
    case J_STR:
        s_jwrite_str(f, v->s);
        return;
    default:
        break;
    }
    fputc(v->t == J_ARR ? '[' : '{', f);
    for (size_t i = 0; i < v->n; i++) {
        fprintf(f, "%s\n%*s", i ? "," : "", 2 * (indent + 1), "");
        if (v->t == J_OBJ) {
            s_jwrite_str(f, v->k[i]);
            fputs(": ", f);
        }
        s_jwrite(f, v->v[i], indent + 1);
    }
    if (v->n)
        fprintf(f, "\n%*s", 2 * indent, "");
    fputc(v->t == J_ARR ? ']' : '}', f);
}

/* ===================================================================
 * The status schema
 * =================================================================== */

/* A member the report reads: its type ('s' string, 'n' number, 'a'
 * array, 'o' object), whether it must be there, and for arrays the type
 * of their elements and for objects (or arrays of them) their members. */
typedef struct field {
    const char *key;
    char type;
    bool required;
    char elem;
    const struct field *sub;
} field;

static const field s_peer_fields[] = {
    {"endpoint", 's', true, 0, NULL},     {"state", 's', true, 0, NULL},
    {"cores", 'n', false, 0, NULL},       {"rate", 'n', false, 0, NULL},
    {"load", 'n', false, 0, NULL},        {"arch", 's', false, 0, NULL},
    {"byte_order", 's', false, 0, NULL},  {"version", 'n', false, 0, NULL},
    {"incarnation", 'n', false, 0, NULL}, {NULL, 0, false, 0, NULL}};
static const field s_vt_fields[] = {
    {"id", 'n', true, 0, NULL},         {"task", 's', false, 0, NULL},
    {"state", 's', false, 0, NULL},     {"host", 's', false, 0, NULL},
    {"epoch", 'n', false, 0, NULL},     {"checkpoint_age_ms", 'n', false, 0, NULL},
    {"holders", 'a', false, 's', NULL}, {"placed", 's', false, 0, NULL},
    {NULL, 0, false, 0, NULL}};
static const field s_load_fields[] = {
    {"worker", 's', true, 0, NULL},    {"cores", 'n', false, 0, NULL},
    {"rate", 'n', false, 0, NULL},     {"vts", 'n', false, 0, NULL},
    {"executor", 'n', false, 0, NULL}, {NULL, 0, false, 0, NULL}};
static const field s_recovery_fields[] = {{"barriers", 'n', false, 0, NULL},
                                          {"last_barrier_ms", 'n', false, 0, NULL},
                                          {"max_barrier_ms", 'n', false, 0, NULL},
                                          {"fixed_positions", 'n', false, 0, NULL},
                                          {NULL, 0, false, 0, NULL}};
static const field s_msgs_fields[] = {{"delivered", 'n', false, 0, NULL},
                                      {"duplicates", 'n', false, 0, NULL},
                                      {"held_back", 'n', false, 0, NULL},
                                      {NULL, 0, false, 0, NULL}};
static const field s_puts_fields[] = {
    {"applied", 'n', false, 0, NULL}, {"stale", 'n', false, 0, NULL}, {NULL, 0, false, 0, NULL}};
static const field s_glob_fields[] = {
    {"name", 's', true, 0, NULL},         {"bytes", 'n', false, 0, NULL},
    {"version", 'n', false, 0, NULL},     {"revision", 'n', false, 0, NULL},
    {"owner", 'n', false, 0, NULL},       {"waiters", 'n', false, 0, NULL},
    {"subscribers", 'n', false, 0, NULL}, {NULL, 0, false, 0, NULL}};
static const field s_reads_fields[] = {{"answered_at_workers", 'n', false, 0, NULL},
                                       {"asked_again", 'n', false, 0, NULL},
                                       {"pushes", 'n', false, 0, NULL},
                                       {"push_bytes", 'n', false, 0, NULL},
                                       {"subscribed", 'n', false, 0, NULL},
                                       {"unsubscribed", 'n', false, 0, NULL},
                                       {NULL, 0, false, 0, NULL}};
static const field s_vc_fields[] = {{"id", 's', true, 0, NULL},
                                    {"client", 's', false, 0, NULL},
                                    {"quota", 'n', false, 0, NULL},
                                    {"checkpoint_ms", 'n', false, 0, NULL},
                                    {"replicas", 'n', false, 0, NULL},
                                    {"workers", 'a', false, 's', NULL},
                                    {"vts", 'a', true, 'o', s_vt_fields},
                                    {"placement", 'a', false, 'o', s_load_fields},
                                    {"recovery", 'o', false, 0, s_recovery_fields},
                                    {"messages", 'o', false, 0, s_msgs_fields},
                                    {"puts", 'o', false, 0, s_puts_fields},
                                    {"global_reads", 'o', false, 0, s_reads_fields},
                                    {"globals", 'a', false, 'o', s_glob_fields},
                                    {NULL, 0, false, 0, NULL}};
static const field s_exec_fields[] = {{"vc", 's', false, 0, NULL},
                                      {"deployer", 's', false, 0, NULL},
                                      {"pid", 'n', false, 0, NULL},
                                      {"vts", 'n', false, 0, NULL},
                                      {NULL, 0, false, 0, NULL}};
static const field s_held_fields[] = {
    {"images", 'n', false, 0, NULL}, {"bytes", 'n', false, 0, NULL}, {NULL, 0, false, 0, NULL}};
static const field s_status_fields[] = {{"peer", 's', true, 0, NULL},
                                        {"version", 'n', false, 0, NULL},
                                        {"peers", 'a', true, 'o', s_peer_fields},
                                        {"vcs", 'a', true, 'o', s_vc_fields},
                                        {"executors", 'a', false, 'o', s_exec_fields},
                                        {"held", 'o', false, 0, s_held_fields},
                                        {NULL, 0, false, 0, NULL}};

static jt s_jtype(char c) { return c == 's' ? J_STR : c == 'n' ? J_NUM : c == 'a' ? J_ARR : J_OBJ; }

static const char *s_tname(char c)
{
    return c == 's' ? "a string" : c == 'n' ? "a number" : c == 'a' ? "an array" : "an object";
}

static bool s_check_obj(const jv *o, const field *fs, const char *path, char *why, size_t cap);

/* Checks value v of type `type` at path (elements and members included). */
static bool s_check_val(const jv *v, char type, char elem, const field *sub, const char *path,
                        char *why, size_t cap)
{
    if (v->t != s_jtype(type)) {
        snprintf(why, cap, "%s is not %s", *path ? path : "the document", s_tname(type));
        return false;
    }
    if (type == 'o')
        return s_check_obj(v, sub, path, why, cap);
    for (size_t i = 0; type == 'a' && i < v->n; i++) {
        char at[LC_PATH];
        snprintf(at, sizeof at, "%s[%zu]", path, i);
        if (!s_check_val(v->v[i], elem, 0, sub, at, why, cap))
            return false;
    }
    return true;
}

/* Checks the members of object o that fields fs name. */
static bool s_check_obj(const jv *o, const field *fs, const char *path, char *why, size_t cap)
{
    for (const field *f = fs; f && f->key; f++) {
        const jv *v = s_jget(o, f->key);
        char at[LC_PATH];
        snprintf(at, sizeof at, "%s%s%s", path, *path ? "." : "", f->key);
        if (!v && f->required) {
            snprintf(why, cap, "%s is missing", at);
            return false;
        }
        if (v && !s_check_val(v, f->type, f->elem, f->sub, at, why, cap))
            return false;
    }
    return true;
}

/* Parses and checks a status document; NULL with why[] saying the fault. */
static jv *s_status_parse(const char *text, char *why, size_t cap)
{
    jv *doc = s_jparse(text, why, cap);
    if (doc && !s_check_val(doc, 'o', 0, s_status_fields, "", why, cap)) {
        s_jfree(doc);
        return NULL;
    }
    return doc;
}

/* ===================================================================
 * Asking peers
 * =================================================================== */

/* One peer asked for its status. */
typedef struct query {
    const char *endpoint;
    void *sock;
    bool done;
    jv *doc;                                 /* its status, checked */
    char err[LC_WHY + PC_ENDPOINT_MAX + 64]; /* why there is none */
} query;

static uint64_t s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* CurveZMQ keys for a mesh that has them: LEV_MESH_KEY (the mesh's
 * public key, or its pair) and LEV_CLIENT_KEY (this client's pair; by
 * default the mesh's pair), as for every client (leverage/client_io.c). */
static pc_keypair s_mesh_key, s_my_key;
static bool s_curve;

/* Reads them; 0, or 2 after saying what is wrong. */
static int s_load_keys(void)
{
    char err[512];
    int rc = pc_client_keys(&s_mesh_key, &s_my_key, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "levctl: %s\n", err);
        return 2;
    }
    s_curve = rc == 1;
    return 0;
}

/* Sends S_STATUS to q's peer over a new DEALER, whose routing id is
 * printable ("levctl:<pid>:<seq>": a peer keeps ids as text); on failure
 * q is done. */
static void s_ask(void *ctx, query *q, uint64_t seq)
{
    int zero = 0;
    int64_t max = LC_MAX_STATUS + 4096;
    char rid[64];
    int n = snprintf(rid, sizeof rid, "levctl:%ld:%llu", (long)getpid(), (unsigned long long)seq);
    q->sock = zmq_socket(ctx, ZMQ_DEALER);
    if (!q->sock || zmq_setsockopt(q->sock, ZMQ_LINGER, &zero, sizeof zero) ||
        zmq_setsockopt(q->sock, ZMQ_ROUTING_ID, rid, (size_t)n) ||
        zmq_setsockopt(q->sock, ZMQ_MAXMSGSIZE, &max, sizeof max) ||
        (s_curve && pc_auth_connect(q->sock, &s_my_key, s_mesh_key.pub))) {
        snprintf(q->err, sizeof q->err, "cannot create a socket: %s", zmq_strerror(errno));
        q->done = true;
        return;
    }
    if (zmq_connect(q->sock, q->endpoint)) {
        snprintf(q->err, sizeof q->err, "malformed endpoint '%s': %s", q->endpoint,
                 zmq_strerror(errno));
        q->done = true;
        return;
    }
    pc_hdr h = pc_hdr_make(PC_S_STATUS, 0, 0, 0, seq);
    uint8_t hb[PC_HDR_LEN];
    pc_hdr_encode(&h, hb);
    LEV_TSAN_SENT();
    zmq_send(q->sock, hb, PC_HDR_LEN, ZMQ_DONTWAIT);
}

/* Reads one message of q's peer: the reply of `seq` completes q (with its
 * document, or why it is malformed); anything else is skipped. */
static void s_read_reply(query *q, uint64_t seq)
{
    zmq_msg_t parts[2];
    int n = 0, more = 1, total = 0;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, q->sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            break;
        }
        LEV_TSAN_RECEIVED();
        more = zmq_msg_more(&m);
        total++;
        if (n < 2) {
            zmq_msg_init(&parts[n]);
            zmq_msg_move(&parts[n++], &m);
        }
        zmq_msg_close(&m);
    }
    pc_hdr h;
    const char *why = NULL;
    char *text = NULL;
    if (n && !pc_hdr_decode(zmq_msg_data(&parts[0]), zmq_msg_size(&parts[0]), &h, &why) &&
        (h.type != PC_S_STATUS_REPLY || h.seq != seq)) {
        why = NULL; /* not the reply: wait on */
    } else if (!why) {
        pc_rbuf r;
        pc_rbuf_init(&r, n == 2 ? zmq_msg_data(&parts[1]) : NULL,
                     n == 2 ? zmq_msg_size(&parts[1]) : 0);
        text = pc_get_strdup(&r, LC_MAX_STATUS);
        if (total != 2 || h.len != r.len)
            why = total != 2 ? "not one payload frame" : "header length differs from its frame";
        else if (!pc_rbuf_done(&r))
            why = r.why ? r.why : "bytes after the document";
        char jwhy[LC_WHY] = "";
        if (!why && !(q->doc = s_status_parse(text, jwhy, sizeof jwhy)))
            snprintf(q->err, sizeof q->err, "malformed status from %s: %s", q->endpoint, jwhy);
        q->done = true;
    }
    if (why) {
        snprintf(q->err, sizeof q->err, "malformed reply from %s: %s", q->endpoint, why);
        q->done = true;
    }
    free(text);
    for (int i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
}

/* Asks every peer of q[n] at once and waits at most timeout_ms for all. */
static void s_ask_all(void *ctx, query *q, size_t n, int timeout_ms)
{
    zmq_pollitem_t *items = calloc(n ? n : 1, sizeof *items);
    for (size_t i = 0; i < n; i++)
        s_ask(ctx, &q[i], i + 1);
    uint64_t deadline = s_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        size_t live = 0;
        for (size_t i = 0; i < n; i++)
            if (!q[i].done && items)
                items[live++] = (zmq_pollitem_t){q[i].sock, 0, ZMQ_POLLIN, 0};
        uint64_t now = s_now_ms();
        if (!live || now >= deadline)
            break;
        if (zmq_poll(items, (int)live, (long)(deadline - now)) < 0 && errno != EINTR)
            break;
        for (size_t i = 0, j = 0; i < n; i++)
            if (!q[i].done && (items[j++].revents & ZMQ_POLLIN))
                s_read_reply(&q[i], i + 1);
    }
    for (size_t i = 0; i < n; i++) {
        if (!q[i].done)
            snprintf(q[i].err, sizeof q[i].err, "no answer from %s within %d ms", q[i].endpoint,
                     timeout_ms);
        if (q[i].sock)
            zmq_close(q[i].sock);
        q[i].sock = NULL;
    }
    free(items);
}

/* ===================================================================
 * Merging
 * =================================================================== */

/* A member of an object as a string, or `dflt`. */
static const char *s_str(const jv *o, const char *key, const char *dflt)
{
    const jv *v = s_jget(o, key);
    return v && v->t == J_STR ? v->s : dflt;
}

/* A member of an object as text for a table: numbers without decimals,
 * "-" when missing. */
static const char *s_num(const jv *o, const char *key, char *buf, size_t cap)
{
    const jv *v = s_jget(o, key);
    if (!v || v->t != J_NUM)
        return "-";
    if (v->num == floor(v->num) && fabs(v->num) < 9e15)
        snprintf(buf, cap, "%.0f", v->num);
    else
        snprintf(buf, cap, "%g", v->num);
    return buf;
}

/* Moves the VCs of `from` into the list of `into`, skipping an id that is
 * there already. */
static void s_merge_vcs(jv *into, jv *from)
{
    jv *dst = (jv *)s_jget(into, "vcs"), *src = (jv *)s_jget(from, "vcs");
    for (size_t i = 0; i < src->n; i++) {
        const char *id = s_str(src->v[i], "id", "");
        bool dup = false;
        for (size_t j = 0; j < dst->n && !dup; j++)
            dup = !strcmp(s_str(dst->v[j], "id", ""), id);
        if (!dup && s_jadd(dst, NULL, src->v[i]))
            src->v[i] = NULL;
    }
}

/* Adds "unanswered": [endpoints] to doc (nothing if none). */
static void s_add_unanswered(jv *doc, query *q, size_t n)
{
    jv *arr = calloc(1, sizeof *arr);
    char *key = strdup("unanswered");
    if (!arr || !key) {
        free(arr);
        free(key);
        return;
    }
    arr->t = J_ARR;
    for (size_t i = 0; i < n; i++) {
        jv *s = calloc(1, sizeof *s);
        if (!q[i].doc && s && (s->s = strdup(q[i].endpoint))) {
            s->t = J_STR;
            if (s_jadd(arr, NULL, s))
                continue;
        }
        if (s)
            free(s->s);
        free(s);
    }
    if (!arr->n || !s_jadd(doc, key, arr)) {
        free(key);
        s_jfree(arr);
    }
}

/* ===================================================================
 * The report
 * =================================================================== */

/* Joins the strings of array a with commas into buf. */
static const char *s_join(const jv *a, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; a && a->t == J_ARR && i < a->n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? "," : "",
                               a->v[i]->t == J_STR ? a->v[i]->s : "?");
    return *buf ? buf : "-";
}

/* The widest value of member `key` over the objects of array a, at least min. */
static int s_width(const jv *a, const char *key, int min)
{
    int w = min;
    for (size_t i = 0; i < a->n; i++) {
        int n = (int)strlen(s_str(a->v[i], key, "-"));
        w = n > w ? n : w;
    }
    return w;
}

static void s_print_peers(const jv *peers)
{
    int w = s_width(peers, "endpoint", 8);
    char b[4][32];
    printf("%-*s  %-7s  %5s  %10s  %5s  %s\n", w, "PEER", "STATE", "CORES", "RATE", "LOAD", "ARCH");
    for (size_t i = 0; i < peers->n; i++) {
        const jv *p = peers->v[i];
        printf("%-*s  %-7s  %5s  %10s  %5s  %s\n", w, s_str(p, "endpoint", "-"),
               s_str(p, "state", "-"), s_num(p, "cores", b[0], 32), s_num(p, "rate", b[1], 32),
               s_num(p, "load", b[2], 32), s_str(p, "arch", "-"));
    }
}

static void s_print_vc(const jv *vc)
{
    char b[6][32], holders[1024];
    printf("\nVC %s  client %s  quota %s  checkpoint %s ms  replicas %s  workers %s\n",
           s_str(vc, "id", "-"), s_str(vc, "client", "-"), s_num(vc, "quota", b[0], 32),
           s_num(vc, "checkpoint_ms", b[1], 32), s_num(vc, "replicas", b[2], 32),
           s_join(s_jget(vc, "workers"), holders, sizeof holders));
    const jv *load = s_jget(vc, "placement");
    if (load && load->n) {
        int ww = s_width(load, "worker", 6);
        printf("  %-*s  %5s  %10s  %4s  %4s\n", ww, "WORKER", "CORES", "RATE", "VTS", "EXEC");
        for (size_t i = 0; i < load->n; i++)
            printf("  %-*s  %5s  %10s  %4s  %4s\n", ww, s_str(load->v[i], "worker", "-"),
                   s_num(load->v[i], "cores", b[0], 32), s_num(load->v[i], "rate", b[1], 32),
                   s_num(load->v[i], "vts", b[2], 32), s_num(load->v[i], "executor", b[3], 32));
    }
    const jv *rec = s_jget(vc, "recovery");
    const char *nb = rec ? s_num(rec, "barriers", b[0], 32) : "0";
    if (strcmp(nb, "0") && *nb != '-')
        printf("  recovery: %s barriers (last %s ms, longest %s ms), %s positions fixed\n", nb,
               s_num(rec, "last_barrier_ms", b[1], 32), s_num(rec, "max_barrier_ms", b[2], 32),
               s_num(rec, "fixed_positions", b[3], 32));
    const jv *msgs = s_jget(vc, "messages"), *puts = s_jget(vc, "puts");
    if (msgs && puts)
        printf("  messages: %s delivered, %s duplicates dropped, %s held under a lock; puts: %s "
               "applied, %s not above the version\n",
               s_num(msgs, "delivered", b[0], 32), s_num(msgs, "duplicates", b[1], 32),
               s_num(msgs, "held_back", b[2], 32), s_num(puts, "applied", b[3], 32),
               s_num(puts, "stale", b[4], 32));
    const jv *globs = s_jget(vc, "globals");
    if (globs && globs->n) {
        size_t locked = 0;
        double waiting = 0;
        for (size_t i = 0; i < globs->n; i++) {
            const jv *o = s_jget(globs->v[i], "owner"), *w = s_jget(globs->v[i], "waiters");
            locked += o && o->t == J_NUM && o->num != 0;
            waiting += w && w->t == J_NUM ? w->num : 0;
        }
        printf("  global variables: %zu, %zu locked, %.0f requests waiting (each in --json)\n",
               globs->n, locked, waiting);
    }
    const jv *rd = s_jget(vc, "global_reads");
    if (rd && (strcmp(s_num(rd, "answered_at_workers", b[0], 32), "0") ||
               strcmp(s_num(rd, "pushes", b[1], 32), "0")))
        printf("  global reads: %s answered at the workers (%s asked again); %s changes pushed "
               "(%s bytes whole) to %s subscriptions, %s dropped\n",
               s_num(rd, "answered_at_workers", b[0], 32), s_num(rd, "asked_again", b[1], 32),
               s_num(rd, "pushes", b[2], 32), s_num(rd, "push_bytes", b[3], 32),
               s_num(rd, "subscribed", b[4], 32), s_num(rd, "unsubscribed", b[5], 32));
    const jv *vts = s_jget(vc, "vts");
    if (!vts->n) {
        printf("  no virtual threads\n");
        return;
    }
    int wt = s_width(vts, "task", 4), wh = s_width(vts, "host", 4);
    int wp = s_width(vts, "placed", 6);
    printf("  %-6s  %-*s  %-10s  %-*s  %-*s  %5s  %9s  %s\n", "VT", wt, "TASK", "STATE", wh, "HOST",
           wp, "PLACED", "EPOCH", "CKPT AGE", "HOLDERS");
    for (size_t i = 0; i < vts->n; i++) {
        const jv *vt = vts->v[i];
        char age[40];
        const char *a = s_num(vt, "checkpoint_age_ms", b[3], 32);
        if (*a == '-') /* missing, or -1: no image acknowledged yet */
            snprintf(age, sizeof age, "%s", a[1] ? "none" : "-");
        else
            snprintf(age, sizeof age, "%s ms", a);
        const char *placed = s_str(vt, "placed", "-");
        printf("  %-6s  %-*s  %-10s  %-*s  %-*s  %5s  %9s  %s\n", s_num(vt, "id", b[4], 32), wt,
               s_str(vt, "task", "-"), s_str(vt, "state", "-"), wh, s_str(vt, "host", "-"), wp,
               *placed ? placed : "-", s_num(vt, "epoch", b[5], 32), age,
               s_join(s_jget(vt, "holders"), holders, sizeof holders));
    }
}

/* Prints the merged status as a report. */
static void s_print_report(const jv *doc, const query *q, size_t n)
{
    char b[4][32];
    printf("status of %s (protocol version %s)\n\n", s_str(doc, "peer", "-"),
           s_num(doc, "version", b[0], 32));
    s_print_peers(s_jget(doc, "peers"));
    const jv *vcs = s_jget(doc, "vcs");
    if (!vcs->n)
        printf("\nno virtual computers\n");
    for (size_t i = 0; i < vcs->n; i++)
        s_print_vc(vcs->v[i]);
    const jv *ex = s_jget(doc, "executors"), *held = s_jget(doc, "held");
    for (size_t i = 0; ex && i < ex->n; i++) {
        printf("%sexecutor of VC %s (deployer %s): pid %s, %s VTs\n", i ? "" : "\n",
               s_str(ex->v[i], "vc", "-"), s_str(ex->v[i], "deployer", "-"),
               s_num(ex->v[i], "pid", b[1], 32), s_num(ex->v[i], "vts", b[2], 32));
        const jv *d = s_jget(ex->v[i], "direct");
        if (d && d->t == J_OBJ)
            printf("  direct messages: %s frames sent, %s received, %s dropped; %s sends "
                   "waited for their receiver\n",
                   s_num(d, "sent", b[0], 32), s_num(d, "received", b[1], 32),
                   s_num(d, "dropped", b[2], 32), s_num(d, "send_waits", b[3], 32));
    }
    if (held)
        printf("\nheld images: %s (%s bytes)\n", s_num(held, "images", b[1], 32),
               s_num(held, "bytes", b[2], 32));
    for (size_t i = 0; i < n; i++)
        if (!q[i].doc)
            printf("\nnot shown: the VCs of %s (%s)\n", q[i].endpoint, q[i].err);
}

/* ===================================================================
 * main
 * =================================================================== */

/* Prints the usage on stderr and returns 2. */
static int s_bad_usage(const char *why)
{
    if (why)
        fprintf(stderr, "levctl: %s\n", why);
    fputs(s_usage, stderr);
    return 2;
}

/* levctl status: asks `peer`, then the alive peers it lists, and prints. */
static int s_status(const char *peer, bool json, int timeout_ms)
{
    void *ctx = zmq_ctx_new();
    if (!ctx) {
        fprintf(stderr, "levctl: cannot create a ZeroMQ context: %s\n", zmq_strerror(errno));
        return 1;
    }
    query first = {.endpoint = peer};
    s_ask_all(ctx, &first, 1, timeout_ms);
    if (!first.doc) {
        fprintf(stderr, "levctl: %s\n", first.err);
        zmq_ctx_term(ctx);
        return 1;
    }
    const jv *peers = s_jget(first.doc, "peers");
    const char *self = s_str(first.doc, "peer", "");
    query *q = calloc(peers->n ? peers->n : 1, sizeof *q);
    size_t n = 0;
    for (size_t i = 0; q && i < peers->n; i++) {
        const char *ep = s_str(peers->v[i], "endpoint", "");
        if (strcmp(s_str(peers->v[i], "state", ""), "alive") || !strcmp(ep, self) ||
            !strcmp(ep, peer))
            continue;
        q[n++].endpoint = ep;
    }
    s_ask_all(ctx, q, n, timeout_ms);
    for (size_t i = 0; i < n; i++) {
        if (q[i].doc)
            s_merge_vcs(first.doc, q[i].doc);
        else
            fprintf(stderr, "levctl: %s (its VCs are not shown)\n", q[i].err);
    }
    if (json) {
        s_add_unanswered(first.doc, q, n);
        s_jwrite(stdout, first.doc, 0);
        fputc('\n', stdout);
    } else {
        s_print_report(first.doc, q, n);
    }
    for (size_t i = 0; i < n; i++)
        s_jfree(q[i].doc);
    free(q);
    s_jfree(first.doc);
    zmq_ctx_term(ctx);
    return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return s_bad_usage("no command given");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(s_usage, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "keygen")) {
        if (argc != 3 || !*argv[2])
            return s_bad_usage("keygen takes one NAME");
        pc_keypair k;
        char err[512];
        if (pc_key_generate(&k)) {
            fprintf(stderr, "levctl: this libzmq has no CurveZMQ\n");
            return 1;
        }
        if (pc_key_write(argv[2], &k, err, sizeof err)) {
            fprintf(stderr, "levctl: %s\n", err);
            return 1;
        }
        printf("%s.key: key pair (keep it secret)\n%s.pub: public key %s\n", argv[2], argv[2],
               k.pub);
        return fflush(stdout) ? 1 : 0;
    }
    if (strcmp(argv[1], "status")) {
        char why[128];
        snprintf(why, sizeof why, "unknown command '%.80s'", argv[1]);
        return s_bad_usage(why);
    }
    const char *peer = getenv("LEV_PEER");
    bool json = false;
    int timeout_ms = LC_DEFAULT_TIMEOUT_MS;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--peer") || !strcmp(a, "--timeout")) {
            if (i + 1 >= argc) {
                char why[64];
                snprintf(why, sizeof why, "%s needs a value", a);
                return s_bad_usage(why);
            }
            const char *val = argv[++i];
            if (!strcmp(a, "--peer")) {
                peer = val;
                continue;
            }
            char *end;
            errno = 0;
            long ms = strtol(val, &end, 10);
            if (errno || *end || ms <= 0 || ms > INT_MAX) {
                char why[128];
                snprintf(why, sizeof why, "--timeout '%.40s' is not a positive number of ms", val);
                return s_bad_usage(why);
            }
            timeout_ms = (int)ms;
        } else {
            char why[128];
            snprintf(why, sizeof why, "unknown argument '%.80s'", a);
            return s_bad_usage(why);
        }
    }
    if (!peer || !*peer)
        return s_bad_usage("no peer given (--peer or LEV_PEER)");
    int krc = s_load_keys();
    if (krc)
        return krc;
    return s_status(peer, json, timeout_ms);
}
