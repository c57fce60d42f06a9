/* modmgr.h - the module manager (the PPP2P paper's assembly manager) of a
 * worker (modmgr.c): a cache of task modules keyed by the BLAKE2b-256 hash
 * of their bytes, in memory and, with a data directory, on disk
 * (DIR/modules/<hex>.so), and the check that a module was built for this
 * machine.
 *
 * A module's bytes are trusted only once they hash to the hash they are
 * stored under: put checks them, and a get that reads them back from disk
 * checks them again. The 64-bit digest of rt_taskmod_digest is a quick
 * check of transport, never an identity.
 */
#ifndef PC_MODMGR_H
#define PC_MODMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define PC_ARCH_MAX 48 /* bytes of an architecture name, NUL included */

typedef struct pc_modmgr pc_modmgr;

/* Computes the BLAKE2b-256 hash of a module's bytes into out (the sender
 * side: what W_MODULE and X_MODULE carry). */
void pc_module_hash(const void *bytes, size_t len, uint8_t out[PC_HASH_LEN]);

/* Writes the lowercase hex of a hash (2 * PC_HASH_LEN characters) and a
 * NUL into out. */
void pc_module_hash_hex(const uint8_t hash[PC_HASH_LEN], char out[2 * PC_HASH_LEN + 1]);

/* Creates a module manager; with data_dir (not NULL) modules are also
 * kept in data_dir/modules, created if missing. 0, or LEV_EIO (the
 * directory cannot be made; lev_errdetail names it), LEV_ENOMEM. Caller
 * owns *out and frees it with pc_modmgr_destroy. Thread-safe. */
int pc_modmgr_new(pc_modmgr **out, const char *data_dir);

/* Frees the manager and every cached module (files on disk stay);
 * accepts NULL and sets *mm_p to NULL. */
void pc_modmgr_destroy(pc_modmgr **mm_p);

/* Stores a copy of a module's bytes under `hash`, after checking that they
 * hash to it; with a data directory also on disk (written to a temporary
 * file, synced, renamed). 0 (also when it is cached already); LEV_EMODULE
 * if the bytes do not match the hash (lev_errdetail says so); LEV_EINVAL,
 * LEV_ENOMEM. A module that cannot be written to disk stays cached in
 * memory and the failure is printed once on stderr. */
int pc_modmgr_put(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN], const void *bytes, size_t len);

/* Finds a module by hash: in memory, else from disk (its bytes checked
 * again, and kept in memory). Sets *bytes and *len to the manager's copy,
 * valid until pc_modmgr_destroy. 0; LEV_EMODULE if it is not cached, or
 * its file is damaged (the file is then removed; lev_errdetail says
 * which); LEV_EIO, LEV_ENOMEM. */
int pc_modmgr_get(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN], const uint8_t **bytes,
                  size_t *len);

/* Whether pc_modmgr_get would find the module (a file on disk is read and
 * checked here, so a damaged one is not reported as present). */
bool pc_modmgr_has(pc_modmgr *mm, const uint8_t hash[PC_HASH_LEN]);

/* ===================================================================
 * Architecture of a module
 * =================================================================== */

/* Bounds the cache: max_bytes of modules (0: none; a larger module is
 * refused by put with LEV_ERANGE), and a module unused for max_age_s
 * seconds is evicted (0: never). */
void pc_modmgr_limit(pc_modmgr *mm, size_t max_bytes, int max_age_s);

/* Evicts, from memory and disk, the modules unused for longer than the
 * age bound, then the least recently used while the cache is above its
 * size; never one of keep[0..nkeep) (the modules of VCs served now).
 * Returns how many were evicted. */
size_t pc_modmgr_evict(pc_modmgr *mm, const uint8_t (*keep)[PC_HASH_LEN], size_t nkeep);

typedef struct pc_modmgr_stats {
    size_t held, bytes;        /* modules cached and their bytes (at the last eviction) */
    uint64_t evicted, refused; /* evicted so far, and refused for their size */
    size_t max_bytes;
} pc_modmgr_stats;
void pc_modmgr_status(pc_modmgr *mm, pc_modmgr_stats *st);

/* The architecture of this machine as modules name it ("x86_64",
 * "aarch64", ...): a static string. */
const char *pc_arch_self(void);

/* Writes the architecture a module's bytes (an ELF file) were built for
 * into out[PC_ARCH_MAX], from its class, byte order and machine. 0, or
 * LEV_EMODULE if the bytes are no ELF file (lev_errdetail says so). */
int pc_module_arch(const void *bytes, size_t len, char out[PC_ARCH_MAX]);

/* 0 if a module built for `arch` runs on this machine, else LEV_EMODULE
 * with the detail "module built for <arch>, this peer is <arch>". */
int pc_arch_check(const char *arch);

/* pc_module_arch then pc_arch_check: 0 if the module's ELF header is this
 * machine's (class, byte order, machine); LEV_EMODULE otherwise. */
int pc_module_arch_check(const void *bytes, size_t len);

#endif
