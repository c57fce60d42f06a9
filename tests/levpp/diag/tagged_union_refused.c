/* tagged_union_refused.c - unions of a pointer and numbers whose tag
 * levpp cannot find: each is refused by name, with how to annotate it,
 * never guessed. */
#include <stdio.h>

/* no integer field beside the union */
struct untagged {
    union {
        long n;
        const char *s;
    } u;
    double w;
};

/* the pointer member is written before the tag is */
struct late {
    int kind;
    union {
        long n;
        const char *s;
    } u;
};

/* one tag value selects a pointer here and a number there */
struct mixed {
    int kind;
    union {
        long n;
        const char *s;
    } u;
};

/* two integer fields are set before every pointer write */
struct twotags {
    int kind;
    int size;
    union {
        long n;
        const char *s;
    } u;
};

/* more than 8 bytes */
struct wide {
    int kind;
    union {
        long pair[2];
        const char *s;
    } u;
};

static struct untagged g_a;
static struct late g_b;
static struct mixed g_c;
static struct twotags g_d;
static struct wide g_e;

/* each union's number is used too, so none is an overlay */
static long numbers(void)
{
    return g_a.u.n + g_b.u.n + g_c.u.n + g_d.u.n + g_e.u.pair[1];
}

int main(void)
{
    g_a.u.s = "a";
    g_b.u.s = "b";
    g_b.kind = 1;
    g_c.kind = 1;
    g_c.u.s = "c";
    if (g_a.w > 0) {
        g_c.kind = 1;
        g_c.u.n = 3;
    }
    g_d.kind = 1;
    g_d.size = 2;
    g_d.u.s = "d";
    g_e.kind = 1;
    g_e.u.s = "e";
    printf("%s %s %s %s %s %ld\n", g_a.u.s, g_b.u.s, g_c.u.s, g_d.u.s, g_e.u.s, numbers());
    return 0;
}
