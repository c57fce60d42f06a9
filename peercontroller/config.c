/* config.c - levpeer's flags and config file (config.h): one table of
 * settings serves both, so the file can say whatever a flag can.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lev_errors.h"
#include "log.h"
#include "wire.h"

enum {
    K_STR,
    K_PATH,
    K_INT,
    K_SIZE,
    K_HEX,
    K_JOIN,
    K_LEVEL,
    K_MESSAGES,
    K_READS,
    K_FLAG,
    K_CONFIG
};

typedef struct s_key {
    const char *name;
    int kind;
    size_t off; /* into pc_config */
    long min, max;
    const char *help;
} s_key;

#define OFF(f) offsetof(pc_config, f)
static const s_key s_keys[] = {
    {"listen", K_STR, OFF(listen), 0, 0, "tcp://HOST:PORT to listen on (port 0: any free port)"},
    {"advertise", K_STR, OFF(advertise), 0, 0, "endpoint other peers reach this one at"},
    {"join", K_JOIN, 0, 0, 0, "tcp://HOST:PORT of a peer of the mesh (repeatable)"},
    {"cores", K_INT, OFF(peer.cores), -1, 4096,
     "cores offered (0: the CPUs of its affinity its CPU quota allows; -1: none)"},
    {"rate", K_INT, OFF(peer.rate), 0, 1L << 30,
     "processing rate per core (0: measured at start, scaled by the CPU quota)"},
    {"data-dir", K_PATH, OFF(data_dir), 0, 0, "directory for the module cache"},
    {"executor-program", K_PATH, OFF(exec_prog), 0, 0,
     "program run as `PROG --executor --fd N` (default: this levpeer)"},
    {"period-ms", K_INT, OFF(peer.members.period_ms), 10, 60000, "failure detector period"},
    {"probe-timeout-ms", K_INT, OFF(peer.members.probe_timeout_ms), 1, 60000,
     "wait for a probe's answer before indirect probes"},
    {"suspect-ms", K_INT, OFF(peer.members.suspect_ms), 10, 600000,
     "a suspected peer is declared dead after (default 3500; a crashed process, whose port "
     "refuses, at once)"},
    {"suspect-max-ms", K_INT, OFF(peer.members.suspect_max_ms), 10, 3600000,
     "a suspicion no other peer confirms lasts (default: suspect-ms)"},
    {"health-max", K_INT, OFF(peer.members.health_max), -1, 64,
     "local health: probes slow down up to this many times (default 8; -1: off)"},
    {"mesh", K_HEX, OFF(peer.members.mesh_id), 0, 0,
     "the mesh's id, 1 to 16 hex digits (default: the seed's, or drawn)"},
    {"max-msg", K_SIZE, OFF(peer.max_msg), 4096, 1L << 32, "largest message accepted, in bytes"},
    {"max-vts", K_INT, OFF(peer.limits.vts), 1, 1L << 24,
     "VTs one VC may start, per VC this peer deploys (default 65536)"},
    {"max-vt-memory", K_SIZE, OFF(peer.limits.vt_memory), 4096, 1L << 40,
     "bytes of one VT's state (its checkpoint image; K, M, G suffixes; default 1G)"},
    {"max-value", K_SIZE, OFF(peer.limits.value), 1, 1L << 20,
     "bytes of one global variable's value (default and most 1M)"},
    {"module-cache", K_SIZE, OFF(peer.limits.module_cache), 1L << 20, 1L << 42,
     "bytes of task modules kept, on disk and in memory (default 1G)"},
    {"module-cache-age", K_INT, OFF(peer.limits.module_age_s), 1, 1L << 30,
     "seconds an unused module stays cached (default 2592000: 30 days)"},
    {"crash-limit", K_INT, OFF(peer.crash_limit), 1, 1000, "executor crashes before a VT fails"},
    {"client-timeout-ms", K_INT, OFF(peer.client_timeout_ms), 100, 86400000,
     "a silent client's VCs are closed after"},
    {"log-level", K_LEVEL, OFF(log_level), 0, 0, "debug, info, warn or error"},
    {"messages", K_MESSAGES, OFF(peer.direct), 0, 0,
     "relay (default) or direct: how the VCs it deploys carry their VTs' messages"},
    {"key", K_PATH, OFF(key), 0, 0,
     "the mesh's key pair (levctl keygen NAME: NAME.key): CurveZMQ on every connection, "
     "peers and clients admitted by key (default: $LEV_KEY; none: no authentication)"},
    {"authorized-keys", K_PATH, OFF(authorized), 0, 0,
     "with --key, the public keys admitted besides the mesh's: a file of keys or a directory "
     "of .pub files (default: $LEV_AUTHORIZED_KEYS)"},
    {"insecure", K_FLAG, OFF(insecure), 0, 0,
     "run without keys: no authentication, no encryption, and anyone who reaches the port "
     "runs code here (also $LEV_INSECURE=1; a flag, or `insecure = 1` in a config file)"},
    {"reads", K_READS, OFF(peer.reads_deployer), 0, 0,
     "near (default) or deployer: where the VCs it deploys answer their VTs' global reads"},
    {"config", K_CONFIG, 0, 0, 0, "read settings from FILE (name = value per line)"},
};

void pc_config_usage(void *fp)
{
    FILE *f = fp;
    fprintf(f, "usage: levpeer [--listen tcp://HOST:PORT] [--join tcp://HOST:PORT]... "
               "[--cores N] [--data-dir DIR] [options]\n"
               "       levpeer --executor --fd N   (started by levpeer itself)\n\n");
    for (size_t i = 0; i < sizeof s_keys / sizeof *s_keys; i++)
        fprintf(f, "  --%-18s %s\n", s_keys[i].name, s_keys[i].help);
    fprintf(f, "  --%-18s %s\n", "help", "this text");
}

static int s_bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "levpeer: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return LEV_EINVAL;
}

static int s_read_file(pc_config *c, const char *path, int depth);

/* Applies one setting; `src` names where it came from, for messages. */
static int s_set(pc_config *c, const char *name, const char *val, int depth)
{
    const s_key *k = NULL;
    for (size_t i = 0; i < sizeof s_keys / sizeof *s_keys; i++)
        if (!strcmp(s_keys[i].name, name))
            k = &s_keys[i];
    if (!k)
        return s_bad("unknown setting '%s'%s (see --help)", name, "");
    if (!val)
        return s_bad("--%s needs a value%s", name, "");
    char *base = (char *)c;
    switch (k->kind) {
    case K_STR:
    case K_PATH: {
        size_t cap = k->kind == K_PATH ? sizeof c->data_dir : PC_ENDPOINT_MAX;
        if (strlen(val) >= cap)
            return s_bad("--%s: '%s' is too long", name, val);
        if (k->kind == K_STR && !pc_endpoint_valid(val))
            return s_bad("--%s: '%s' is not tcp://HOST:PORT", name, val);
        strcpy(base + k->off, val);
        return 0;
    }
    case K_JOIN:
        if (c->peer.njoin >= PC_JOIN_MAX)
            return s_bad("at most 16 --join seeds%s%s", "", "");
        if (!pc_endpoint_valid(val))
            return s_bad("--join: '%s' is not tcp://HOST:PORT%s", val, "");
        snprintf(c->join[c->peer.njoin], PC_ENDPOINT_MAX, "%s", val);
        c->peer.join[c->peer.njoin] = c->join[c->peer.njoin];
        c->peer.njoin++;
        return 0;
    case K_INT:
    case K_SIZE: {
        char *end;
        errno = 0;
        long long v = strtoll(val, &end, 10);
        if (!errno && end != val && k->kind == K_SIZE && *end) { /* K, M, G (KiB, MiB, GiB) */
            int sh = strchr("kK", *end)   ? 10
                     : strchr("mM", *end) ? 20
                     : strchr("gG", *end) ? 30
                                          : 0;
            if (sh && (!end[1] || !strcmp(end + 1, "iB")) && v >= 0 && v <= (LLONG_MAX >> sh))
                v <<= sh, end = "";
        }
        if (errno || end == val || *end)
            return s_bad("--%s: '%s' is not a number", name, val);
        if (v < k->min || v > k->max)
            return s_bad("--%s: %s is out of range", name, val);
        if (k->kind == K_INT)
            *(int *)(base + k->off) = (int)v;
        else
            *(size_t *)(base + k->off) = (size_t)v;
        return 0;
    }
    case K_HEX: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(val, &end, 16);
        if (errno || !isxdigit((unsigned char)val[0]) || *end || !v || strlen(val) > 18)
            return s_bad("--%s: '%s' is not a mesh id (1 to 16 hex digits, not 0)", name, val);
        *(uint64_t *)(base + k->off) = (uint64_t)v;
        return 0;
    }
    case K_LEVEL:
        if ((c->log_level = pc_log_parse_level(val)) < 0)
            return s_bad("--log-level: '%s' is not debug, info, warn or error%s", val, "");
        return 0;
    case K_MESSAGES:
        if (strcmp(val, "relay") && strcmp(val, "direct"))
            return s_bad("--messages: '%s' is not relay or direct%s", val, "");
        c->peer.direct = !strcmp(val, "direct");
        return 0;
    case K_FLAG:
        if (strcmp(val, "1") && strcmp(val, "0") && strcmp(val, "true") && strcmp(val, "false"))
            return s_bad("--%s: '%s' is not 1, 0, true or false", name, val);
        *(int *)(base + k->off) = !strcmp(val, "1") || !strcmp(val, "true");
        return 0;
    case K_READS:
        if (strcmp(val, "near") && strcmp(val, "deployer"))
            return s_bad("--reads: '%s' is not near or deployer%s", val, "");
        c->peer.reads_deployer = !strcmp(val, "deployer");
        return 0;
    default:
        return s_read_file(c, val, depth + 1);
    }
}

static int s_read_file(pc_config *c, const char *path, int depth)
{
    if (depth > 4)
        return s_bad("--config: '%s' includes config files too deeply%s", path, "");
    FILE *f = fopen(path, "r");
    if (!f)
        return s_bad("--config: cannot read '%s': %s", path, strerror(errno));
    char line[4096];
    int rc = 0, lineno = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line, *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strlen(s);
        while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
            s[--n] = '\0';
        if (!*s)
            continue;
        char *eq = strpbrk(s, "= \t");
        if (!eq) {
            fprintf(stderr, "levpeer: %s:%d: expected 'name = value'\n", path, lineno);
            rc = LEV_EINVAL;
            break;
        }
        *eq++ = '\0';
        while (*eq == ' ' || *eq == '\t' || *eq == '=')
            eq++;
        if ((rc = s_set(c, s, *eq ? eq : NULL, depth)))
            fprintf(stderr, "levpeer: in %s:%d\n", path, lineno);
    }
    fclose(f);
    return rc;
}

int pc_config_parse(pc_config *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->log_level = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            pc_config_usage(stdout);
            return 1;
        }
        if (strncmp(a, "--", 2))
            return s_bad("unexpected argument '%s' (see --help)%s", a, "");
        char name[64];
        const char *eq = strchr(a + 2, '='), *val;
        size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (n >= sizeof name)
            return s_bad("unknown setting '%s'%s", a, "");
        memcpy(name, a + 2, n);
        name[n] = '\0';
        if (!eq && !strcmp(name, "insecure"))
            val = "1"; /* a flag on the command line */
        else
            val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        int rc = s_set(c, name, val, 0);
        if (rc)
            return rc;
    }
    c->peer.listen = c->listen[0] ? c->listen : "tcp://127.0.0.1:0";
    c->peer.advertise = c->advertise[0] ? c->advertise : NULL;
    c->peer.data_dir = c->data_dir[0] ? c->data_dir : NULL;
    const char *ek = getenv("LEV_KEY"), *ea = getenv("LEV_AUTHORIZED_KEYS");
    if (!c->key[0] && ek && strlen(ek) < sizeof c->key)
        strcpy(c->key, ek);
    if (!c->authorized[0] && ea && strlen(ea) < sizeof c->authorized)
        strcpy(c->authorized, ea);
    if (c->authorized[0] && !c->key[0])
        return s_bad("--authorized-keys '%s' without --key (the mesh's key pair)%s", c->authorized,
                     "");
    const char *ei = getenv("LEV_INSECURE");
    if (ei && !strcmp(ei, "1"))
        c->insecure = 1;
    c->peer.key = c->key[0] ? c->key : NULL;
    c->peer.authorized_keys = c->authorized[0] ? c->authorized : NULL;
    c->peer.executor_program = c->exec_prog[0] ? c->exec_prog : NULL;
    return 0;
}
