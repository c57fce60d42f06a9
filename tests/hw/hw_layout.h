/* hw_layout.h - hand-written task module whose state covers every field
 * kind and layout an image must carry: scalars of every width (floats and
 * doubles with NaN payloads and -0.0), nested structs and arrays of
 * structs, interior and one-past-the-end pointers, large dense arrays
 * (bulk) and small ones, and a function pointer.
 */
#ifndef HW_LAYOUT_H
#define HW_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "lev_abi.h"

enum { HW_LAYOUT_FN_NOP, HW_LAYOUT_FN_TASK, HW_LAYOUT_NFNS };

/* Type ids. */
enum {
    HW_LAYOUT_T_TASK = LEV_T_USER,
    HW_LAYOUT_T_SCALARS,
    HW_LAYOUT_T_POINT,
    HW_LAYOUT_T_SHAPE,
    HW_LAYOUT_T_F64,
    HW_LAYOUT_T_F32,
    HW_LAYOUT_NTYPES_END
};

struct hw_scalars {
    uint8_t u8;
    int8_t i8;
    uint16_t u16;
    int16_t i16;
    uint32_t u32;
    int32_t i32;
    float f32;
    uint64_t u64;
    int64_t i64;
    double f64;
    char name[5];
    uint16_t w[3];
    float fv[3];
    double dv[2];
};

struct hw_point {
    int32_t x, y;
    double w;
};

struct hw_shape {
    uint16_t kind;
    struct hw_point origin; /* nested struct */
    struct hw_point pts[4]; /* array of structs */
    struct hw_shape *next;
    uint64_t *pval;       /* into the bulk array, or one past its end */
    struct hw_point *ppt; /* an element of another shape's pts */
    uint8_t flags;
};

#define HW_LAYOUT_NSHAPES 40

/* LEV_TASK void hw_layout_task(const long *scale): builds the graph below
 * (bulk arrays `scale` times their base size), reaches one safe point, then
 * stores hw_layout_digest() in result. */
struct hw_layout_task__frame {
    lev_task_frame t;
    long scale;
    struct hw_scalars sc;      /* a struct in the frame */
    struct hw_scalars *hsc;    /* 3 on the heap */
    struct hw_shape *shapes;   /* HW_LAYOUT_NSHAPES on the heap */
    struct hw_shape *one;      /* a single heap shape */
    struct hw_point *interior; /* &shapes[3].pts[2] */
    struct hw_shape *past;     /* shapes + HW_LAYOUT_NSHAPES */
    uint64_t *big64;           /* 1024 * scale: bulk */
    uint64_t *big_end;         /* one past the end of big64 */
    uint8_t *bytes;            /* 5000 * scale: bulk */
    uint16_t *u16s;            /* 3000 * scale: bulk */
    uint32_t *u32s;            /* 1500 * scale: bulk */
    double *dbl;               /* 600 * scale doubles: bulk */
    float *flt;                /* 17 floats: small */
    uint8_t *small;            /* 100 bytes: small */
    void *raw;                 /* NULL; tests point it elsewhere */
    void (*hook)(void);        /* a function of the module */
    long result;
};

extern const lev_module_desc hw_layout_desc;

/* The same module as built from a later version of its source, in which
 * struct hw_scalars has one more field (in what was padding): same names,
 * different layout, so a different module hash. */
extern const lev_module_desc hw_layout_desc_alt;

/* Registers the module on first use; NULL (lev_errdetail says why) on failure. */
const lev_module *hw_layout_module(void);

/* The function hook points to. */
void hw_layout_nop(void);

/* A digest of everything the frame reaches: scalar bits, array contents,
 * and pointers as positions relative to their targets. */
uint64_t hw_layout_digest(const struct hw_layout_task__frame *fr);

/* Compares two graphs field by field, bit-exact; 1 if equal, else 0 with
 * the first difference described in why. */
int hw_layout_equal(const struct hw_layout_task__frame *a, const struct hw_layout_task__frame *b,
                    char *why, size_t whylen);

/* Bytes of every object the frame reaches (frame, argument, heap objects). */
uint64_t hw_layout_live_bytes(const struct hw_layout_task__frame *fr);

/* Number of heap objects the frame reaches, the argument included. */
uint32_t hw_layout_heap_objects(void);

#endif
