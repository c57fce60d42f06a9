/* local_tag_clash.c - local struct and union types whose tags other
 * definitions use too: two functions' `struct U` of different layouts, a
 * block's `struct T` shadowing the file's, and a `union V` next to a file
 * `union V`. They move to file scope with the frames under new names
 * (U__localN...), references included, and must keep their layouts.
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

struct T {
    int x;
    const char *name;
};

union V {
    double d;
    long l;
};

static long f(int r)
{
    struct U {
        int a;
        const char *s;
    };
    struct U u = {r, "first"};
    struct U *pu = &u;
    lev_checkpoint();
    return pu->a + pu->s[r % 5];
}

static long g(int r)
{
    struct U {
        long b[3];
        struct U *self;
    };
    struct U u = {{r, 2 * r, 3 * r}, NULL};
    u.self = &u;
    long s = 0;
    for (int i = 0; i < 3; i++) {
        lev_checkpoint();
        s += u.self->b[i];
    }
    return s + (long)sizeof(struct U);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    struct T v = {0, "outer"};
    union V w;
    w.l = 0;
    for (int r = 0; rounds == 0 || r < rounds; r++) {
        {
            struct T {
                short z[4];
            } inner = {{1, 2, 3, (short)r}};
            union V {
                char c[8];
                int i;
            } small;
            small.i = r;
            lev_checkpoint();
            v.x = (v.x + inner.z[3] + small.c[0] + (int)sizeof inner) % 1000003;
        }
        w.l += f(r) + g(r);
        printf("round %d: %d %s %ld\n", r, v.x, v.name, w.l);
        fflush(stdout);
    }
    return 0;
}
