/* lev_abi.h - the frame ABI between generated (or hand-written) task code
 * and the Leverage runtime.
 *
 * Installed; the only runtime header that code produced by levpp includes.
 * Everything here is stable within one LEV_ABI_VERSION.
 *
 * ===================================================================
 * Execution model
 * ===================================================================
 * A virtual thread (VT) runs ordinary native C. Each function that may
 * reach a safe point (a "checkpointable" function) is compiled into:
 *
 *   - a frame struct whose first member is `lev_frame` (function id and
 *     artificial program counter), followed by the parameters and locals
 *     that must survive a safe point and the result slots of the
 *     checkpointable functions it calls;
 *   - a resumable body (its signature is private to the module that
 *     defines it; task and main entries, which the runtime calls, are
 *     `int NAME__run(lev_ctx *, void *frame)`).
 *
 * Frames live in the VT's frame arena (a chain of chunks the runtime
 * scans and walks) in call order, so that once a VT has unwound the chain
 * of frames in the arena is exactly its call stack (an over-aligned frame
 * may have a gap below it, which the runtime skips). A function pushes its
 * frame with lev_frame_push() when it is called and pops it with
 * lev_frame_pop() when it returns; or, if its whole state fits in C
 * locals, it runs without one and gets it from lev_frame_spill() only if
 * it unwinds (the runtime then lays the spilled frames on the arena,
 * above the pushed ones). Such a function pushes its frame anyway just
 * before a call that may push one (of a function that pushes its frame,
 * or that may itself push one before a call), and pops it after the call;
 * if the callee unwinds, it stores its state in that frame instead of
 * spilling one. So along any chain of active calls the pushed frames come
 * first and the spilled ones after them, and laying the spilled frames
 * above the pushed ones keeps the call order. Locals whose
 * address is never taken may stay in C locals: the body spills them to
 * its frame only when it unwinds, and reloads them when it is resumed.
 *
 * Every body returns one of:
 *   LEV_RUN_DONE    the function returned normally (with its result);
 *   LEV_RUN_UNWIND  a safe point asked the VT to stop: the body stored its
 *                   program counter and live locals in its frame and
 *                   returned; each caller does the same, up to the runtime;
 *   LEV_RUN_EXIT    the VT ended (lev_return or a failure): callers pop
 *                   their frames and return LEV_RUN_EXIT at once.
 *
 * To resume, the runtime calls the bottom frame's entry body again; a body
 * whose fr->h.pc is non-zero reloads its locals and jumps to the resume
 * point numbered pc. At a call site that resume point re-issues the call
 * with the callee's frame found by lev_frame_callee(); at a safe point it
 * continues after the safe point (or re-issues a blocking call).
 *
 * A safe point is written:
 *
 *     if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_POLL)) {
 *         fr->h.pc = 3; ...spill...; return LEV_RUN_UNWIND;
 *     }
 *     case_3: ...
 *
 * lev_poll() is one load and a predictable branch; lev_safepoint() is the
 * slow path that decides (preemption, checkpoint due, torture mode).
 *
 * ===================================================================
 * Type descriptors
 * ===================================================================
 * Every object the runtime may have to capture (frames, heap objects,
 * travelling statics) is described by a lev_type_desc: its size, its
 * alignment and the kind and offset of each field. Scalars are captured by width (1, 2, 4 or
 * 8 bytes, byte order fixed on restore; floats as their IEEE bit pattern),
 * data pointers are swizzled into (object, offset) or (static symbol,
 * offset), function pointers into function ids. An integer that may hold
 * a pointer cannot be described and must not cross a safe point; nor can
 * a union that may hold one, unless a sibling field (its tag) says which
 * member is live (LEV_K_TAGGED below).
 *
 * Type ids: 0..LEV_T_USER-1 are built in (below); a module's own types are
 * numbered LEV_T_USER + their index in lev_module_desc.types.
 *
 * A type whose last field has count 0 has a trailing array: an object of
 * it is one element followed, from that field's offset, by as many
 * elements of the field's kind (or `type`) as its size holds. Its heap
 * objects and statics give their size in bytes where other types give a
 * count of elements (lev_alloc, lev_realloc, lev_static_desc.count); a
 * heap object has at least the type's size.
 */
#ifndef LEV_ABI_H
#define LEV_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "lev_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LEV_ABI_VERSION 3u

#if defined(__GNUC__)
#define LEV_LIKELY(x) __builtin_expect(!!(x), 1)
#define LEV_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LEV_INLINE static inline __attribute__((__always_inline__))
#else
#define LEV_LIKELY(x) (x)
#define LEV_UNLIKELY(x) (x)
#define LEV_INLINE static inline
#endif

/* ------------------------------------------------------------------ */
/* Descriptors                                                         */
/* ------------------------------------------------------------------ */

/* Field kinds. */
enum {
    LEV_K_B1 = 1,     /* 1-byte scalar (char, int8_t, bool) */
    LEV_K_B2 = 2,     /* 2-byte scalar */
    LEV_K_B4 = 3,     /* 4-byte scalar (int, float) */
    LEV_K_B8 = 4,     /* 8-byte scalar (long long, double, size_t on LP64) */
    LEV_K_PTR = 5,    /* data pointer */
    LEV_K_FNPTR = 6,  /* function pointer */
    LEV_K_REC = 7,    /* nested struct or array of structs: `type` names it */
    LEV_K_TAGGED = 8, /* tagged union (count 1): `type` names its tag table */
    LEV_K_TAG = 9     /* first row of a tag table (below), nowhere else */
};

/* A tagged union: a union of at most 8 bytes whose live member a tag, an
 * integer field of the enclosing struct, selects. Its field row is
 * {name, offset, LEV_K_TAGGED, 1, T}, where T is a type whose descriptor
 * is the union's tag table rather than an object type (no object has it):
 *
 *   size      the union's size (1..8; 8 if a member is a pointer)
 *   fields[0] {tag name, D, LEV_K_TAG, W, 0}: the tag is the W-byte
 *             integer (W = 1, 2, 4 or 8) at D bytes from the union's
 *             start (D a two's complement int32: negative before it)
 *   fields[i] {member name, (uint32_t)V, K, 1, (uint32_t)(V >> 32)}: tag
 *             value V (compared in the tag's W bytes) selects a member of
 *             kind K: LEV_K_PTR, LEV_K_FNPTR, or LEV_K_B1 for a member
 *             that holds no pointer (the union's bytes)
 *
 * An image carries each tagged union as one flag byte and one 8-byte item:
 * the pointer, swizzled, or the bytes (a member with no pointer). A tag
 * value the table does not list is never guessed: its bytes travel as
 * bytes, unless some 8 of them equal an address the image would relocate,
 * and then the capture fails naming the field (as for LEV_T_UNTYPED
 * objects, below). */

/* Built-in type ids (element types of untyped and scalar allocations). */
enum {
    LEV_T_BYTES = 0, /* unsigned char; malloc of unknown bytes with no pointers */
    LEV_T_U16 = 1,
    LEV_T_U32 = 2,
    LEV_T_U64 = 3,
    LEV_T_PTR = 4,   /* void * (array of data pointers) */
    LEV_T_FNPTR = 5, /* array of function pointers */
    LEV_T_USER = 16  /* first id of a module's own types */
};

typedef struct lev_field_desc {
    const char *name; /* field or variable name, for diagnostics */
    uint32_t offset;  /* byte offset in the enclosing type */
    uint32_t kind;    /* LEV_K_* */
    uint32_t count;   /* array length; 1 for a single field; 0 for a
                       * flexible array member (T m[], the last field):
                       * the type's trailing array, below */
    uint32_t type;    /* LEV_K_REC: type id of the element; else 0 */
} lev_field_desc;

typedef struct lev_type_desc {
    const char *name; /* e.g. "struct node" or "frame fib" */
    uint32_t size;    /* sizeof */
    uint32_t nfields;
    const lev_field_desc *fields;
    uint32_t align; /* _Alignof, a power of two; 0: at most LEV_FRAME_ALIGN. The
                     * runtime lays frames of a frame type so aligned (pushed,
                     * spilled, restored); images do not carry it, so a frame
                     * is aligned as the module of the restoring process says */
} lev_type_desc;

typedef struct lev_ctx lev_ctx;
typedef int (*lev_entry_fn)(lev_ctx *vt, void *frame);

/* Function flags. */
enum {
    LEV_FN_TASK = 1u, /* a LEV_TASK entry: frame begins with lev_task_frame */
    LEV_FN_MAIN = 2u  /* a --main-task main: frame begins with lev_main_frame */
};

typedef struct lev_fn_desc {
    const char *name;
    void (*native)(void); /* the address function pointers hold, or NULL */
    lev_entry_fn entry;   /* resumable body of an entry, else NULL */
    uint32_t frame_type;  /* type id of the frame struct; 0 if no frame */
    uint32_t flags;       /* LEV_FN_* */
} lev_fn_desc;

/* Static flags. */
enum {
    LEV_S_TRAVELS = 1u /* the value is part of every image (--main-task) */
};

typedef struct lev_static_desc {
    const char *name; /* symbol name; string literals get a generated one */
    void *addr;
    uint32_t type;  /* element type id */
    uint32_t count; /* number of elements */
    uint32_t flags; /* LEV_S_* */
} lev_static_desc;

typedef struct lev_module_desc {
    uint32_t abi_version; /* LEV_ABI_VERSION */
    const char *name;
    uint32_t ntypes;
    const lev_type_desc *types; /* ids LEV_T_USER + i */
    uint32_t nfns;
    const lev_fn_desc *fns; /* ids 0..nfns-1 */
    uint32_t nstatics;
    const lev_static_desc *statics;
} lev_module_desc;

typedef struct lev_module lev_module;

/* Registers a task module's descriptors, validating every type, field and
 * function; returns 0 or LEV_EINVAL (detail names the bad descriptor) or
 * LEV_ENOMEM. The descriptor tables must outlive the module. Registering
 * the same table twice returns the same module. */
LEV_API int lev_module_register(const lev_module_desc *desc, lev_module **out);

/* The module's identity: a hash of its descriptors (names, layouts,
 * functions, statics), equal across processes that loaded the same code. */
LEV_API uint64_t lev_module_hash(const lev_module *m);

/* A program carries its task module (the shared object built from its
 * task sources) in an ELF note of owner LEV_NOTE_OWNER in its own image:
 * either the module's bytes (LEV_NOTE_TASK_MODULE) or the module file's
 * path, NUL-terminated (LEV_NOTE_TASK_MODULE_PATH). leverage_add_tasks()
 * compiles into the program a source with one line,
 *
 *     LEV_TASK_MODULE_EMBED(LEV_TASK_MODULE_PATH);   (EMBED, the default)
 *     LEV_TASK_MODULE_AT(LEV_TASK_MODULE_PATH);      (PATH)
 *
 * and a build without CMake does the same, with LEV_TASK_MODULE_PATH a
 * string literal naming the module file (absolute, or relative to the
 * directory of the compiler's run). The assembler reads the file at
 * compile time (.incbin): recompile that source whenever the module
 * changes. */
#define LEV_NOTE_OWNER "Leverage"
#define LEV_NOTE_TASK_MODULE 1
#define LEV_NOTE_TASK_MODULE_PATH 2

#define LEV_NOTE_STR_(x) #x
/* clang-format off */
#define LEV_NOTE_(type, body)                                                                      \
    __asm__(".pushsection .note.leverage, \"a\", %note\n"                                          \
            ".balign 4\n"                                                                          \
            ".long 9\n" /* the owner's length, NUL included */                                     \
            ".long 2f - 1f\n"                                                                      \
            ".long " LEV_NOTE_STR_(type) "\n"                                                      \
            ".asciz \"" LEV_NOTE_OWNER "\"\n"                                                      \
            ".balign 4\n"                                                                          \
            "1:\n" body "\n"                                                                       \
            "2:\n"                                                                                 \
            ".balign 4\n"                                                                          \
            ".popsection\n")
/* clang-format on */
#define LEV_TASK_MODULE_EMBED(path) LEV_NOTE_(LEV_NOTE_TASK_MODULE, ".incbin \"" path "\"")
#define LEV_TASK_MODULE_AT(path) LEV_NOTE_(LEV_NOTE_TASK_MODULE_PATH, ".asciz \"" path "\"")

/* Loads the task module this program carries into the runtime of this
 * process, once (later calls return at once), so that its tasks can run
 * here, and sets *hash (unless hash is NULL) to its lev_module_hash.
 * 0; LEV_EMODULE if the program carries no module, the module file is
 * missing, or the module is damaged or registers no Leverage module;
 * LEV_EUNSUPPORTED if a module cannot reach this program's runtime (a
 * program linked with the static libleverage must export its symbols:
 * -rdynamic, CMake ENABLE_EXPORTS); LEV_EIO, LEV_ENOMEM. lev_errdetail()
 * says what was wrong. */
LEV_API int lev_task_module_load(uint64_t *hash);

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

/* Every frame starts at a multiple of LEV_FRAME_ALIGN, and at a multiple
 * of its type's alignment when that is larger (lev_type_desc.align). */
#define LEV_FRAME_ALIGN 16u
#define LEV_FRAME_SIZE(sz) (((size_t)(sz) + (LEV_FRAME_ALIGN - 1)) & ~(size_t)(LEV_FRAME_ALIGN - 1))

typedef struct lev_frame {
    uint32_t fn; /* function id in the module */
    uint32_t pc; /* artificial program counter: 0 = not started */
} lev_frame;

/* Prefix of every task entry's frame. */
typedef struct lev_task_frame {
    lev_frame h;
    const void *arg; /* the VT's argument, a heap object owned by the VT */
    size_t len;
} lev_task_frame;

/* Prefix of a --main-task main's frame. */
typedef struct lev_main_frame {
    lev_frame h;
    int argc;
    char **argv; /* heap objects owned by the VT */
    int ret;     /* main's return value */
} lev_main_frame;

/* Results of a body. */
enum { LEV_RUN_DONE = 0, LEV_RUN_UNWIND = 1, LEV_RUN_EXIT = 2 };

/* The part of a VT that generated code touches directly. */
struct lev_ctx {
    char *sp;               /* top of the frame arena */
    char *limit;            /* end of the current chunk */
    char *base;             /* first frame byte of the current chunk */
    volatile uint32_t poll; /* non-zero: take the slow path at the next safe point */
    uint32_t reserved;
    struct lev_jmp_reg *jmp; /* innermost body that may be a setjmp's target, or NULL */
};

LEV_API void *lev_frame_push_slow(lev_ctx *vt, size_t size);
LEV_API void *lev_frame_push_aligned_slow(lev_ctx *vt, size_t size, size_t align);
LEV_API void lev_frame_pop_slow(lev_ctx *vt, void *frame);

/* Pushes a frame of `size` bytes (sizeof the frame struct) whose type
 * needs `align` bytes of alignment (_Alignof the frame struct, a power of
 * two, a constant), sets its function id and pc 0; other fields are
 * uninitialised. NULL: out of memory (the caller fails the VT with
 * LEV_ENOMEM). Up to LEV_FRAME_ALIGN the test of alignment folds away;
 * an over-aligned frame (a local of an _Alignas(64) struct, a 32-byte
 * vector) is pushed inline when the top of the arena is aligned already
 * (a frame's size is a multiple of its alignment, so recursive calls stay
 * aligned), else by the runtime, which leaves a gap below it that the
 * walks of the frames skip. */
LEV_INLINE void *lev_frame_push_aligned(lev_ctx *vt, size_t size, size_t align, uint32_t fn)
{
    char *p = vt->sp;
    /* in integers: before its first frame a VT has no chunk (sp NULL),
     * and a pointer past a chunk's end may not be formed */
    uintptr_t np = (uintptr_t)p + LEV_FRAME_SIZE(size);
    int over = align > LEV_FRAME_ALIGN;
    if (LEV_UNLIKELY((over && ((uintptr_t)p & (align - 1)) != 0) || np > (uintptr_t)vt->limit)) {
        p = (char *)(over ? lev_frame_push_aligned_slow(vt, size, align)
                          : lev_frame_push_slow(vt, size));
        if (!p)
            return NULL;
    } else {
        vt->sp = (char *)np;
    }
    ((lev_frame *)p)->fn = fn;
    ((lev_frame *)p)->pc = 0;
    return p;
}

/* lev_frame_push_aligned of a frame type aligned to at most
 * LEV_FRAME_ALIGN. */
LEV_INLINE void *lev_frame_push(lev_ctx *vt, size_t size, uint32_t fn)
{
    return lev_frame_push_aligned(vt, size, LEV_FRAME_ALIGN, fn);
}

/* Pops `frame`, which must be the top frame. */
LEV_INLINE void lev_frame_pop(lev_ctx *vt, void *frame)
{
    if (LEV_UNLIKELY((char *)frame == vt->base))
        lev_frame_pop_slow(vt, frame);
    else
        vt->sp = (char *)frame;
}

/* While unwinding, in a body that ran without a frame (a function whose
 * state lives entirely in C locals: fr == NULL on a fresh call): storage
 * for its frame, zeroed and aligned as its frame type's descriptor says,
 * with its function id `fn` and pc 0 set; the body
 * writes its pc and locals into it and returns LEV_RUN_UNWIND. The runtime
 * lays such frames on the arena, above the frames already there and in
 * call order, once the whole VT has unwound, so a body without a frame
 * must push one (lev_frame_push) before a call that may push a frame, and
 * store its state there if that callee unwinds. NULL: out of memory
 * (the VT has been failed; the body returns LEV_RUN_EXIT). */
LEV_API void *lev_frame_spill(lev_ctx *vt, size_t size, uint32_t fn);

/* While resuming: the frame of the callee of `frame` (the next one up the
 * chain). `size` is sizeof the caller's frame struct. */
LEV_API void *lev_frame_callee(lev_ctx *vt, void *frame, size_t size);

/* ------------------------------------------------------------------ */
/* Safe points                                                         */
/* ------------------------------------------------------------------ */

enum {
    LEV_SP_POLL = 0,       /* automatic poll in a loop */
    LEV_SP_CHECKPOINT = 1, /* lev_checkpoint(): capture if one is due */
    LEV_SP_YIELD = 2,      /* let other VTs run */
    LEV_SP_BLOCK = 3       /* the VT waits for lev_vt_wake() */
};

/* Fast check: non-zero when the slow path must be consulted. */
LEV_INLINE int lev_poll(lev_ctx *vt) { return (int)LEV_UNLIKELY(vt->poll != 0); }

/* Slow path of a safe point: returns 1 if the VT must unwind now (the
 * caller saves its state and returns LEV_RUN_UNWIND), 0 to go on. */
LEV_API int lev_safepoint(lev_ctx *vt, int kind);

/* The blocking Leverage calls as levpp issues them in checkpointable
 * code. Each does what its lev_task.h namesake does when that can be done
 * now; when it would have to wait it returns LEV_BLOCKED instead, with
 * no input consumed and no message sent, and the runtime has noted what
 * the VT waits for (and when it started to, for a timeout). What the
 * deployer must be asked goes out once per call, not per re-issue: a lock
 * or read request when the call starts, a receive's timeout request when
 * its deadline passes. The body then takes a
 * LEV_SP_BLOCK safe point and, at its resume point, issues the same call
 * again with the same arguments (evaluated once, kept in the frame) until
 * it returns something else:
 *
 *     lev__a0 = (arg0); ...                      (once)
 *   lev__resume_K:
 *     lev__rK = lev_recv_try(vt, lev__a0, ...);
 *     if (lev__rK == LEV_BLOCKED) {
 *         if (lev_safepoint(vt, LEV_SP_BLOCK)) goto lev__unwind_K;
 *         goto lev__resume_K;
 *     }
 *
 * Re-issuing never repeats a side effect: a call that returns LEV_BLOCKED
 * had none but its one request, and a VT has one blocking call in
 * progress at a time, whose
 * deadline the runtime keeps with the VT's channel state (it travels in
 * the VT's images). */
#define LEV_BLOCKED 1
LEV_API int lev_send_try(lev_ctx *vt, uint64_t to, const void *buf, size_t len);
LEV_API int lev_recv_try(lev_ctx *vt, uint64_t *from, void **buf, size_t *len, int timeout_ms);
LEV_API int lev_global_lock_try(lev_ctx *vt, const char *name, void **value, size_t *len);
LEV_API int lev_global_read_try(lev_ctx *vt, const char *name, void **value, size_t *len);

/* Fails the running VT with `err` (a LEV_E* code) and a detail message;
 * the caller returns LEV_RUN_EXIT. */
LEV_API void lev_vt_fail(lev_ctx *vt, int err, const char *detail);

/* ------------------------------------------------------------------ */
/* Heap                                                                */
/* ------------------------------------------------------------------ */

/* Allocates `count` zeroed elements of type `type` of module `m` on the
 * VT heap (Boehm GC, typed); of a type with a trailing array, `count`
 * bytes (at least its size). NULL on overflow or exhaustion. Objects are
 * reclaimed when unreachable, or at once by lev_free(). */
LEV_API void *lev_alloc(const lev_module *m, uint32_t type, size_t count);

/* Resizes a heap object to `count` elements of `type` (bytes for a type
 * with a trailing array; realloc semantics, what it adds zeroed; also
 * accepts NULL and memory of the C library). */
LEV_API void *lev_realloc(const lev_module *m, void *p, uint32_t type, size_t count);

/* Frees a heap object, or memory of the C library (malloc, getline,
 * asprintf); NULL and a second free are ignored. A heap object is marked
 * free at once; a small one is kept by the thread for its next allocation
 * of that size (as malloc would reuse it), the others are reclaimed by the
 * collector when nothing refers to them any more. A pointer left dangling
 * to a freed object (legal in C as long as it is not used) is captured as
 * a dangling pointer, not an error, until the memory is allocated again. */
LEV_API void lev_free(void *p);

/* Copies a NUL-terminated string into a new byte object. */
LEV_API char *lev_strdup(const lev_module *m, const char *s);

/* Requested size in bytes of a heap object, 0 if p is not one. */
LEV_API size_t lev_alloc_size(const lev_module *m, const void *p);

/* ------------------------------------------------------------------ */
/* Allocation-type hints                                               */
/* ------------------------------------------------------------------ */

/* Type id of an object allocated with no type (see below): its bytes are
 * scanned conservatively by the collector, and an image carries them as
 * bytes after checking that no 8 of them, at any offset, equal an address
 * the image would relocate (a capture that finds one fails, naming the
 * object and the offset). */
enum { LEV_T_UNTYPED = 6 };

/* No hint: the next hinted allocation is untyped. */
#define LEV_HINT_NONE 0xFFFFFFFFu

/* The element type of the next hinted allocation of the calling thread
 * (levpp sets it around a call of an allocation wrapper whose result is
 * cast or assigned to a T *; the call cannot reach a safe point, so the
 * hint never outlives the call or moves to another VT). */
typedef struct lev_alloc_hint {
    const lev_module *m;
    uint32_t type; /* a type id of m, or LEV_HINT_NONE */
} lev_alloc_hint;

/* The calling thread's hint, which the runtime takes at the hinted
 * allocation (set and restored inline: allocation wrappers are hot).
 * (The output of a --main-task program with thread-locals defines the
 * keyword away before its text: this one stays the thread's.) */
#pragma push_macro("__thread")
#undef __thread
LEV_API extern __thread lev_alloc_hint lev__hint __attribute__((tls_model("initial-exec")));
#pragma pop_macro("__thread")

/* Sets the hint; returns the previous one, for lev_hint_restore. */
LEV_INLINE lev_alloc_hint lev_hint_set(const lev_module *m, uint32_t type)
{
    lev_alloc_hint old = lev__hint;
    lev__hint.m = m;
    lev__hint.type = type;
    return old;
}

LEV_INLINE void lev_hint_restore(lev_alloc_hint old) { lev__hint = old; }

/* malloc, calloc and realloc as levpp writes them where it cannot infer
 * the element type itself (inside an allocation wrapper, and malloc taken
 * as a value): the allocation takes the hint and clears it. A size that
 * is a multiple of the hinted type's size gives an object of that type;
 * any other size, and no hint, gives an untyped object (LEV_T_UNTYPED).
 * realloc with no hint keeps the type of the object it resizes when the
 * new size is a multiple of it. As from the C library, what malloc gives
 * and what realloc adds is indeterminate where the type holds no pointers
 * (memory that may hold pointers, and calloc's, is cleared). */
LEV_API void *lev_malloc_hinted(size_t n);
LEV_API void *lev_calloc_hinted(size_t n, size_t size);
LEV_API void *lev_realloc_hinted(void *p, size_t n);

/* malloc, calloc and realloc where levpp can infer no element type and no
 * caller can give one (memory kept in a void *, a size that is no whole
 * number of the type it is cast to): an untyped object, whatever the
 * hint (which they leave alone). realloc keeps the type of the object it
 * resizes when the new size is a multiple of it. */
LEV_API void *lev_malloc_untyped(size_t n);
LEV_API void *lev_calloc_untyped(size_t n, size_t size);
LEV_API void *lev_realloc_untyped(void *p, size_t n);

/* ------------------------------------------------------------------ */
/* setjmp / longjmp                                                    */
/* ------------------------------------------------------------------ */

/* A `setjmp(env)` in a checkpointable function writes no machine state
 * into env: lev_setjmp() writes a marker, four 64-bit words that an image
 * carries as integers (a magic word, the depth of the function's frame in
 * the arena, its function id and the setjmp's site number, and a check
 * word over them and the module's hash), and returns 0.
 *
 * The body of such a function runs inside a small wrapper (its __resume,
 * or its __run for an entry) that registers, on every entry of the body,
 * fresh or resumed, a native jmp_buf of its own in a list of the VT
 * (lev_jmp_enter / lev_jmp_leave, innermost first, on the C stack). A
 * longjmp (levpp renames `longjmp`, `_longjmp` and `siglongjmp` in every
 * function of the inputs) with a marker finds the frame at the marker's
 * depth, checks its function, finds that frame's registration, discards
 * the frames above it in the arena and the registrations above it, sets
 * the frame's pc to the setjmp's site, keeps the value (1 for 0) in the
 * registration, and jumps natively to the wrapper, which runs the body
 * again: the body resumes at the setjmp's site, where setjmp returns the
 * value. A capture and restore in between do not matter: the wrapper
 * registers again when the body is resumed, and the marker names the
 * frame by its depth. Frames between the two ends (transformed, lazy,
 * native, the C library's) are simply left, as a native longjmp leaves
 * them. Such a body keeps all its variables in its frame, so they hold at
 * the jump the values they had when longjmp was called. */
typedef struct lev_jmp_reg {
    struct lev_jmp_reg *up; /* the registration of an outer body */
    void *frame;            /* the frame of the body */
    void *jb;               /* its native jmp_buf */
    uint32_t depth;         /* depth of frame in the arena, plus 1; 0: not known yet */
    int val;                /* what setjmp returns after a jump to this body */
} lev_jmp_reg;

LEV_INLINE void lev_jmp_enter(lev_ctx *vt, lev_jmp_reg *r, void *frame, void *jb)
{
    r->up = vt->jmp;
    r->frame = frame;
    r->jb = jb;
    r->depth = 0;
    r->val = 0;
    vt->jmp = r;
}

LEV_INLINE void lev_jmp_leave(lev_ctx *vt, lev_jmp_reg *r) { vt->jmp = r->up; }

/* setjmp(env) in the body whose frame is `frame` (the innermost
 * registered one), at site `site`: writes the marker into env (at least 32
 * bytes) and returns 0. */
LEV_API int lev_setjmp(lev_ctx *vt, void *frame, void *env, uint32_t site);

/* longjmp(env, v) in checkpointable code: env must hold a marker (else the
 * process aborts naming the problem: a jmp_buf that no setjmp of
 * checkpointable code set). Does not return. */
LEV_API __attribute__((__noreturn__)) void lev_longjmp_vt(lev_ctx *vt, void *env, int v);

/* longjmp(env, v) and siglongjmp(env, v) anywhere else in the inputs (in
 * the native copy of a function, in a function that is not
 * checkpointable): a marker jumps as above, from the VT running on this
 * thread; a jmp_buf that a native setjmp set is passed to the C library's
 * longjmp / siglongjmp. A marker that is damaged, names a frame that is no
 * longer there, or is used outside its VT aborts the process naming the
 * problem. They have the C library's types, so that `longjmp` taken as a
 * value becomes them too. */
struct __jmp_buf_tag; /* the element of jmp_buf and sigjmp_buf (glibc, musl) */
LEV_API __attribute__((__noreturn__)) void lev_longjmp(struct __jmp_buf_tag *env, int v);
LEV_API __attribute__((__noreturn__)) void lev_siglongjmp(struct __jmp_buf_tag *env, int v);

#ifdef __cplusplus
}
#endif

#endif
