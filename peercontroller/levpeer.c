/* levpeer.c - the program levpeer: the peer controller daemon, and the
 * executor process of one virtual computer that a worker daemon starts as
 * `levpeer --executor --fd N` over an inherited socket (exechost.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon.h"
#include "exechost.h"

/* `levpeer --executor --fd N`: runs the executor over descriptor N, which
 * must be an open stream socket, and returns its exit status (2 for bad
 * arguments). */
static int s_executor_main(int argc, char **argv)
{
    if (argc != 4 || strcmp(argv[2], "--fd") != 0) {
        fprintf(stderr, "levpeer: usage: levpeer --executor --fd N\n");
        return 2;
    }
    char *end;
    errno = 0;
    long fd = strtol(argv[3], &end, 10);
    if (errno || end == argv[3] || *end || fd < 0 || fd > 1000000) {
        fprintf(stderr, "levpeer: --fd needs a descriptor number, not '%s'\n", argv[3]);
        return 2;
    }
    int type = 0;
    socklen_t len = sizeof type;
    if (fcntl((int)fd, F_GETFD) < 0 || getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
        type != SOCK_STREAM) {
        fprintf(stderr, "levpeer: --fd %ld is not an open stream socket\n", fd);
        return 2;
    }
    return pc_exechost_run((int)fd, true);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--executor") == 0)
        return s_executor_main(argc, argv);
    return pc_daemon_main(argc, argv);
}
