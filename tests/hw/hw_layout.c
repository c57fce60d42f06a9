/* hw_layout.c - hand-written task module that follows the frame ABI as
 * levpp's output does, in its simplest form, whose state covers every field kind and layout an
 * image must carry (see hw_layout.h), with the digest and comparison that
 * the image tests use.
 *
 * Source it stands for:
 *
 *   void hw_layout_nop(void) {}
 *
 *   LEV_TASK void hw_layout_task(const void *arg, size_t len) {
 *       long scale = *(const long *)arg;
 *       struct hw_scalars sc; struct hw_shape *shapes, *one; ...
 *       build(...);               fills every field, see s_build
 *       lev_checkpoint();
 *       result = hw_layout_digest(...);
 *   }
 */
#include "hw_layout.h"

#include <stdio.h>
#include <string.h>

static lev_module *s_mod;

#define S_N64 1024u
#define S_NBYTES 5000u
#define S_N16 3000u
#define S_N32 1500u
#define S_NDBL 600u
#define S_NFLT 17u
#define S_NSMALL 100u

void hw_layout_nop(void) {}

/* ===================================================================
 * Building the graph
 * =================================================================== */

static float s_f32(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static double s_f64(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static void s_fill_scalars(struct hw_scalars *s, unsigned v)
{
    s->u8 = (uint8_t)(0xFE - v);
    s->i8 = (int8_t)(-7 - (int)v);
    s->u16 = (uint16_t)(0xBEEF + v);
    s->i16 = (int16_t)(-12345 + (int)v);
    s->u32 = 0xDEADBEEFu ^ v;
    s->i32 = -123456789 - (int32_t)v;
    s->f32 = s_f32(v ? 0x7F800001u + v : 0x80000000u); /* -0.0f, signalling NaNs */
    s->u64 = 0x0123456789ABCDEFull + v;
    s->i64 = INT64_MIN + 5 + v;
    s->f64 = s_f64(0x7FF4000000000ABCull + v); /* signalling NaN with a payload */
    memcpy(s->name, "abcd\xff", 5);
    s->name[0] = (char)(s->name[0] + v);
    s->w[0] = 1;
    s->w[1] = 0xFFFF;
    s->w[2] = (uint16_t)(0x8000 | v);
    s->fv[0] = s_f32(0x7F800123u);                         /* signalling NaN payload */
    s->fv[1] = s_f32(0xFFC00456u + v);                     /* negative quiet NaN payload */
    s->fv[2] = s_f32(0x00000001u);                         /* smallest denormal */
    s->dv[0] = s_f64(0x8000000000000000ull);               /* -0.0 */
    s->dv[1] = s_f64(0xFFF0000000000000ull + (v ? 1 : 0)); /* -inf or a NaN */
}

static void s_fill_point(struct hw_point *p, int i, int j)
{
    p->x = i * 10 + j;
    p->y = -(i * 10 + j);
    p->w = (i + j) % 3 == 0 ? s_f64(0x7FF8000000000000ull | (uint64_t)(i * 16 + j)) : (i + j) / 7.0;
}

static int s_build(struct hw_layout_task__frame *fr)
{
    long sc = fr->scale > 0 ? fr->scale : 1;
    size_t n64 = S_N64 * (size_t)sc, nbytes = S_NBYTES * (size_t)sc, n16 = S_N16 * (size_t)sc;
    size_t n32 = S_N32 * (size_t)sc, ndbl = S_NDBL * (size_t)sc;
    s_fill_scalars(&fr->sc, 0);
    fr->hsc = lev_alloc(s_mod, HW_LAYOUT_T_SCALARS, 3);
    fr->shapes = lev_alloc(s_mod, HW_LAYOUT_T_SHAPE, HW_LAYOUT_NSHAPES);
    fr->one = lev_alloc(s_mod, HW_LAYOUT_T_SHAPE, 1);
    fr->big64 = lev_alloc(s_mod, LEV_T_U64, n64);
    fr->bytes = lev_alloc(s_mod, LEV_T_BYTES, nbytes);
    fr->u16s = lev_alloc(s_mod, LEV_T_U16, n16);
    fr->u32s = lev_alloc(s_mod, LEV_T_U32, n32);
    fr->dbl = lev_alloc(s_mod, HW_LAYOUT_T_F64, ndbl);
    fr->flt = lev_alloc(s_mod, HW_LAYOUT_T_F32, S_NFLT);
    fr->small = lev_alloc(s_mod, LEV_T_BYTES, S_NSMALL);
    if (!fr->hsc || !fr->shapes || !fr->one || !fr->big64 || !fr->bytes || !fr->u16s || !fr->u32s ||
        !fr->dbl || !fr->flt || !fr->small)
        return -1;
    for (unsigned i = 0; i < 3; i++)
        s_fill_scalars(&fr->hsc[i], i + 1);
    for (size_t k = 0; k < n64; k++)
        fr->big64[k] = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    for (size_t k = 0; k < nbytes; k++)
        fr->bytes[k] = (uint8_t)(k * 131 + 7);
    for (size_t k = 0; k < n16; k++)
        fr->u16s[k] = (uint16_t)((k * 2654435761u) >> 7);
    for (size_t k = 0; k < n32; k++)
        fr->u32s[k] = (uint32_t)(k * 2654435761u);
    for (size_t k = 0; k < ndbl; k++)
        fr->dbl[k] = k % 4 == 0   ? s_f64(0x7FF0000000000000ull | (k + 1)) /* sNaN payloads */
                     : k % 4 == 1 ? s_f64(0x8000000000000000ull)           /* -0.0 */
                                  : (double)k * 1.5;
    for (size_t k = 0; k < S_NFLT; k++)
        fr->flt[k] = k % 3 == 0 ? s_f32(0xFF800000u | (uint32_t)(k + 1)) : (float)k / 3.0f;
    for (size_t k = 0; k < S_NSMALL; k++)
        fr->small[k] = (uint8_t)(S_NSMALL - k);
    fr->big_end = fr->big64 + n64;
    for (int i = 0; i < HW_LAYOUT_NSHAPES; i++) {
        struct hw_shape *s = &fr->shapes[i];
        s->kind = (uint16_t)(i * 3);
        s_fill_point(&s->origin, i, 9);
        for (int j = 0; j < 4; j++)
            s_fill_point(&s->pts[j], i, j);
        s->next = i + 1 < HW_LAYOUT_NSHAPES ? &fr->shapes[i + 1] : fr->one;
        s->pval = i % 10 == 9 ? fr->big64 + n64 : &fr->big64[(size_t)i * 37 % n64];
        s->ppt = &fr->shapes[(i + 5) % HW_LAYOUT_NSHAPES].pts[i % 4];
        s->flags = (uint8_t)(i * 7);
    }
    fr->one->kind = 999;
    s_fill_point(&fr->one->origin, 99, 1);
    for (int j = 0; j < 4; j++)
        s_fill_point(&fr->one->pts[j], 98, j);
    fr->one->next = NULL;
    fr->one->pval = NULL;
    fr->one->ppt = &fr->shapes[0].origin;
    fr->one->flags = 0xFF;
    fr->interior = &fr->shapes[3].pts[2];
    fr->past = fr->shapes + HW_LAYOUT_NSHAPES;
    fr->raw = NULL;
    fr->hook = hw_layout_nop;
    return 0;
}

/* ===================================================================
 * Body
 * =================================================================== */

static int hw_layout_task__run(lev_ctx *vt, void *frame)
{
    struct hw_layout_task__frame *fr = frame;
    switch (fr->t.h.pc) {
    case 0:
        break;
    case 1:
        goto resume_1;
    default:
        lev_vt_fail(vt, LEV_EFAILED, "hw_layout_task: bad resume point");
        return LEV_RUN_EXIT;
    }
    if (fr->t.len != sizeof fr->scale) {
        lev_vt_fail(vt, LEV_EINVAL, "hw_layout_task: argument is not a long");
        return LEV_RUN_EXIT;
    }
    memcpy(&fr->scale, fr->t.arg, sizeof fr->scale);
    if (s_build(fr) != 0) {
        lev_vt_fail(vt, LEV_ENOMEM, "hw_layout_task: no memory");
        return LEV_RUN_EXIT;
    }
    if (lev_poll(vt) && lev_safepoint(vt, LEV_SP_CHECKPOINT)) {
        fr->t.h.pc = 1;
        return LEV_RUN_UNWIND;
    }
resume_1:
    fr->result = (long)hw_layout_digest(fr);
    return LEV_RUN_DONE;
}

/* ===================================================================
 * Descriptors
 * =================================================================== */

#define S_NF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define S_F(st, f, kind, count, type)                                                              \
    {                                                                                              \
#f, offsetof(st, f), kind, count, type                                                     \
    }

#define S_SCALAR_FIELDS                                                                            \
    S_F(struct hw_scalars, u8, LEV_K_B1, 1, 0), S_F(struct hw_scalars, i8, LEV_K_B1, 1, 0),        \
        S_F(struct hw_scalars, u16, LEV_K_B2, 1, 0), S_F(struct hw_scalars, i16, LEV_K_B2, 1, 0),  \
        S_F(struct hw_scalars, u32, LEV_K_B4, 1, 0), S_F(struct hw_scalars, i32, LEV_K_B4, 1, 0),  \
        S_F(struct hw_scalars, f32, LEV_K_B4, 1, 0), S_F(struct hw_scalars, u64, LEV_K_B8, 1, 0),  \
        S_F(struct hw_scalars, i64, LEV_K_B8, 1, 0), S_F(struct hw_scalars, f64, LEV_K_B8, 1, 0),  \
        S_F(struct hw_scalars, name, LEV_K_B1, 5, 0), S_F(struct hw_scalars, w, LEV_K_B2, 3, 0),   \
        S_F(struct hw_scalars, fv, LEV_K_B4, 3, 0), S_F(struct hw_scalars, dv, LEV_K_B8, 2, 0)

static const lev_field_desc scalars__fields[] = {S_SCALAR_FIELDS};
/* The later version: a field added in the padding after f32. */
static const lev_field_desc scalars_alt__fields[] = {
    S_SCALAR_FIELDS,
    {"added", offsetof(struct hw_scalars, f32) + 4, LEV_K_B4, 1, 0},
};

static const lev_field_desc point__fields[] = {
    S_F(struct hw_point, x, LEV_K_B4, 1, 0),
    S_F(struct hw_point, y, LEV_K_B4, 1, 0),
    S_F(struct hw_point, w, LEV_K_B8, 1, 0),
};
static const lev_field_desc shape__fields[] = {
    S_F(struct hw_shape, kind, LEV_K_B2, 1, 0),
    S_F(struct hw_shape, origin, LEV_K_REC, 1, HW_LAYOUT_T_POINT),
    S_F(struct hw_shape, pts, LEV_K_REC, 4, HW_LAYOUT_T_POINT),
    S_F(struct hw_shape, next, LEV_K_PTR, 1, 0),
    S_F(struct hw_shape, pval, LEV_K_PTR, 1, 0),
    S_F(struct hw_shape, ppt, LEV_K_PTR, 1, 0),
    S_F(struct hw_shape, flags, LEV_K_B1, 1, 0),
};
static const lev_field_desc f64__fields[] = {{"v", 0, LEV_K_B8, 1, 0}};
static const lev_field_desc f32__fields[] = {{"v", 0, LEV_K_B4, 1, 0}};

static const lev_field_desc task__fields[] = {
    {"arg", offsetof(struct hw_layout_task__frame, t.arg), LEV_K_PTR, 1, 0},
    {"len", offsetof(struct hw_layout_task__frame, t.len), LEV_K_B8, 1, 0},
    S_F(struct hw_layout_task__frame, scale, LEV_K_B8, 1, 0),
    S_F(struct hw_layout_task__frame, sc, LEV_K_REC, 1, HW_LAYOUT_T_SCALARS),
    S_F(struct hw_layout_task__frame, hsc, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, shapes, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, one, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, interior, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, past, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, big64, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, big_end, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, bytes, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, u16s, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, u32s, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, dbl, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, flt, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, small, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, raw, LEV_K_PTR, 1, 0),
    S_F(struct hw_layout_task__frame, hook, LEV_K_FNPTR, 1, 0),
    S_F(struct hw_layout_task__frame, result, LEV_K_B8, 1, 0),
};

#define S_TYPES(scalars_fields)                                                                    \
    {"frame hw_layout_task", sizeof(struct hw_layout_task__frame), S_NF(task__fields),             \
     task__fields, _Alignof(struct hw_layout_task__frame)},                                        \
        {"struct hw_scalars", sizeof(struct hw_scalars), S_NF(scalars_fields), scalars_fields,     \
         _Alignof(struct hw_scalars)},                                                             \
        {"struct hw_point", sizeof(struct hw_point), S_NF(point__fields), point__fields,           \
         _Alignof(struct hw_point)},                                                               \
        {"struct hw_shape", sizeof(struct hw_shape), S_NF(shape__fields), shape__fields,           \
         _Alignof(struct hw_shape)},                                                               \
        {"double", sizeof(double), 1, f64__fields, _Alignof(double)},                              \
    {                                                                                              \
        "float", sizeof(float), 1, f32__fields, _Alignof(float)                                    \
    }

static const lev_type_desc s_types[] = {S_TYPES(scalars__fields)};
static const lev_type_desc s_types_alt[] = {S_TYPES(scalars_alt__fields)};

static const lev_fn_desc s_fns[HW_LAYOUT_NFNS] = {
    [HW_LAYOUT_FN_NOP] = {"hw_layout_nop", hw_layout_nop, NULL, 0, 0},
    [HW_LAYOUT_FN_TASK] = {"hw_layout_task", NULL, hw_layout_task__run, HW_LAYOUT_T_TASK,
                           LEV_FN_TASK},
};

const lev_module_desc hw_layout_desc = {
    LEV_ABI_VERSION, "hw_layout", S_NF(s_types), s_types, HW_LAYOUT_NFNS, s_fns, 0, NULL,
};

const lev_module_desc hw_layout_desc_alt = {
    LEV_ABI_VERSION, "hw_layout", S_NF(s_types_alt), s_types_alt, HW_LAYOUT_NFNS, s_fns, 0, NULL,
};

const lev_module *hw_layout_module(void)
{
    if (!s_mod && lev_module_register(&hw_layout_desc, &s_mod) != 0)
        return NULL;
    return s_mod;
}

/* ===================================================================
 * Digest and comparison
 * =================================================================== */

typedef struct s_fnv {
    uint64_t h;
} s_fnv;

static void s_mix(s_fnv *st, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        st->h ^= b[i];
        st->h *= 0x100000001b3ull;
    }
}

static void s_mix_i64(s_fnv *st, int64_t v) { s_mix(st, &v, sizeof v); }

/* Byte offset of p from base, or -1 for NULL. */
static int64_t s_rel(const void *p, const void *base)
{
    return p ? (int64_t)((const char *)p - (const char *)base) : -1;
}

static void s_mix_scalars(s_fnv *st, const struct hw_scalars *s)
{
#define S_MIXF(f) s_mix(st, &s->f, sizeof s->f)
    S_MIXF(u8);
    S_MIXF(i8);
    S_MIXF(u16);
    S_MIXF(i16);
    S_MIXF(u32);
    S_MIXF(i32);
    S_MIXF(f32);
    S_MIXF(u64);
    S_MIXF(i64);
    S_MIXF(f64);
    S_MIXF(name);
    S_MIXF(w);
    S_MIXF(fv);
    S_MIXF(dv);
#undef S_MIXF
}

static void s_mix_point(s_fnv *st, const struct hw_point *p)
{
    s_mix(st, &p->x, sizeof p->x);
    s_mix(st, &p->y, sizeof p->y);
    s_mix(st, &p->w, sizeof p->w);
}

static void s_mix_shape(s_fnv *st, const struct hw_layout_task__frame *fr, const struct hw_shape *s)
{
    s_mix(st, &s->kind, sizeof s->kind);
    s_mix_point(st, &s->origin);
    for (int j = 0; j < 4; j++)
        s_mix_point(st, &s->pts[j]);
    s_mix_i64(st, s->next == fr->one ? -2 : s_rel(s->next, fr->shapes));
    s_mix_i64(st, s_rel(s->pval, fr->big64));
    s_mix_i64(st, s_rel(s->ppt, fr->shapes));
    s_mix(st, &s->flags, sizeof s->flags);
}

static size_t s_size(const void *p) { return lev_alloc_size(s_mod, p); }

uint64_t hw_layout_digest(const struct hw_layout_task__frame *fr)
{
    s_fnv st = {0xcbf29ce484222325ull};
    s_mix_i64(&st, fr->scale);
    s_mix_scalars(&st, &fr->sc);
    size_t nhsc = s_size(fr->hsc) / sizeof *fr->hsc;
    s_mix_i64(&st, (int64_t)nhsc);
    for (size_t i = 0; i < nhsc; i++)
        s_mix_scalars(&st, &fr->hsc[i]);
    size_t nshapes = s_size(fr->shapes) / sizeof *fr->shapes;
    s_mix_i64(&st, (int64_t)nshapes);
    for (size_t i = 0; i < nshapes; i++)
        s_mix_shape(&st, fr, &fr->shapes[i]);
    s_mix_shape(&st, fr, fr->one);
    s_mix_i64(&st, s_rel(fr->interior, fr->shapes));
    s_mix_i64(&st, s_rel(fr->past, fr->shapes));
    s_mix_i64(&st, s_rel(fr->big_end, fr->big64));
    const void *arrays[] = {fr->big64, fr->bytes, fr->u16s, fr->u32s, fr->dbl, fr->flt, fr->small};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        size_t n = s_size(arrays[i]);
        s_mix_i64(&st, (int64_t)n);
        s_mix(&st, arrays[i], n);
    }
    s_mix_i64(&st, fr->raw == NULL);
    s_mix_i64(&st, fr->hook == hw_layout_nop);
    return st.h;
}

#define S_WHY(...)                                                                                 \
    do {                                                                                           \
        snprintf(why, whylen, __VA_ARGS__);                                                        \
        return 0;                                                                                  \
    } while (0)

static int s_scalars_equal(const struct hw_scalars *a, const struct hw_scalars *b,
                           const char *where, char *why, size_t whylen)
{
#define S_CMPF(f)                                                                                  \
    if (memcmp(&a->f, &b->f, sizeof a->f) != 0)                                                    \
    S_WHY("%s.%s differs", where, #f)
    S_CMPF(u8);
    S_CMPF(i8);
    S_CMPF(u16);
    S_CMPF(i16);
    S_CMPF(u32);
    S_CMPF(i32);
    S_CMPF(f32);
    S_CMPF(u64);
    S_CMPF(i64);
    S_CMPF(f64);
    S_CMPF(name);
    S_CMPF(w);
    S_CMPF(fv);
    S_CMPF(dv);
#undef S_CMPF
    return 1;
}

static int s_point_equal(const struct hw_point *a, const struct hw_point *b)
{
    return a->x == b->x && a->y == b->y && memcmp(&a->w, &b->w, sizeof a->w) == 0;
}

static int s_shape_equal(const struct hw_layout_task__frame *fa, const struct hw_shape *a,
                         const struct hw_layout_task__frame *fb, const struct hw_shape *b,
                         const char *where, char *why, size_t whylen)
{
    if (a->kind != b->kind || a->flags != b->flags)
        S_WHY("%s: kind or flags differ", where);
    if (!s_point_equal(&a->origin, &b->origin))
        S_WHY("%s.origin differs", where);
    for (int j = 0; j < 4; j++)
        if (!s_point_equal(&a->pts[j], &b->pts[j]))
            S_WHY("%s.pts[%d] differs", where, j);
    int64_t na = a->next == fa->one ? -2 : s_rel(a->next, fa->shapes);
    int64_t nb = b->next == fb->one ? -2 : s_rel(b->next, fb->shapes);
    if (na != nb)
        S_WHY("%s.next points to %lld, not %lld", where, (long long)nb, (long long)na);
    if (s_rel(a->pval, fa->big64) != s_rel(b->pval, fb->big64))
        S_WHY("%s.pval differs", where);
    if (s_rel(a->ppt, fa->shapes) != s_rel(b->ppt, fb->shapes))
        S_WHY("%s.ppt differs", where);
    return 1;
}

int hw_layout_equal(const struct hw_layout_task__frame *a, const struct hw_layout_task__frame *b,
                    char *why, size_t whylen)
{
    char where[64];
    if (a->scale != b->scale || a->t.len != b->t.len)
        S_WHY("scale or argument length differs");
    if (memcmp(a->t.arg, b->t.arg, a->t.len) != 0)
        S_WHY("argument differs");
    if (!s_scalars_equal(&a->sc, &b->sc, "sc", why, whylen))
        return 0;
    if (s_size(a->hsc) != s_size(b->hsc) || s_size(a->shapes) != s_size(b->shapes) ||
        s_size(a->one) != s_size(b->one))
        S_WHY("an object changed size");
    for (size_t i = 0; i < s_size(a->hsc) / sizeof *a->hsc; i++) {
        snprintf(where, sizeof where, "hsc[%zu]", i);
        if (!s_scalars_equal(&a->hsc[i], &b->hsc[i], where, why, whylen))
            return 0;
    }
    for (size_t i = 0; i < s_size(a->shapes) / sizeof *a->shapes; i++) {
        snprintf(where, sizeof where, "shapes[%zu]", i);
        if (!s_shape_equal(a, &a->shapes[i], b, &b->shapes[i], where, why, whylen))
            return 0;
    }
    if (!s_shape_equal(a, a->one, b, b->one, "one", why, whylen))
        return 0;
    if (s_rel(a->interior, a->shapes) != s_rel(b->interior, b->shapes))
        S_WHY("interior differs");
    if (s_rel(a->past, a->shapes) != s_rel(b->past, b->shapes))
        S_WHY("past differs");
    if (s_rel(a->big_end, a->big64) != s_rel(b->big_end, b->big64))
        S_WHY("big_end differs");
    const void *xa[] = {a->big64, a->bytes, a->u16s, a->u32s, a->dbl, a->flt, a->small};
    const void *xb[] = {b->big64, b->bytes, b->u16s, b->u32s, b->dbl, b->flt, b->small};
    static const char *const names[] = {"big64", "bytes", "u16s", "u32s", "dbl", "flt", "small"};
    for (size_t i = 0; i < sizeof xa / sizeof xa[0]; i++) {
        size_t n = s_size(xa[i]);
        if (n == 0 || n != s_size(xb[i]))
            S_WHY("%s has %zu bytes, not %zu", names[i], s_size(xb[i]), n);
        if (memcmp(xa[i], xb[i], n) != 0)
            S_WHY("%s content differs", names[i]);
    }
    if (a->raw != b->raw)
        S_WHY("raw differs");
    if (a->hook != b->hook)
        S_WHY("hook differs");
    if (a->result != b->result)
        S_WHY("result differs");
    return 1;
}

uint64_t hw_layout_live_bytes(const struct hw_layout_task__frame *fr)
{
    const void *objs[] = {fr->t.arg, fr->hsc,  fr->shapes, fr->one, fr->big64, fr->bytes,
                          fr->u16s,  fr->u32s, fr->dbl,    fr->flt, fr->small};
    uint64_t n = sizeof *fr;
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        n += s_size(objs[i]);
    return n;
}

uint32_t hw_layout_heap_objects(void) { return 11; }
