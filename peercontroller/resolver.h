/* resolver.h - the address resolver of a virtual computer (resolver.c):
 * where each of its VTs runs now and in which epoch, so that VTs are
 * addressed by id wherever they run; what is sent to a VT goes to that
 * peer through its peer unit proxy (the transport's connection to it).
 */
#ifndef PC_RESOLVER_H
#define PC_RESOLVER_H

#include <stdint.h>

typedef struct pc_resolver pc_resolver;

/* 0 or LEV_ENOMEM; caller owns *out. */
int pc_resolver_new(pc_resolver **out);

/* Frees; accepts NULL and sets *r_p to NULL. */
void pc_resolver_destroy(pc_resolver **r_p);

/* Records that VT `vt` runs at peer `endpoint` in `epoch`. 0 or LEV_ENOMEM. */
int pc_resolver_set(pc_resolver *r, uint64_t vt, const char *endpoint, uint32_t epoch);

/* The peer VT `vt` runs at (and its epoch in *epoch), or NULL if unknown. */
const char *pc_resolver_get(const pc_resolver *r, uint64_t vt, uint32_t *epoch);

/* Forgets an ended VT. */
void pc_resolver_forget(pc_resolver *r, uint64_t vt);

#endif
