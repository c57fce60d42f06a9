/* arena.h - the frame arena of one VT (arena.c): a chain of chunks that
 * holds the frames of its checkpointable calls in call order, the buffer
 * of frames spilled while it unwinds, and the frame registers of its
 * context (base, sp, limit), which only the arena sets.
 *
 * Internal (not installed). Depends on module.h (frame sizes). The arena
 * owns its chunks: a restore gets one from rt_arena_chunk_new, fills it
 * and hands it over with rt_arena_adopt. The lev_frame_* entry points of
 * lev_abi.h are in vt.c, which finds a context's arena.
 */
#ifndef ARENA_H
#define ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "module.h"

typedef struct rt_chunk {
    struct rt_chunk *prev;
    struct rt_chunk *next;
    char *start; /* its first frame: data, or above it for an over-aligned one */
    char *end;   /* top of this chunk's frames while it is not current */
    size_t cap;  /* bytes of frame space from data */
    _Alignas(LEV_FRAME_ALIGN) char data[];
} rt_chunk;

/* A gap below an over-aligned frame (lev_frame_push_aligned) starts with
 * a frame header whose function id is RT_FRAME_GAP and whose pc is the
 * gap's size in bytes (a multiple of LEV_FRAME_ALIGN): the walks skip
 * it. A chunk never begins with one (its start moves instead), so a pop
 * that empties a chunk still finds the frame at the chunk's start. */
#define RT_FRAME_GAP UINT32_MAX

typedef struct rt_arena {
    rt_chunk *first;
    rt_chunk *cur;
    /* Frames written while unwinding by bodies that ran without one
     * (lev_frame_spill), innermost first; GC-scanned, laid on the chain
     * by rt_arena_lay_spilled once the VT has unwound. */
    char *spill;
    size_t spill_len, spill_cap;
} rt_arena;

/* lev_frame_push_slow (align LEV_FRAME_ALIGN) and
 * lev_frame_push_aligned_slow for the context ctx whose arena is a. */
void *rt_arena_push_slow(lev_ctx *ctx, rt_arena *a, size_t size, size_t align);

/* lev_frame_pop_slow for the context ctx whose arena is a. */
void rt_arena_pop_slow(lev_ctx *ctx, rt_arena *a, void *frame);

/* lev_frame_callee for the context ctx whose arena is a. */
void *rt_arena_callee(lev_ctx *ctx, rt_arena *a, void *frame, size_t size);

/* lev_frame_spill: a zeroed frame of function fn in the spill buffer,
 * aligned to `align`, or NULL when out of memory (the caller fails the
 * VT). */
void *rt_arena_spill(rt_arena *a, size_t size, size_t align, uint32_t fn);

/* Calls fn for every frame from the bottom of the chain to the top (gaps
 * skipped); stops early and returns fn's result if it is non-zero. */
int rt_arena_walk(lev_ctx *ctx, rt_arena *a, const lev_module *m,
                  int (*fn)(void *frame, size_t size, void *ud), void *ud);

/* With `lay`, pushes the spilled frames on the chain, outermost first;
 * either way empties the spill buffer. 0, or LEV_ENOMEM (some spilled
 * frames are then missing from the chain: the VT cannot go on). */
int rt_arena_lay_spilled(lev_ctx *ctx, rt_arena *a, int lay);

/* Makes `frame`, of `size` bytes, the top frame (a longjmp to its body):
 * the frames above it are discarded. */
void rt_arena_cut(lev_ctx *ctx, rt_arena *a, void *frame, size_t size);

/* Frees every chunk and leaves the arena and ctx empty. */
void rt_arena_clear(lev_ctx *ctx, rt_arena *a);

/* The word that torture mode overwrites memory a VT was moved out of
 * with (rt_poison): read as a pointer it is non-canonical on x86-64 and
 * AArch64, so a dereference faults; read as a number it is 0xDEAD
 * repeated, so it stands out in any output. */
#define RT_POISON 0xDEADDEADDEADDEADull

/* Overwrites n bytes at p with RT_POISON, as if the memory were an array
 * of RT_POISON words starting at p. */
void rt_poison(void *p, size_t n);

/* Overwrites every frame byte with RT_POISON (torture mode). */
void rt_arena_scribble(lev_ctx *ctx, rt_arena *a);

/* Hands over the arena's chunks (a chain linked by `next`, NULL if it has
 * none) and leaves it and ctx without frames; the spill buffer stays.
 * Torture mode keeps the old chunks allocated a while, so that a restore
 * cannot put the frames back where they were (rt_arena_chunks_free). */
rt_chunk *rt_arena_detach(lev_ctx *ctx, rt_arena *a);

/* Frees a chain of chunks linked by `next` (from rt_arena_detach);
 * accepts NULL. */
void rt_arena_chunks_free(rt_chunk *c);

/* Bytes of frame space in a chain of chunks linked by `next`. */
size_t rt_arena_chunks_bytes(const rt_chunk *c);

/* The bottom frame of the arena, or NULL if it has none. */
void *rt_arena_bottom(const rt_arena *a);

/* A new chunk of `cap` bytes of frame space, not in any arena, for a
 * restore to fill with rt_arena_chunk_put (then rt_arena_adopt, or
 * rt_arena_chunk_free). NULL on exhaustion. */
rt_chunk *rt_arena_chunk_new(size_t cap);

/* Bytes of chunk space that hold a frame of `size` bytes aligned to
 * `align` wherever it goes: its size and the largest gap below it. */
size_t rt_arena_room(size_t size, size_t align);

/* The place of the next frame, of `size` bytes aligned to `align`, in a
 * chunk that no arena holds, whose frames so far end at *top (NULL: it
 * has none yet; the chunk's start is then chosen): the frame's address,
 * *top moved past it; NULL if the chunk has no room for it. */
void *rt_arena_chunk_put(rt_chunk *c, char **top, size_t size, size_t align);

/* Frees a chunk that no arena adopted; accepts NULL. */
void rt_arena_chunk_free(rt_chunk *c);

/* Empties the arena and makes c, whose frames (rt_arena_chunk_put) end
 * at `top`, its only chunk, with ctx's frame registers on it. */
void rt_arena_adopt(lev_ctx *ctx, rt_arena *a, rt_chunk *c, char *top);

/* Byte size of the frame of function `fn` in module m (aligned). */
size_t rt_frame_size(const lev_module *m, uint32_t fn);

/* Alignment of the frame of function `fn` in module m: its type's, at
 * least LEV_FRAME_ALIGN. */
size_t rt_frame_align(const lev_module *m, uint32_t fn);

#endif
