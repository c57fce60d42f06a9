/* inline_asm.c - inline assembly in a checkpointable function. */
#include <stdio.h>

static unsigned spin(unsigned n)
{
    unsigned total = 0;
    for (unsigned i = 0; i < n; i++) {
        __asm__ volatile("" : "+r"(total));
        total += i;
    }
    return total;
}

int main(void)
{
    unsigned t = spin(10);
    printf("%u\n", t);
    return 0;
}
