/* tagged_union.c - tagged unions: a union of a pointer and numbers whose
 * live member a sibling field, the tag, selects. levpp infers which tag
 * values select the pointer from the assignments that pair them (enum
 * constants, macros, plain constants, set in one branch of an if before
 * the member), or reads an annotation where it cannot see the pairing.
 * The unions live in a static array, a heap array, a heap object reached
 * through a pointer, a frame and a struct in a static; their pointers
 * point into the heap, statics, string literals, frames and functions,
 * and a tag that selects no member leaves a stale pointer behind (the
 * union's bytes travel as they are).
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

enum vkind { V_NONE, V_INT, V_STR, V_LIST, V_REAL, V_QUOTED };

/* enum tag, before the union; `len` is an integer too, never a tag */
struct value {
    enum vkind kind;
    union {
        long i;
        const char *s;
        struct value *list;
        double r;
    } u;
    int len;
};

#define K_NUM 10
#define K_TEXT (K_NUM + 1)

/* macro-valued tag after the union, a byte */
struct tok {
    union {
        char *text;
        long num;
    } as;
    unsigned char what;
};

/* the tag is set by a helper, out of sight: annotated (a macro and an
 * enum constant) */
#define OP_CALL 1
enum { OP_CONST = 2 };

struct op {
    int code;
    union {
        long (*fn)(long);
        long k;
    } f;
};
/* leverage tagged_union(struct op, f, code: (OP_CALL) = fn, OP_CONST = k) */

static struct value g_vals[6];
static struct tok g_tok;
static char g_buf[32] = "static buffer";

static long twice(long x) { return 2 * x; }
static long negate(long x) { return -x; }

static void set_code(struct op *o, int code) { o->code = code; }

static void make_static(int quoted)
{
    g_vals[0].kind = V_INT;
    g_vals[0].u.i = 17;
    if (quoted) {
        g_vals[1].kind = V_QUOTED;
    } else {
        g_vals[1].kind = V_STR;
    }
    g_vals[1].u.s = "a string literal";
    g_vals[2].kind = V_LIST;
    g_vals[2].u.list = &g_vals[0];
    g_vals[3].kind = V_STR;
    g_vals[3].u.s = g_buf + 7;
    g_vals[4].kind = V_REAL;
    g_vals[4].u.r = 2.5;
    g_vals[5].kind = 4;
    g_vals[5].u.r = 0.25;
}

static struct value *make_heap(int n, char *text)
{
    struct value *h = malloc((size_t)n * sizeof *h);
    if (!h)
        return NULL;
    for (int i = 0; i < n; i++) {
        switch (i % 3) {
        case 0:
            h[i].kind = V_INT;
            h[i].u.i = i * 3;
            break;
        case 1:
            h[i].kind = V_STR;
            h[i].u.s = text + i;
            break;
        default:
            h[i].kind = V_LIST;
            h[i].u.list = i > 2 ? &h[i - 3] : &g_vals[2];
            break;
        }
        h[i].len = i;
    }
    return h;
}

static void retag(struct value *p, struct value *target)
{
    p->kind = V_LIST;
    p->u.list = target;
}

static void set_tok(struct tok *t, char *text, long n)
{
    if (text) {
        t->what = K_TEXT;
        t->as.text = text;
    } else {
        t->what = K_NUM;
        t->as.num = n;
    }
}

static void set_plain(struct tok *t) { t->what = 3, t->as.num = 99; }

static unsigned long hash_str(const char *s)
{
    unsigned long h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

static unsigned long eval(const struct value *v, int depth)
{
    switch (v->kind) {
    case V_INT:
        return (unsigned long)v->u.i;
    case V_STR:
    case V_QUOTED:
        return hash_str(v->u.s);
    case V_LIST:
        return depth > 4 ? 1 : 7 * eval(v->u.list, depth + 1);
    case V_REAL:
        return (unsigned long)(v->u.r * 1000);
    default:
        return 0;
    }
}

static unsigned long tok_sum(const struct tok *t)
{
    return t->what == K_TEXT ? hash_str(t->as.text) : (unsigned long)t->as.num;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    char *text = malloc(64);
    if (!text)
        return 1;
    strcpy(text, "heap text that the values point into");
    make_static(0);
    struct value *h = make_heap(7, text);
    struct tok *ht = malloc(sizeof *ht);
    struct op ops[2];
    char local[16] = "frame chars";
    struct value framed;
    if (!h || !ht)
        return 1;
    framed.kind = V_STR;
    framed.u.s = local + 6;
    set_tok(&g_tok, g_buf, 0);
    set_tok(ht, NULL, 5);
    set_code(&ops[0], OP_CALL);
    ops[0].f.fn = twice;
    set_code(&ops[1], OP_CONST);
    ops[1].f.k = 11;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        unsigned long x = 0;
        for (int i = 0; i < 6; i++)
            x = x * 31 + eval(&g_vals[i], 0);
        for (int i = 0; i < 7; i++)
            x = x * 31 + eval(&h[i], 0);
        x = x * 31 + eval(&framed, 0) + tok_sum(&g_tok) + tok_sum(ht);
        for (int i = 0; i < 2; i++)
            x += (unsigned long)(ops[i].code == OP_CALL ? ops[i].f.fn(r) : ops[i].f.k);
        printf("round %d: %lu %s %s\n", r, x % 1000003, framed.kind == V_STR ? framed.u.s : "-",
               g_vals[3].u.s);
        fflush(stdout);
        lev_checkpoint();
        /* change tags and members between rounds */
        if (r % 2) {
            retag(&h[r % 7], &h[(r + 3) % 7]);
            set_tok(ht, text + (r % 5), 0);
            ops[0].f.fn = negate;
            framed.kind = V_LIST;
            framed.u.list = &h[r % 7 == 0 ? 1 : 0];
        } else {
            h[r % 7].kind = V_NONE; /* a stale pointer may stay behind */
            set_plain(ht);
            ops[0].f.fn = twice;
            framed.kind = V_STR;
            framed.u.s = local + (r % 4);
            make_static(r % 4 == 0);
        }
        h[(r + 1) % 7].kind = V_REAL;
        h[(r + 1) % 7].u.r = r / 4.0;
        g_buf[r % 8] = (char)('a' + r % 26);
    }
    free(ht);
    free(h);
    free(text);
    return 0;
}
