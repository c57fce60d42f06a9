/* A task entry marked LEV_ATOMIC. */
#include <stddef.h>

#include "leverage.h"

LEV_TASK LEV_ATOMIC void run(const void *arg, size_t len)
{
    (void)arg;
    (void)len;
}

int main(void) { return 0; }
