/* intptr_static.c - a pointer converted to an integer and kept where it
 * outlives the safe point: in a file-scope variable, which travels with
 * the image, and in a parameter of a checkpointable function, which holds
 * it across the function's own safe point. */
#include <stdint.h>
#include <stdio.h>

#include "leverage.h"

static uintptr_t g_last;
static char g_buf[16];

static int tagged_len(uintptr_t at)
{
    lev_checkpoint();
    return (int)(at & 0xf);
}

int main(void)
{
    g_last = (uintptr_t)g_buf + 4;
    printf("%d\n", tagged_len((uintptr_t)&g_buf[3]));
    return 0;
}
