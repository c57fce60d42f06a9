/* macro_names.c - functions whose name, head or whole definition a macro
 * writes: a function-like macro giving the name with attributes and a
 * calling convention around it (bzip2's `BZ_API(f)`), an object-like
 * macro renaming the definition (NaCl's `crypto_box`), a name pasted with
 * `##`, a macro writing the whole declarator, one writing the return type
 * and the name, a definition a macro writes whole (its body in the macro's
 * definition), a definition whose body is a macro argument spanning
 * lines, two definitions from one invocation, and a head levpp cannot
 * expand in place (the name stays the macro's); and file-scope variables
 * whose declaration a macro writes, a string and a table of hooks in
 * their initializers. Each function loops, so each is
 * checkpointable, and their state lives across the polls. An allocator
 * hook named by a macro is stored in a stream by a function named by a
 * macro (the hook's address is taken only there) and called through the
 * stream after safe points: the image must carry the pointer.
 * usage: macro_names [N [ROUNDS]]   (default 40 3; ROUNDS 0: until killed)
 * Exit status: the total modulo 100. */
/* levpp-test: resume 400 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* api: a calling convention (empty here, as on every system but one) and
 * attributes around the name */
#define CALLCONV
#define API(func) __attribute__((noinline)) CALLCONV func
#define EXTERN_API(func) func

/* renamed: an object-like macro naming the definition */
#define checksum checksum_fletcher16

/* pasted: the name made of two tokens */
#define PASTE(a, b) a##b
#define NAMED(kind) PASTE(count_, kind)

/* declarator: the macro writes `name(parameters)` with its type */
#define DECLARE_SCALE(name) long name(const long *v, int n, long k)

/* head: the return type and the name; the parameters follow */
#define STATIC_LONG(name) static long name

/* whole: the definition with its body in the macro's definition */
#define DEFINE_SUM(name, type)                                                                     \
    static long name(const type *v, int n)                                                         \
    {                                                                                              \
        long s = 0;                                                                                \
        for (int i = 0; i < n; i++)                                                                \
            s += v[i];                                                                             \
        return s;                                                                                  \
    }

/* body_arg: the body is an argument of the macro */
#define DEFINE_WITH_BODY(name, body) static long name(long *v, int n) body

/* pair: one invocation writes two definitions */
#define DEFINE_MINMAX(type)                                                                        \
    static type min_##type(const type *v, int n)                                                   \
    {                                                                                              \
        type m = v[0];                                                                             \
        for (int i = 1; i < n; i++)                                                                \
            if (v[i] < m)                                                                          \
                m = v[i];                                                                          \
        return m;                                                                                  \
    }                                                                                              \
    static type max_##type(const type *v, int n)                                                   \
    {                                                                                              \
        type m = v[0];                                                                             \
        for (int i = 1; i < n; i++)                                                                \
            if (v[i] > m)                                                                          \
                m = v[i];                                                                          \
        return m;                                                                                  \
    }

typedef void *(*alloc_func)(void *opaque, int items, int size);
typedef void (*free_func)(void *opaque, void *p);

struct stream {
    alloc_func zalloc;
    free_func zfree;
    void *opaque;
    long allocated;
};

/* hook: named by a macro, its address taken in a function named by one */
static void *API(default_alloc)(void *opaque, int items, int size)
{
    struct stream *s = opaque;
    s->allocated += (long)items * size;
    return malloc((size_t)items * (size_t)size);
}

static void API(default_free)(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

/* variables: declarations a macro writes whole, with a string and the
 * hooks' addresses in their initializers */
struct hooks {
    alloc_func zalloc;
    free_func zfree;
};
#define DECLARE_LABEL(name, text) static const char *name = text;
#define DECLARE_HOOKS(name, a, f) static const struct hooks name = {a, f};
DECLARE_LABEL(g_label, "rounds of macro_names")
DECLARE_HOOKS(g_hooks, default_alloc, default_free)

int API(stream_init)(struct stream *s)
{
    s->zalloc = g_hooks.zalloc;
    s->zfree = default_free;
    s->opaque = s;
    s->allocated = 0;
    return 0;
}

long EXTERN_API(api_mix)(const long *v, int n)
{
    unsigned long h = 7;
    for (int i = 0; i < n; i++)
        h = h * 31 + (unsigned long)v[i];
    return (long)(h % 1000003);
}

unsigned checksum(const unsigned char *p, int n)
{
    unsigned a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        a = (a + p[i]) % 255;
        b = (b + a) % 255;
    }
    return b << 8 | a;
}

int NAMED(odd)(const long *v, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += v[i] & 1;
    return c;
}

DECLARE_SCALE(scale_sum)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * k;
    return s;
}

STATIC_LONG(alternating)(const long *v, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += i % 2 ? -v[i] : v[i];
    return s;
}

DEFINE_SUM(sum_longs, long)

DEFINE_WITH_BODY(reverse, {
    long moved = 0;
    for (int i = 0, j = n - 1; i < j; i++, j--) {
        long t = v[i];
        v[i] = v[j];
        v[j] = t;
        moved += 2;
    }
    return moved;
})

DEFINE_MINMAX(long)

/* kept: a self-referential macro in the head would expand twice in
 * levpp's output, so the head stays as written, its name the macro's;
 * the body, written in the text, is rewritten as any other */
enum { STRIDE = 2 };
#define STRIDE (STRIDE + 0)
static long API(strided)(const long v[STRIDE], int n)
{
    long s = 0;
    for (int i = 0; i < n; i += STRIDE)
        s += v[i];
    return s;
}

/* One round: the buffer comes from the hook and lives across every call. */
static long round_of(struct stream *s, int n, int r)
{
    long *v = s->zalloc(s->opaque, n, (int)sizeof(long));
    if (!v)
        return -1;
    for (int i = 0; i < n; i++)
        v[i] = (i * 37 + r * 11) % 101 - 50;
    long mix = api_mix(v, n);
    unsigned ck = checksum((const unsigned char *)v, n * (int)sizeof(long));
    int odd = count_odd(v, n);
    long sc = scale_sum(v, n, r + 1);
    long alt = alternating(v, n);
    long sum = sum_longs(v, n);
    long moved = reverse(v, n);
    long lo = min_long(v, n), hi = max_long(v, n);
    long st = strided(v, n);
    printf("round %d: mix %ld ck %u odd %d scale %ld alt %ld sum %ld moved %ld min %ld max %ld "
           "strided %ld first %ld allocated %ld\n",
           r, mix, ck, odd, sc, alt, sum, moved, lo, hi, st, v[0], s->allocated);
    fflush(stdout);
    s->zfree(s->opaque, v);
    return mix + sum + lo + hi;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 2 || n > 100000 || rounds < 0)
        return 99;
    struct stream s;
    stream_init(&s);
    long total = 0;
    const char *label = g_label;
    for (int r = 0; rounds == 0 || r < rounds; r++)
        total += round_of(&s, n, r) + (long)strlen(label);
    printf("total %ld of %s\n", total, g_label);
    return (int)((total % 100 + 100) % 100);
}
