/* gcopy.h - a worker's copies of global variables' values (gcopy.c),
 * named by the BLAKE2b-256 of their bytes, so that a deployer can send a
 * VT's read or grant of a large value it knows the worker has as the
 * value's hash (W_IN_REF) instead of its bytes.
 *
 * The worker keeps every value a VT of the VC was sent whole (a read, a
 * grant) and every value a VT committed (an unlock), each once, the
 * least recently used going first past a bound in bytes. Named by their
 * content, copies can never be stale: a deployer that counts on a copy
 * the worker no longer has gets W_IN_MISS and sends the value whole.
 * Network thread only.
 */
#ifndef PC_GCOPY_H
#define PC_GCOPY_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define PC_GCOPY_BYTES ((size_t)32 << 20) /* bytes of copies kept per VC */

typedef struct pc_gcopies pc_gcopies;

/* An empty set bounded by max_bytes (0: PC_GCOPY_BYTES); NULL on
 * exhaustion. */
pc_gcopies *pc_gcopies_new(size_t max_bytes);

/* Frees the set (a copy handed out lives until its last reference goes);
 * accepts NULL, sets *g_p NULL. */
void pc_gcopies_destroy(pc_gcopies **g_p);

/* Keeps a copy of len bytes (none for an empty value or one over the
 * bound; a copy it has already is only marked used). */
void pc_gcopies_put(pc_gcopies *g, const void *data, size_t len);

/* The copy of len bytes whose hash is `hash`, as a reference the caller
 * drops, or NULL. */
pc_buf *pc_gcopies_get(pc_gcopies *g, const uint8_t hash[PC_HASH_LEN], size_t len);

/* Copies kept, and their bytes. */
size_t pc_gcopies_count(const pc_gcopies *g);
size_t pc_gcopies_bytes(const pc_gcopies *g);

#endif
