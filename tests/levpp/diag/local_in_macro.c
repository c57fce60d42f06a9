/* local_in_macro.c - a local of a checkpointable function named in the
 * body of a macro (not passed as an argument): levpp moves locals into the
 * frame and cannot rewrite the name inside the macro. */
#include <stdio.h>

#define BUMP() (total += 2)

static int count(int n)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        BUMP();
    return total;
}

int main(void)
{
    printf("%d\n", count(3));
    return 0;
}
