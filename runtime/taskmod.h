/* taskmod.h - task modules as files: finding the module the running
 * program carries (its bytes in an ELF note of the program, or the path
 * the note records), and loading a module from its bytes so that its
 * descriptors register and its tasks can be found with rt_task_find.
 * A client ships what rt_taskmod_carried gives; a peer that receives it
 * loads it with rt_taskmod_load, as the client does in embedded mode.
 *
 * Internal (not installed). Loaded modules stay loaded until the process
 * ends; loading the same module again (same bytes, or an expected hash
 * that a registered module has) returns the module already loaded.
 */
#ifndef TASKMOD_H
#define TASKMOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rt.h"

/* The task module the running program carries. */
typedef struct rt_taskmod_carried {
    const uint8_t *bytes; /* the module file: in the program's image (EMBED),
                           * or read from path once (PATH) */
    size_t len;
    uint64_t digest;  /* rt_taskmod_digest(bytes, len) */
    const char *path; /* the recorded path (PATH), or NULL (EMBED) */
} rt_taskmod_carried;

/* The digest of a module's bytes that a receiver checks them against
 * (FNV-1a, 64 bits; never 0). */
uint64_t rt_taskmod_digest(const void *bytes, size_t len);

/* Finds the task module the running program carries (the main program
 * first, then the shared objects it loaded), once; *out lives until the
 * process ends. 0; LEV_EMODULE if none is carried or the recorded file is
 * missing; LEV_EIO, LEV_ENOMEM. */
int rt_taskmod_carried_get(const rt_taskmod_carried **out);

/* Loads a task module from its bytes (the file of a shared object) and
 * sets *out to the module it registers. `digest` (0: unchecked) is what
 * rt_taskmod_digest gave the sender; `hash` (0: any) the lev_module_hash
 * the module must have. Reuses the loaded module when these bytes, or a
 * module of hash `hash`, were loaded already. On failure nothing stays
 * loaded or registered: LEV_EMODULE for damaged bytes, a file that is not
 * a shared object for this machine, one that registers no (or more than
 * one) Leverage module or one of another hash; LEV_EUNSUPPORTED if a
 * loaded module could not reach this program's runtime (a static
 * libleverage whose symbols the program does not export); LEV_EINVAL,
 * LEV_EIO, LEV_ENOMEM. lev_errdetail() says which. The checks without a
 * digest cover the file's structure (truncation, headers, segments out of
 * bounds, another machine); damage inside a segment is caught only by the
 * digest, so a receiver passes the sender's. */
int rt_taskmod_load(const void *bytes, size_t len, uint64_t digest, uint64_t hash,
                    const lev_module **out);

/* Loads the module the running program carries (from its embedded bytes,
 * or from its recorded path), once; errors as rt_taskmod_carried_get and
 * rt_taskmod_load. */
int rt_taskmod_load_carried(const lev_module **out);

/* Loads from bytes through a private temporary file (unlinked once
 * loaded) instead of a memfd when `on`: what happens anyway where
 * memfd_create or /proc is not available. For tests. */
void rt_taskmod_use_tmpfile(bool on);

#endif
