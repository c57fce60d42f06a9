/* status.c - the status document of a peer (what levctl status shows):
 * its view of the mesh, the VCs it deploys with their VTs, its executors
 * and the images it holds, as JSON (peercontroller/README.md, "Status").
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

void pc_json_str(pc_wbuf *w, const char *s)
{
    pc_put_u8(w, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            pc_put_u8(w, '\\');
            pc_put_u8(w, *p);
        } else if (*p < 0x20) {
            pc_json_fmt(w, "\\u%04x", *p);
        } else {
            pc_put_u8(w, *p);
        }
    }
    pc_put_u8(w, '"');
}

void pc_status_json(pc_peer *p, pc_wbuf *j)
{
    pc_json_fmt(j, "{\"peer\":");
    pc_json_str(j, p->self.endpoint);
    pc_json_fmt(j, ",\"version\":%u,\"peers\":[", PC_WIRE_VERSION);
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
    pc_json_fmt(j, "],\"vcs\":[");
    pc_deployer_status(p->dep, j);
    pc_json_fmt(j, "],\"executors\":[");
    pc_worker_status(p->wk, j);
    pc_json_fmt(j, "],\"held\":");
    pc_holder_status(p->hold, j);
    pc_json_fmt(j, "}");
}
