/* intptr_local.c - integers that keep a pointer across a safe point in a
 * checkpointable function: a tagged pointer in a local, and a value that
 * an XOR hides and the next iteration reads after the loop's poll. An
 * image relocates pointers, not integers. */
#include <stdint.h>
#include <stdio.h>

#include "leverage.h"

static int g_cells[4] = {1, 2, 3, 4};

int main(void)
{
    int *p = &g_cells[1];
    uintptr_t tagged = (uintptr_t)p | 1;
    lev_checkpoint();
    int *back = (int *)(tagged & ~(uintptr_t)1);
    long hidden = 0;
    for (int i = 0; i < 3; i++) {
        if (hidden)
            printf("%d\n", *(int *)(hidden ^ 0x55));
        hidden = (long)&g_cells[i] ^ 0x55;
    }
    printf("%d\n", *back);
    return 0;
}
