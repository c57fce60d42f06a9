/* daemon.h - levpeer as a daemon (daemon.c): settings, the peer, the
 * bound endpoint on the first line of standard output, and a graceful
 * leave on SIGTERM or SIGINT.
 */
#ifndef PC_DAEMON_H
#define PC_DAEMON_H

/* Runs the daemon until a signal ends it; returns the exit status (0 after
 * a graceful leave, 1 if the peer could not start, 2 for bad arguments). */
int pc_daemon_main(int argc, char **argv);

#endif
