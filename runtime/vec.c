/* vec.c - the project's growable array (vec.h): one growth rule, with
 * its overflow checks, for every array that grows by appending.
 */
#include "vec.h"

#include "lev_errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int rt_vec_reserve(void *pp, size_t *cap, size_t n, size_t more, size_t size)
{
    if (n > SIZE_MAX - more)
        return LEV_ENOMEM;
    size_t need = n + more;
    if (need <= *cap)
        return 0;
    if (!size || need > SIZE_MAX / size)
        return LEV_ENOMEM;
    size_t nc = *cap > 8 ? *cap : 8;
    while (nc * size < 64 && nc < SIZE_MAX / 2)
        nc *= 2;
    while (nc < need)
        nc = nc > SIZE_MAX / 2 ? need : nc * 2;
    if (nc > SIZE_MAX / size)
        nc = need;
    void *p; /* *pp is a T *: copied, so it is read and written as one */
    memcpy(&p, pp, sizeof p);
    void *np = realloc(p, nc * size);
    if (!np)
        return LEV_ENOMEM;
    memcpy(pp, &np, sizeof np);
    *cap = nc;
    return 0;
}
