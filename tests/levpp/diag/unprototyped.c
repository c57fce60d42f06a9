/* unprototyped.c - a checkpointable function declared with an empty
 * parameter list (no prototype before C23). */
#include <stdio.h>

static int count()
{
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += i;
    return s;
}

int main(void)
{
    printf("%d\n", count());
    return 0;
}
