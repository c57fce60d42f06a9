/* status.c - the status document of a peer (what levctl status shows):
 * its view of the mesh, the VCs it deploys with their VTs, its executors
 * and the images it holds, as JSON (peercontroller/README.md, "Status");
 * and the JSON text both it and levctl write with (status.h).
 */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "auth.h"
#include "peer_private.h"

void pc_json_fmt(pc_wbuf *w, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof buf) {
        pc_put_raw(w, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        w->err = -2;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pc_put_raw(w, big, (size_t)n);
    free(big);
}

/* The length of the well-formed UTF-8 sequence at p (2 to 4 bytes), or 0. */
static int s_utf8_len(const unsigned char *p)
{
    unsigned char lo = 0x80, hi = 0xbf; /* bounds of the second byte */
    int n;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        if (p[0] == 0xe0)
            lo = 0xa0; /* overlong */
        else if (p[0] == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        if (p[0] == 0xf0)
            lo = 0x90; /* overlong */
        else if (p[0] == 0xf4)
            hi = 0x8f; /* past U+10FFFF */
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

void pc_json_str(pc_wbuf *w, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    pc_put_u8(w, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        int n = *p >= 0x80 ? s_utf8_len(p) : 0;
        if (n) {
            pc_put_raw(w, p, (size_t)n);
            p += n;
            continue;
        }
        if (*p == '"' || *p == '\\') {
            pc_put_u8(w, '\\');
            pc_put_u8(w, *p);
        } else if (*p < 0x20 || *p >= 0x7f) {
            const char esc[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            pc_put_raw(w, esc, sizeof esc);
        } else {
            pc_put_u8(w, *p);
        }
        p++;
    }
    pc_put_u8(w, '"');
}

void pc_status_json(pc_peer *p, pc_wbuf *j)
{
    pc_json_fmt(j, "{\"peer\":");
    pc_json_str(j, p->self.endpoint);
    pc_json_fmt(j, ",\"version\":%u,\"mesh\":\"%016llx\",\"peers\":[", PC_WIRE_VERSION,
                (unsigned long long)pc_members_mesh_id(p->mem));
    size_t n = pc_members_view(p->mem, NULL, 0);
    pc_member *v = n ? calloc(n, sizeof *v) : NULL;
    if (v)
        n = pc_members_view(p->mem, v, n);
    for (size_t i = 0; v && i < n; i++) {
        const pc_member *m = &v[i];
        pc_json_fmt(j, "%s{\"endpoint\":", i ? "," : "");
        pc_json_str(j, m->rec.endpoint);
        pc_json_fmt(j, ",\"state\":\"%s\",\"cores\":%u,\"rate\":%u,\"load\":%u,\"arch\":",
                    pc_member_state_name(m->state), m->rec.cores, m->rec.rate, m->rec.load);
        pc_json_str(j, m->rec.arch);
        pc_json_fmt(j, ",\"byte_order\":\"%s\",\"version\":%u,\"incarnation\":%u}",
                    m->rec.big_endian ? "big" : "little", m->rec.version, m->incarnation);
    }
    free(v);
    pc_json_fmt(j, "],\"rate_measurements\":%d", p->rate_runs);
    /* keys: whether the mesh has them, the public keys admitted, and the
     * connections refused for their key */
    pc_json_fmt(j, ",\"auth\":{\"keys\":%s,\"admitted\":%zu,\"refused_keys\":%llu}",
                p->auth ? "true" : "false", pc_auth_count(p->auth),
                (unsigned long long)pc_auth_refused(p->auth));
    pc_members_stats ms;
    pc_members_stats_get(p->mem, &ms);
    pc_json_fmt(j,
                ",\"detector\":{\"suspicions\":%llu,\"refutations\":%llu,\"refused\":%llu,"
                "\"health\":%d},\"vcs\":[",
                (unsigned long long)ms.suspicions, (unsigned long long)ms.refutations,
                (unsigned long long)ms.refused, pc_members_health(p->mem));
    pc_deployer_status(p->dep, j);
    pc_json_fmt(j, "],\"executors\":[");
    pc_worker_status(p->wk, j);
    pc_json_fmt(j, "],\"image_shipping\":");
    pc_worker_ckpt_status(p->wk, j);
    pc_json_fmt(j, ",\"modules\":");
    pc_worker_modules_status(p->wk, j);
    pc_json_fmt(j, ",\"global_copies\":");
    pc_worker_copies_status(p->wk, j);
    pc_json_fmt(j, ",\"global_reads\":");
    pc_worker_reads_status(p->wk, j);
    pc_json_fmt(j, ",\"held\":");
    pc_holder_status(p->hold, j);
    pc_json_fmt(j, "}");
}
