/* auth.h - keys and the admission of peers and clients (auth.c), for a
 * mesh whose connections are CurveZMQ: key pairs in files (`levctl
 * keygen`), the authorised public keys of a mesh (a file of keys, or a
 * directory of .pub files), and the ZAP handler that admits a connection
 * only when its public key is one of them, before anything it sends is
 * decoded.
 *
 * Files are text: a key pair (NAME.key, mode 0600)
 *   # Leverage CurveZMQ key pair: keep this file secret
 *   public-key = <40 characters, Z85>
 *   secret-key = <40 characters, Z85>
 * and its public half (NAME.pub) with the public-key line only. A file of
 * authorised keys holds public-key lines (or bare 40-character keys),
 * '#' comments and blank lines.
 */
#ifndef PC_AUTH_H
#define PC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PC_KEY_Z85 40 /* characters of a key in Z85 */

typedef struct pc_keypair {
    char pub[PC_KEY_Z85 + 1];
    char sec[PC_KEY_Z85 + 1]; /* "" when only the public half is known */
} pc_keypair;

/* A new key pair. 0, or LEV_EUNSUPPORTED (libzmq without CURVE). */
int pc_key_generate(pc_keypair *k);

/* Writes base.key (the pair, mode 0600, not replacing a file there) and
 * base.pub. 0, or LEV_EIO with err naming the file (one already there). */
int pc_key_write(const char *base, const pc_keypair *k, char *err, size_t cap);

/* Reads a .key or .pub file into *k (sec "" for a .pub). 0, or
 * LEV_EIO / LEV_EINVAL with err naming the file and the line. */
int pc_key_read(const char *path, pc_keypair *k, char *err, size_t cap);

typedef struct pc_auth pc_auth;

/* Admission for the sockets of context zctx: a ZAP handler (a REP socket
 * on inproc://zeromq.zap.01, answered by pc_auth_on_zap) admitting the
 * public keys of `authorized` (a file, or a directory whose *.pub files
 * are read) and `own` (the mesh's: its peers connect with it). 0, or an
 * error with err naming the file and line. */
int pc_auth_new(pc_auth **out, void *zctx, const pc_keypair *own, const char *authorized, char *err,
                size_t cap);
void pc_auth_destroy(pc_auth **a);

/* The ZAP socket, to poll for input, and the answer to what it holds. */
void *pc_auth_socket(pc_auth *a);
void pc_auth_on_zap(pc_auth *a);

/* Whether a 32-byte public key is admitted; how many keys are. */
bool pc_auth_allowed(const pc_auth *a, const uint8_t key[32]);
size_t pc_auth_count(const pc_auth *a);

/* Connections refused so far (each address is logged once). */
uint64_t pc_auth_refused(const pc_auth *a);

/* A client's keys for a mesh that has them: $LEV_MESH_KEY names the
 * mesh's public key (NAME.pub, or its pair NAME.key), $LEV_CLIENT_KEY the
 * client's pair (by default the mesh's pair, when $LEV_MESH_KEY names
 * it). 0 when neither is set (no CurveZMQ); 1 with *mesh and *mine
 * filled; LEV_EINVAL with err saying which variable and file is wrong. */
int pc_client_keys(pc_keypair *mesh, pc_keypair *mine, char *err, size_t cap);

/* The key pair of the mesh's executor links (direct messages), derived
 * from the mesh's secret: only a holder of that secret knows its public
 * key, which a CURVE client must know to connect, so the executors' own
 * ports admit none but the mesh's executors without a ZAP handler of
 * their own. 0, or LEV_EINVAL (mesh has no secret). */
int pc_key_derive_links(const pc_keypair *mesh, pc_keypair *out);

/* Makes sock a CURVE server with the key pair `own` (before bind), or a
 * CURVE client with the key pair `mine` to a server whose public key is
 * `server` (before connect). 0 or LEV_EINVAL (a key libzmq refuses). */
int pc_auth_serve(void *sock, const pc_keypair *own);
int pc_auth_connect(void *sock, const pc_keypair *mine, const char *server);

#endif
