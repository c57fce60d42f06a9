/* module.c - task module registration: validates the descriptors that
 * generated code emits, flattens every type into scalar and pointer runs
 * for capture, builds GC descriptors and the lookup tables that turn
 * addresses back into function and static symbol ids.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_THREADS
#include <gc/gc.h>
#include <gc/gc_typed.h>

#include "module.h"
#include "rt.h"
#include "vec.h"

/* ===================================================================
 * Helpers
 * =================================================================== */

static uint32_t s_kind_width(uint32_t kind)
{
    switch (kind) {
    case LEV_K_B1:
        return 1;
    case LEV_K_B2:
        return 2;
    case LEV_K_B4:
        return 4;
    case LEV_K_B8:
        return 8;
    case LEV_K_PTR:
        return (uint32_t)sizeof(void *);
    case LEV_K_FNPTR:
        return (uint32_t)sizeof(void (*)(void));
    default:
        return 0;
    }
}

uint32_t rt_kind_width(uint32_t kind) { return s_kind_width(kind); }

typedef struct s_hash {
    uint64_t h;
} s_hash;

static void s_hash_bytes(s_hash *st, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        st->h ^= b[i];
        st->h *= 0x100000001b3ull;
    }
}

static void s_hash_u32(s_hash *st, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    s_hash_bytes(st, b, 4);
}

static void s_hash_str(s_hash *st, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    s_hash_u32(st, (uint32_t)n);
    s_hash_bytes(st, s, n);
}

/* ===================================================================
 * Type flattening
 * =================================================================== */

typedef struct s_runs {
    rt_run *v;
    uint32_t n;
    size_t cap;
} s_runs;

static int s_runs_add(s_runs *r, const rt_run *x)
{
    uint32_t offset = x->offset, kind = x->kind, count = x->count;
    uint32_t w = kind == LEV_K_TAGGED ? x->stride : s_kind_width(kind);
    if (r->n && kind != LEV_K_TAGGED) {
        rt_run *last = &r->v[r->n - 1];
        /* Pointers stay apart per field, so a capture error names the field. */
        if (last->kind == kind && last->stride == w &&
            (kind <= LEV_K_B8 || last->name == x->name) &&
            (uint64_t)last->offset + (uint64_t)last->count * w == offset) {
            last->count += count;
            return 0;
        }
    }
    if (RT_VEC_RESERVE(r->v, r->cap, r->n, 1))
        return LEV_ENOMEM;
    r->v[r->n] = *x;
    r->v[r->n++].stride = w;
    return 0;
}

enum { S_TODO = 0, S_BUSY = 1, S_DONE = 2 };

static int s_flatten(lev_module *m, uint32_t t, unsigned char *state);

/* Appends the runs of `count` elements of type `t` at `base`. */
static int s_append_rec(lev_module *m, s_runs *r, uint32_t base, uint32_t t, uint32_t count,
                        unsigned char *state)
{
    int rc = s_flatten(m, t, state);
    if (rc)
        return rc;
    const rt_type *et = &m->types[t];
    for (uint32_t i = 0; i < count; i++) {
        for (uint32_t k = 0; k < et->nruns; k++) {
            const rt_run *er = &et->runs[k];
            rt_run x = *er;
            x.offset = base + i * et->size + er->offset;
            if (er->kind == LEV_K_TAGGED || er->stride == s_kind_width(er->kind)) {
                rc = s_runs_add(r, &x);
                if (rc)
                    return rc;
            } else {
                x.count = 1;
                for (uint32_t j = 0; j < er->count; j++, x.offset += er->stride) {
                    rc = s_runs_add(r, &x);
                    if (rc)
                        return rc;
                }
            }
        }
    }
    return 0;
}

static int s_run_cmp(const void *a, const void *b)
{
    const rt_run *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Field f of count 0: the flexible array member of type rt (one, after
 * every other field), of elements of a built-in type (a scalar or
 * pointer kind) or of a type of the module without one of its own. */
static int s_tail_field(lev_module *m, rt_type *rt, const lev_field_desc *f, const char *fname,
                        unsigned char *state)
{
    if (rt->tail)
        return rt_err(LEV_EINVAL, "type %s has two trailing arrays (%s)", rt->name, fname);
    uint32_t et = f->kind - LEV_K_B1 + LEV_T_BYTES; /* the built-in type of a kind */
    if (f->kind == LEV_K_REC) {
        if (f->type < LEV_T_USER || f->type >= m->ntypes)
            return rt_err(LEV_EINVAL, "field %s.%s names unknown type %u", rt->name, fname,
                          f->type);
        int rc = s_flatten(m, f->type, state);
        if (rc)
            return rc;
        if (m->types[f->type].tail)
            return rt_err(LEV_EINVAL, "field %s.%s: elements with a trailing array", rt->name,
                          fname);
        et = f->type;
    } else if (!s_kind_width(f->kind)) {
        return rt_err(LEV_EINVAL, "field %s.%s has unknown kind %u", rt->name, fname, f->kind);
    }
    if (f->offset > rt->size)
        return rt_err(LEV_EINVAL, "field %s.%s lies outside its type (offset %u, size %u)",
                      rt->name, fname, f->offset, rt->size);
    rt->tail = true;
    rt->tail_off = f->offset;
    rt->tail_type = et;
    return 0;
}

/* The name of the field of count 0 of td. */
static const char *s_tail_name(const lev_type_desc *td)
{
    for (uint32_t i = 0; i < td->nfields; i++)
        if (td->fields[i].count == 0)
            return td->fields[i].name ? td->fields[i].name : "?";
    return "?";
}

void rt_type_items(const lev_module *m, const rt_type *t, uint32_t count, uint64_t items[4])
{
    if (!t->tail) {
        for (int k = 0; k < 4; k++)
            items[k] = (uint64_t)t->items[k] * count;
        return;
    }
    uint32_t roff, rem, n = rt_tail_elems(m, t, count, &roff, &rem);
    const rt_type *e = &m->types[t->tail_type];
    for (int k = 0; k < 4; k++)
        items[k] = t->items[k] + (uint64_t)e->items[k] * n;
    items[0] += rem;
}

/* Type rt (descriptor td) as a tagged union's tag table: its tag and
 * its rows, checked (see LEV_K_TAGGED in lev_abi.h); one run of bytes,
 * should anything allocate it. */
static int s_tag_table(rt_type *rt, const lev_type_desc *td)
{
    const lev_field_desc *tag = &td->fields[0];
    uint32_t w = tag->count;
    if (td->size > 8 || (w != 1 && w != 2 && w != 4 && w != 8))
        return rt_err(LEV_EINVAL, "tag table %s: a union of %u bytes, a tag of %u", rt->name,
                      td->size, w);
    rt->tag_table = true;
    rt->tag_delta = (int32_t)tag->offset;
    rt->tag_width = w;
    rt->arms = td->fields + 1;
    rt->narms = td->nfields - 1;
    uint64_t mask = w == 8 ? UINT64_MAX : (1ull << (w * 8)) - 1;
    for (uint32_t i = 0; i < rt->narms; i++) {
        const lev_field_desc *a = &rt->arms[i];
        if (a->kind != LEV_K_PTR && a->kind != LEV_K_FNPTR && a->kind != LEV_K_B1)
            return rt_err(LEV_EINVAL, "tag table %s: member %s has kind %u", rt->name,
                          a->name ? a->name : "?", a->kind);
        if (a->kind != LEV_K_B1 && td->size != sizeof(void *))
            return rt_err(LEV_EINVAL, "tag table %s: a pointer in a union of %u bytes", rt->name,
                          td->size);
        rt->has_ptrs |= a->kind != LEV_K_B1;
        uint64_t v = ((uint64_t)a->type << 32 | a->offset) & mask;
        for (uint32_t j = 0; j < i; j++)
            if ((((uint64_t)rt->arms[j].type << 32 | rt->arms[j].offset) & mask) == v)
                return rt_err(LEV_EINVAL, "tag table %s lists the tag value %llu twice", rt->name,
                              (unsigned long long)v);
    }
    rt->runs = malloc(sizeof(rt_run));
    if (!rt->runs)
        return LEV_ENOMEM;
    rt->runs[0] = (rt_run){0, LEV_K_B1, td->size, 1, rt->name, 0};
    rt->nruns = 1;
    rt->dense = true;
    rt->dense_kind = LEV_K_B1;
    return 0;
}

/* Checks tagged-union field f of type td (rt): its tag table, and its tag
 * inside td. */
static int s_tagged_field(lev_module *m, const rt_type *rt, const lev_type_desc *td,
                          const lev_field_desc *f, unsigned char *state)
{
    const char *fname = f->name ? f->name : "?";
    int rc;
    if (f->type < LEV_T_USER || f->type >= m->ntypes || f->count != 1)
        return rt_err(LEV_EINVAL, "tagged union %s.%s: bad tag table %u or count %u", rt->name,
                      fname, f->type, f->count);
    if ((rc = s_flatten(m, f->type, state)))
        return rc;
    const rt_type *tt = &m->types[f->type];
    int64_t at = (int64_t)f->offset + tt->tag_delta;
    if (!tt->tag_table)
        return rt_err(LEV_EINVAL, "tagged union %s.%s: type %s is no tag table", rt->name, fname,
                      tt->name);
    if (at < 0 || (uint64_t)at + tt->tag_width > td->size ||
        (at + tt->tag_width > f->offset && at < (int64_t)f->offset + tt->size))
        return rt_err(LEV_EINVAL, "tagged union %s.%s: its tag lies outside %s or inside it",
                      rt->name, fname, rt->name);
    return 0;
}

uint32_t rt_tagged_arm(const rt_type *tt, const char *u, uint64_t *value)
{
    const unsigned char *p = (const unsigned char *)u + tt->tag_delta;
    uint64_t v;
    switch (tt->tag_width) {
    case 1:
        v = *p;
        break;
    case 2: {
        uint16_t x;
        memcpy(&x, p, 2);
        v = x;
        break;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        v = x;
        break;
    }
    default:
        memcpy(&v, p, 8);
    }
    uint64_t mask = tt->tag_width == 8 ? UINT64_MAX : (1ull << (tt->tag_width * 8)) - 1;
    if (value)
        *value = v;
    for (uint32_t i = 0; i < tt->narms; i++)
        if ((((uint64_t)tt->arms[i].type << 32 | tt->arms[i].offset) & mask) == v)
            return tt->arms[i].kind;
    return 0;
}

static int s_flatten(lev_module *m, uint32_t t, unsigned char *state)
{
    if (state[t] == S_DONE)
        return 0;
    if (state[t] == S_BUSY)
        return rt_err(LEV_EINVAL, "type %u (%s) contains itself", t,
                      m->desc->types[t - LEV_T_USER].name);
    state[t] = S_BUSY;
    const lev_type_desc *td = &m->desc->types[t - LEV_T_USER];
    rt_type *rt = &m->types[t];
    rt->name = td->name ? td->name : "?";
    rt->size = td->size;
    rt->align = td->align;
    if (td->size == 0)
        return rt_err(LEV_EINVAL, "type %s has size 0", rt->name);
    if (td->align & (td->align - 1))
        return rt_err(LEV_EINVAL, "type %s has alignment %u, not a power of two", rt->name,
                      td->align);
    if (td->nfields && !td->fields)
        return rt_err(LEV_EINVAL, "type %s has no field table", rt->name);
    if (td->nfields && td->fields[0].kind == LEV_K_TAG) {
        int rc = s_tag_table(rt, td);
        if (!rc)
            state[t] = S_DONE;
        return rc;
    }

    /* Fields in declaration order may be unsorted; collect, then sort. */
    s_runs r = {0};
    int rc = 0;
    for (uint32_t i = 0; i < td->nfields && !rc; i++) {
        const lev_field_desc *f = &td->fields[i];
        const char *fname = f->name ? f->name : "?";
        if (f->count == 0) {
            rc = s_tail_field(m, rt, f, fname, state);
            if (rc)
                break;
            continue;
        }
        uint64_t esz;
        if (f->kind == LEV_K_TAGGED) {
            if ((rc = s_tagged_field(m, rt, td, f, state)))
                break;
            esz = m->types[f->type].size;
        } else if (f->kind == LEV_K_REC) {
            if (f->type < LEV_T_USER || f->type >= m->ntypes) {
                rc = rt_err(LEV_EINVAL, "field %s.%s names unknown type %u", rt->name, fname,
                            f->type);
                break;
            }
            rc = s_flatten(m, f->type, state);
            if (rc)
                break;
            esz = m->types[f->type].size;
        } else {
            esz = s_kind_width(f->kind);
            if (!esz) {
                rc =
                    rt_err(LEV_EINVAL, "field %s.%s has unknown kind %u", rt->name, fname, f->kind);
                break;
            }
        }
        if ((uint64_t)f->offset + esz * f->count > td->size) {
            rc = rt_err(LEV_EINVAL, "field %s.%s lies outside its type (offset %u, size %u)",
                        rt->name, fname, f->offset, td->size);
            break;
        }
        if (f->kind == LEV_K_REC)
            rc = s_append_rec(m, &r, f->offset, f->type, f->count, state);
        else {
            /* Do not merge across fields here: sorting comes first. */
            if (RT_VEC_RESERVE(r.v, r.cap, r.n, 1)) {
                rc = LEV_ENOMEM;
                break;
            }
            r.v[r.n++] = (rt_run){f->offset,     f->kind, f->count,
                                  (uint32_t)esz, fname,   f->kind == LEV_K_TAGGED ? f->type : 0};
        }
    }
    if (rc) {
        free(r.v);
        return rc;
    }
    for (uint32_t i = 0; i < r.n && rt->tail && !rc; i++)
        if ((uint64_t)r.v[i].offset + (uint64_t)r.v[i].count * r.v[i].stride > rt->tail_off)
            rc = rt_err(LEV_EINVAL,
                        "field %s.%s lies after the trailing array %s (the field of count 0, "
                        "which must be the last)",
                        rt->name, r.v[i].name, s_tail_name(td));
    if (rc) {
        free(r.v);
        return rc;
    }
    if (r.n > 1)
        qsort(r.v, r.n, sizeof *r.v, s_run_cmp);
    /* Reject overlaps (a union holding a pointer cannot be described),
     * then merge adjacent runs of one kind. */
    s_runs merged = {0};
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < r.n && !rc; i++) {
        const rt_run *x = &r.v[i];
        if (x->offset < prev_end)
            rc = rt_err(LEV_EINVAL, "field %s.%s overlaps another field", rt->name, x->name);
        else {
            prev_end = (uint64_t)x->offset + (uint64_t)x->count * x->stride;
            rc = s_runs_add(&merged, x);
        }
    }
    free(r.v);
    if (rc) {
        free(merged.v);
        return rc;
    }
    rt->runs = merged.v;
    rt->nruns = merged.n;
    for (uint32_t i = 0; i < rt->nruns; i++)
        if (rt->runs[i].kind == LEV_K_PTR || rt->runs[i].kind == LEV_K_FNPTR ||
            (rt->runs[i].kind == LEV_K_TAGGED && m->types[rt->runs[i].table].has_ptrs))
            rt->has_ptrs = true;
    if (rt->tail)
        rt->has_ptrs |= m->types[rt->tail_type].has_ptrs;
    if (!rt->tail && rt->nruns == 1 && rt->runs[0].offset == 0 && rt->runs[0].kind <= LEV_K_B8 &&
        (uint64_t)rt->runs[0].count * rt->runs[0].stride == rt->size) {
        rt->dense = true;
        rt->dense_kind = rt->runs[0].kind;
    }
    state[t] = S_DONE;
    return 0;
}

/* The image codec's summary of a type's runs (see rt_type.items). */
static void s_make_plan(rt_type *t)
{
    uint64_t covered = 0;
    memset(t->items, 0, sizeof t->items);
    for (uint32_t i = 0; i < t->nruns; i++) {
        const rt_run *r = &t->runs[i];
        if (r->kind == LEV_K_TAGGED) { /* a flag byte and an 8-byte item */
            t->items[0] += r->count;
            t->items[3] += r->count;
            covered += r->stride;
            continue;
        }
        t->items[r->kind <= LEV_K_B8 ? r->kind - LEV_K_B1 : 3] += r->count;
        covered += (uint64_t)r->count * s_kind_width(r->kind);
    }
    t->packed = covered == t->size && !t->tail;
}

/* GC descriptor for header + one element: data pointers only (function
 * pointers point at code), and tagged unions that may hold one (a word
 * the collector takes for a possible pointer whatever the tag). 0 means
 * "allocate conservatively". */
static void s_make_gc_descr(const lev_module *m, rt_type *t)
{
    t->gc_descr = 0;
    if (!t->has_ptrs || t->tail) /* a trailing array: scanned conservatively */
        return;
    size_t words = (RT_OBJ_HDR_SIZE + t->size + sizeof(GC_word) - 1) / sizeof(GC_word);
    GC_word *bm = calloc((words + GC_WORDSZ - 1) / GC_WORDSZ, sizeof(GC_word));
    if (!bm)
        return;
    bool ok = true;
    for (uint32_t i = 0; i < t->nruns && ok; i++) {
        const rt_run *r = &t->runs[i];
        if (r->kind != LEV_K_PTR && !(r->kind == LEV_K_TAGGED && m->types[r->table].has_ptrs))
            continue;
        for (uint32_t j = 0; j < r->count; j++) {
            size_t off = RT_OBJ_HDR_SIZE + r->offset + (size_t)j * r->stride;
            if (off % sizeof(GC_word)) {
                ok = false;
                break;
            }
            GC_set_bit(bm, off / sizeof(GC_word));
        }
    }
    if (ok)
        t->gc_descr = (uintptr_t)GC_make_descriptor(bm, words);
    free(bm);
}

/* ===================================================================
 * Registration
 * =================================================================== */

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static lev_module *s_modules;
static const lev_module *s_sort_mod;

static int s_static_cmp(const void *a, const void *b)
{
    const lev_static_desc *sd = s_sort_mod->desc->statics;
    uintptr_t x = (uintptr_t)sd[*(const uint32_t *)a].addr;
    uintptr_t y = (uintptr_t)sd[*(const uint32_t *)b].addr;
    return x < y ? -1 : x > y;
}

static uint32_t s_ptr_hash(uintptr_t p, uint32_t cap)
{
    uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (cap - 1);
}

static void s_module_free(lev_module *m)
{
    if (!m)
        return;
    if (m->types)
        for (uint32_t i = 0; i < m->ntypes; i++)
            free(m->types[i].runs);
    free(m->types);
    free(m->static_by_addr);
    free(m->fn_keys);
    free(m->fn_vals);
    free(m);
}

static void s_builtin(lev_module *m, uint32_t id, const char *name, uint32_t kind)
{
    rt_type *t = &m->types[id];
    uint32_t w = s_kind_width(kind);
    t->name = name;
    t->size = w;
    t->runs = malloc(sizeof(rt_run));
    if (!t->runs)
        return;
    t->runs[0] = (rt_run){0, kind, 1, w, name, 0};
    t->nruns = 1;
    t->has_ptrs = kind == LEV_K_PTR || kind == LEV_K_FNPTR;
    t->dense = !t->has_ptrs;
    t->dense_kind = kind;
    s_make_gc_descr(m, t);
    s_make_plan(t);
}

/* The type table: built-in types, then each user type flattened into
 * runs, with its GC descriptor and codec plan. */
static int s_build_types(lev_module *m)
{
    unsigned char *state = calloc(m->ntypes, 1);
    if (!state)
        return LEV_ENOMEM;
    int rc = 0;
    s_builtin(m, LEV_T_BYTES, "bytes", LEV_K_B1);
    s_builtin(m, LEV_T_U16, "u16", LEV_K_B2);
    s_builtin(m, LEV_T_U32, "u32", LEV_K_B4);
    s_builtin(m, LEV_T_U64, "u64", LEV_K_B8);
    s_builtin(m, LEV_T_PTR, "pointer", LEV_K_PTR);
    s_builtin(m, LEV_T_FNPTR, "function pointer", LEV_K_FNPTR);
    s_builtin(m, LEV_T_UNTYPED, "untyped", LEV_K_B1);
    m->types[LEV_T_UNTYPED].conservative = true;
    for (uint32_t i = LEV_T_BYTES; i <= LEV_T_UNTYPED; i++) {
        state[i] = S_DONE;
        if (!m->types[i].runs) {
            rc = LEV_ENOMEM;
            break;
        }
    }
    for (uint32_t t = LEV_T_USER; t < m->ntypes && !rc; t++)
        rc = s_flatten(m, t, state);
    free(state);
    if (rc)
        return rc;
    for (uint32_t t = LEV_T_USER; t < m->ntypes; t++) {
        s_make_gc_descr(m, &m->types[t]);
        s_make_plan(&m->types[t]);
    }
    return 0;
}

/* Checks the functions' frame types and fills the address -> id table. */
static int s_build_fns(lev_module *m)
{
    const lev_module_desc *d = m->desc;
    for (uint32_t i = 0; i < d->nfns; i++) {
        const lev_fn_desc *f = &d->fns[i];
        const char *fname = f->name ? f->name : "?";
        if (f->frame_type && (f->frame_type < LEV_T_USER || f->frame_type >= m->ntypes))
            return rt_err(LEV_EINVAL, "function %s names unknown frame type %u", fname,
                          f->frame_type);
        if (f->frame_type && m->types[f->frame_type].size < sizeof(lev_frame))
            return rt_err(LEV_EINVAL, "frame of function %s is smaller than its header", fname);
        if ((f->flags & LEV_FN_TASK) &&
            (!f->entry || !f->frame_type || m->types[f->frame_type].size < sizeof(lev_task_frame)))
            return rt_err(LEV_EINVAL, "task entry %s lacks a body or a task frame", fname);
        if ((f->flags & LEV_FN_MAIN) &&
            (!f->entry || !f->frame_type || m->types[f->frame_type].size < sizeof(lev_main_frame)))
            return rt_err(LEV_EINVAL, "main entry %s lacks a body or a main frame", fname);
    }
    m->fn_cap = 16;
    while (m->fn_cap < d->nfns * 2u + 2u)
        m->fn_cap *= 2;
    m->fn_keys = calloc(m->fn_cap, sizeof *m->fn_keys);
    m->fn_vals = calloc(m->fn_cap, sizeof *m->fn_vals);
    if (!m->fn_keys || !m->fn_vals)
        return LEV_ENOMEM;
    for (uint32_t i = 0; i < d->nfns; i++) {
        uintptr_t a = (uintptr_t)d->fns[i].native;
        if (!a)
            continue;
        uint32_t h = s_ptr_hash(a, m->fn_cap);
        while (m->fn_keys[h] && m->fn_keys[h] != a)
            h = (h + 1) & (m->fn_cap - 1);
        if (!m->fn_keys[h]) {
            m->fn_keys[h] = a;
            m->fn_vals[h] = i;
        }
    }
    return 0;
}

/* Checks the statics and sorts them by address. */
static int s_build_statics(lev_module *m)
{
    const lev_module_desc *d = m->desc;
    m->nstatics = d->nstatics;
    m->static_by_addr = calloc(d->nstatics ? d->nstatics : 1, sizeof *m->static_by_addr);
    if (!m->static_by_addr)
        return LEV_ENOMEM;
    for (uint32_t i = 0; i < d->nstatics; i++) {
        const lev_static_desc *s = &d->statics[i];
        if (!s->addr || s->type >= m->ntypes || !m->types[s->type].size || s->count == 0)
            return rt_err(LEV_EINVAL, "static %s has no address, an unknown type or count 0",
                          s->name ? s->name : "?");
        m->static_by_addr[i] = i;
    }
    s_sort_mod = m;
    qsort(m->static_by_addr, d->nstatics, sizeof(uint32_t), s_static_cmp);
    return 0;
}

/* The module's identity: a hash of its descriptors' names and layout. */
static uint64_t s_module_hash(const lev_module_desc *d)
{
    s_hash h = {0xcbf29ce484222325ull};
    s_hash_u32(&h, LEV_ABI_VERSION);
    s_hash_u32(&h, (uint32_t)sizeof(void *));
    s_hash_str(&h, d->name);
    for (uint32_t i = 0; i < d->ntypes; i++) {
        const lev_type_desc *t = &d->types[i];
        s_hash_str(&h, t->name);
        s_hash_u32(&h, t->size);
        s_hash_u32(&h, t->nfields);
        for (uint32_t k = 0; k < t->nfields; k++) {
            s_hash_str(&h, t->fields[k].name);
            s_hash_u32(&h, t->fields[k].offset);
            s_hash_u32(&h, t->fields[k].kind);
            s_hash_u32(&h, t->fields[k].count);
            s_hash_u32(&h, t->fields[k].type);
        }
    }
    for (uint32_t i = 0; i < d->nfns; i++) {
        s_hash_str(&h, d->fns[i].name);
        s_hash_u32(&h, d->fns[i].frame_type);
        s_hash_u32(&h, d->fns[i].flags);
    }
    for (uint32_t i = 0; i < d->nstatics; i++) {
        s_hash_str(&h, d->statics[i].name);
        s_hash_u32(&h, d->statics[i].type);
        s_hash_u32(&h, d->statics[i].count);
        s_hash_u32(&h, d->statics[i].flags);
    }
    return h.h;
}

static int s_build(const lev_module_desc *d, lev_module **out)
{
    if (d->abi_version != LEV_ABI_VERSION)
        return rt_err(LEV_EMODULE, "module %s was built for frame ABI %u, runtime has %u",
                      d->name ? d->name : "?", d->abi_version, LEV_ABI_VERSION);
    if ((d->ntypes && !d->types) || (d->nfns && !d->fns) || (d->nstatics && !d->statics))
        return rt_err(LEV_EINVAL, "module %s: a descriptor table is missing",
                      d->name ? d->name : "?");
    if (d->ntypes > 0xFFFFFFu - LEV_T_USER)
        return rt_err(LEV_EINVAL, "module has too many types");
    lev_module *m = calloc(1, sizeof *m);
    if (!m)
        return LEV_ENOMEM;
    m->desc = d;
    m->ntypes = LEV_T_USER + d->ntypes;
    m->types = calloc(m->ntypes, sizeof *m->types);
    int rc = m->types ? 0 : LEV_ENOMEM;
    if (!rc)
        rc = s_build_types(m);
    if (!rc)
        rc = s_build_fns(m);
    if (!rc)
        rc = s_build_statics(m);
    if (rc) {
        s_module_free(m);
        return rc;
    }
    m->hash = s_module_hash(d);
    *out = m;
    return 0;
}

/* The hold of the task module loader running on this thread, if any. */
static _Thread_local rt_module_hold *s_hold;

static lev_module *s_find_desc(lev_module *list, const lev_module_desc *desc)
{
    for (lev_module *m = list; m; m = m->next)
        if (m->desc == desc)
            return m;
    return NULL;
}

int lev_module_register(const lev_module_desc *desc, lev_module **out)
{
    if (!desc || !out)
        return rt_err(LEV_EINVAL, "lev_module_register: NULL argument");
    rt_init();
    pthread_mutex_lock(&s_lock);
    rt_module_hold *hold = s_hold;
    lev_module *m = s_find_desc(s_modules, desc);
    if (!m && hold)
        m = s_find_desc(hold->held, desc);
    if (m) {
        *out = m;
        pthread_mutex_unlock(&s_lock);
        return 0;
    }
    int rc = s_build(desc, &m);
    if (rc == 0 && hold) {
        m->next = hold->held;
        hold->held = m;
        hold->nheld++;
        *out = m;
    } else if (rc == 0) {
        m->next = s_modules;
        s_modules = m;
        *out = m;
    } else if (hold && !hold->err) {
        hold->err = rc;
        snprintf(hold->detail, sizeof hold->detail, "%s: %s", lev_strerror(rc), lev_errdetail());
    }
    pthread_mutex_unlock(&s_lock);
    return rc;
}

void rt_module_hold_begin(rt_module_hold *h)
{
    memset(h, 0, sizeof *h);
    s_hold = h;
}

void rt_module_hold_end(const rt_module_hold *h)
{
    if (s_hold == h)
        s_hold = NULL;
}

bool rt_module_publish(lev_module *m, const lev_module **out)
{
    pthread_mutex_lock(&s_lock);
    lev_module *same = NULL;
    for (lev_module *p = s_modules; p && !same; p = p->next)
        if (p->hash == m->hash)
            same = p;
    if (!same) {
        m->next = s_modules;
        s_modules = m;
    }
    pthread_mutex_unlock(&s_lock);
    if (same)
        s_module_free(m);
    *out = same ? same : m;
    return !same;
}

void rt_module_discard(lev_module *m)
{
    while (m) {
        lev_module *next = m->next;
        s_module_free(m);
        m = next;
    }
}

const lev_module *rt_module_by_hash(uint64_t hash)
{
    pthread_mutex_lock(&s_lock);
    lev_module *m = s_modules;
    while (m && m->hash != hash)
        m = m->next;
    pthread_mutex_unlock(&s_lock);
    return m;
}

uint32_t rt_module_list(const lev_module **v, uint32_t cap)
{
    uint32_t n = 0;
    pthread_mutex_lock(&s_lock);
    for (lev_module *m = s_modules; m; m = m->next, n++)
        if (n < cap)
            v[n] = m;
    pthread_mutex_unlock(&s_lock);
    return n;
}

uint64_t lev_module_hash(const lev_module *m) { return m ? m->hash : 0; }

/* ===================================================================
 * Lookups
 * =================================================================== */

int64_t rt_module_fn_by_addr(const lev_module *m, const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (!a)
        return -1;
    uint32_t h = s_ptr_hash(a, m->fn_cap);
    while (m->fn_keys[h]) {
        if (m->fn_keys[h] == a)
            return m->fn_vals[h];
        h = (h + 1) & (m->fn_cap - 1);
    }
    return -1;
}

size_t rt_module_static_size(const lev_module *m, uint32_t s)
{
    const lev_static_desc *sd = &m->desc->statics[s];
    return rt_type_bytes(&m->types[sd->type], sd->count);
}

int64_t rt_module_static_by_addr(const lev_module *m, const void *p, size_t *off)
{
    uintptr_t a = (uintptr_t)p;
    const lev_static_desc *sd = m->desc->statics;
    /* Last static whose address is <= a. */
    uint32_t lo = 0, hi = m->nstatics;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if ((uintptr_t)sd[m->static_by_addr[mid]].addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    uint32_t s = m->static_by_addr[lo - 1];
    uintptr_t base = (uintptr_t)sd[s].addr;
    if (a - base > rt_module_static_size(m, s))
        return -1;
    *off = a - base;
    return s;
}

/* Function id of the task entry named `task` in m, or -1. */
static int64_t s_task_in(const lev_module *m, const char *task)
{
    const lev_module_desc *d = m->desc;
    for (uint32_t i = 0; i < d->nfns; i++)
        if ((d->fns[i].flags & LEV_FN_TASK) && d->fns[i].name && strcmp(d->fns[i].name, task) == 0)
            return i;
    return -1;
}

int rt_task_find(const char *task, const lev_module **m, uint32_t *fn)
{
    if (!task || !m || !fn)
        return rt_err(LEV_EINVAL, "rt_task_find: NULL argument");
    pthread_mutex_lock(&s_lock);
    for (lev_module *mod = s_modules; mod; mod = mod->next) {
        int64_t i = s_task_in(mod, task);
        if (i >= 0) {
            *m = mod;
            *fn = (uint32_t)i;
            pthread_mutex_unlock(&s_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&s_lock);
    return rt_err(LEV_EMODULE, "no task named %s in the registered task modules", task);
}

int rt_task_find_in(const lev_module *m, const char *task, uint32_t *fn)
{
    if (!m || !task || !fn)
        return rt_err(LEV_EINVAL, "rt_task_find_in: NULL argument");
    int64_t i = s_task_in(m, task);
    if (i < 0)
        return rt_err(LEV_EMODULE, "task module %s (hash %016llx) has no task named %s",
                      m->desc->name ? m->desc->name : "(unnamed)", (unsigned long long)m->hash,
                      task);
    *fn = (uint32_t)i;
    return 0;
}

int64_t rt_module_fn_by_name(const lev_module *m, const char *name)
{
    for (uint32_t i = 0; i < m->desc->nfns; i++)
        if (m->desc->fns[i].name && strcmp(m->desc->fns[i].name, name) == 0)
            return i;
    return -1;
}
