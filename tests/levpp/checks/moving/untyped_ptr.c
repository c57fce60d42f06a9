/* untyped_ptr.c - a heap pointer stored in memory whose type levpp cannot
 * tell (malloc into a void *, the pointer copied in with memcpy at an odd
 * offset), across a safe point, then followed. A plain run prints the
 * sum; under torture the capture must find the address among the
 * untyped bytes and fail, instead of carrying it as bytes.
 * moving-expects: untyped heap object of 32 bytes holds at offset 3 */
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

int main(void)
{
    void *box = malloc(32);
    if (!box)
        return 2;
    memset(box, 0, 32);
    long sum = 0;
    for (int i = 0; i < 20; i++) {
        int *v = malloc(sizeof *v);
        if (!v)
            return 2;
        *v = i;
        memcpy((char *)box + 3, &v, sizeof v);
        v = NULL;
        lev_checkpoint();
        int *back;
        memcpy(&back, (char *)box + 3, sizeof back);
        sum += *back;
    }
    printf("%ld\n", sum);
    return 0;
}
