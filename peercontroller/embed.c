/* embed.c - the embedded peer of a client process (embed.h): started on
 * first use with the options a client gives, stopped at exit.
 */
#include "embed.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "lev_errors.h"
#include "peer.h"
#include "rt.h"

static pthread_mutex_t s_embed_mu = PTHREAD_MUTEX_INITIALIZER;
static pc_peer *s_embed;
static pc_keypair s_pair; /* its keys, when it has them */
static bool s_keyed;

static void s_embedded_stop(void) { pc_peer_destroy(&s_embed); }

bool pc_embed_keys(const char *endpoint, pc_keypair *pair)
{
    pthread_mutex_lock(&s_embed_mu);
    bool mine = s_embed && s_keyed && !strcmp(endpoint, pc_peer_endpoint(s_embed));
    if (mine)
        *pair = s_pair;
    pthread_mutex_unlock(&s_embed_mu);
    return mine;
}

int pc_embed_endpoint(const char *listen, const char *join, char out[PC_ENDPOINT_MAX])
{
    int rc = 0;
    pthread_mutex_lock(&s_embed_mu);
    if (!s_embed) {
        static char seeds[1024];
        pc_peer_opts o = {0};
        o.listen = listen && *listen ? listen : "tcp://127.0.0.1:0";
        o.embedded = true;
        if (join && strlen(join) >= sizeof seeds)
            rc = rt_err(LEV_EINVAL, "LEV_JOIN is longer than %zu bytes", sizeof seeds - 1);
        snprintf(seeds, sizeof seeds, "%s", join && !rc ? join : "");
        for (char *save = NULL, *tok = strtok_r(seeds, ",", &save); tok && !rc;
             tok = strtok_r(NULL, ",", &save)) {
            if (o.njoin == PC_JOIN_MAX)
                rc = rt_err(LEV_EINVAL, "LEV_JOIN names more than %d peers", PC_JOIN_MAX);
            else
                o.join[o.njoin++] = tok;
        }
        const char *key = getenv("LEV_KEY"), *ins = getenv("LEV_INSECURE");
        char err[512];
        if (!rc && key && *key) {
            rc = pc_key_read(key, &s_pair, err, sizeof err);
            if (rc)
                rc = rt_err(LEV_EINVAL, "LEV_KEY: %s", err);
            o.key_pair = &s_pair;
            o.authorized_keys = getenv("LEV_AUTHORIZED_KEYS");
        } else if (!rc && (!ins || strcmp(ins, "1"))) {
            if (o.njoin)
                rc = rt_err(LEV_EINVAL, "LEV_JOIN: joining a mesh needs its key pair in LEV_KEY, "
                                        "or LEV_INSECURE=1 for a mesh without keys");
            else if (pc_key_generate(&s_pair))
                rc = rt_err(LEV_EUNSUPPORTED, "this libzmq has no CurveZMQ, and a peer without "
                                              "keys needs LEV_INSECURE=1");
            o.key_pair = &s_pair;
        }
        s_keyed = !rc && o.key_pair;
        if (!rc)
            rc = pc_peer_new(&s_embed, &o);
        if (!rc)
            atexit(s_embedded_stop);
    }
    if (!rc)
        snprintf(out, PC_ENDPOINT_MAX, "%s", pc_peer_endpoint(s_embed));
    pthread_mutex_unlock(&s_embed_mu);
    return rc;
}
