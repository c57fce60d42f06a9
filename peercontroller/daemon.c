/* daemon.c - levpeer's daemon mode (daemon.h): settings from flags and
 * config file, the peer started (its membership instance drawn from the
 * wall clock), its endpoint printed once it is ready
 * (scripts and tests wait for that line), and SIGTERM or SIGINT turned
 * into a graceful leave that migrates its VTs to other peers first.
 */
#include "daemon.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "lev_errors.h"
#include "log.h"
#include "peer.h"

#define PC_LEAVE_TIMEOUT_MS 15000

/* This start's instance in the membership: the wall clock in ms (so that
 * a restart on the same endpoint, even after a reboot, has a higher one
 * than its predecessor) and 20 bits to tell starts in one ms apart. */
static uint64_t s_instance(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    uint64_t low = ((uint64_t)ts.tv_nsec ^ (uint64_t)getpid() * 0x9E3779B1u) & 0xFFFFF;
    return (ms + 1) << 20 | low;
}

/* True if the endpoint's host is a loopback address. */
static int s_loopback(const char *ep)
{
    return !strncmp(ep, "tcp://127.", 10) || !strncmp(ep, "tcp://localhost:", 16) ||
           !strncmp(ep, "tcp://[::1]:", 12);
}

int pc_daemon_main(int argc, char **argv)
{
    pc_config c;
    int rc = pc_config_parse(&c, argc, argv);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (c.log_level >= 0)
        pc_log_set_level((pc_log_level)c.log_level);
    if (!c.peer.key && !c.insecure) {
        fprintf(stderr,
                "levpeer: no keys: a mesh without them runs code for anyone who reaches its "
                "port.\n"
                "  Make the mesh's key pair with `levctl keygen NAME`, then start every peer "
                "with\n"
                "  --key NAME.key (and --authorized-keys for the clients' public keys);\n"
                "  or pass --insecure (or LEV_INSECURE=1) to run without them.\n");
        return 2;
    }

    /* The signals are taken by sigwait on this thread only. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* images pass through in messages of megabytes: keep their memory */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);

    c.peer.members.instance = s_instance();
    pc_peer *p = NULL;
    rc = pc_peer_new(&p, &c.peer);
    if (rc) {
        fprintf(stderr, "levpeer: cannot start: %s: %s\n", lev_strerror(rc), lev_errdetail());
        return rc == LEV_EINVAL ? 2 : 1;
    }
    if (!c.peer.key)
        pc_log(PC_LOG_WARN,
               "INSECURE (--insecure): no keys, so no authentication and no encryption: anyone "
               "who can reach %s%s runs code here",
               c.peer.listen, s_loopback(c.peer.listen) ? " (this machine's users)" : "");
    printf("%s\n", pc_peer_endpoint(p));
    fflush(stdout);

    int sig = 0;
    sigwait(&set, &sig);
    pc_log(PC_LOG_INFO, "%s: leaving the mesh", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    rc = pc_peer_leave(p, PC_LEAVE_TIMEOUT_MS);
    pc_peer_destroy(&p);
    return rc ? 1 : 0;
}
