/* config.h - levpeer's settings (config.c): command-line flags and the
 * same settings in a config file (`--config FILE`: one `name = value`
 * per line, names as the flags without their dashes, `#` comments).
 * Settings apply in the order given, so a flag after --config overrides
 * the file; `join` adds a seed each time. Numbers are decimal, but for
 * `mesh`, in hexadecimal.
 */
#ifndef PC_CONFIG_H
#define PC_CONFIG_H

#include "peer.h"

typedef struct pc_config {
    pc_peer_opts peer;
    int log_level; /* pc_log_level, or -1: LEV_LOG / info */
    /* storage for the strings that peer points into */
    char listen[PC_ENDPOINT_MAX], advertise[PC_ENDPOINT_MAX];
    char join[PC_JOIN_MAX][PC_ENDPOINT_MAX];
    char data_dir[4096];
    char exec_prog[4096];
    char key[4096];        /* --key, else $LEV_KEY */
    char authorized[4096]; /* --authorized-keys, else $LEV_AUTHORIZED_KEYS */
    int insecure;          /* --insecure (or $LEV_INSECURE=1): no keys, knowingly */
} pc_config;

/* Fills *c from argv (argv[0] is the program). 0; 1 when --help was asked
 * (the usage is printed); or LEV_EINVAL after printing what is wrong
 * ("levpeer: --cores: 'x' is not a number") on stderr. */
int pc_config_parse(pc_config *c, int argc, char **argv);

/* Prints the usage on f. */
void pc_config_usage(void *f);

#endif
