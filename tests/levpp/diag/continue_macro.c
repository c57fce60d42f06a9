/* continue_macro.c - a continue written by a macro in a loop whose
 * increment calls a checkpointable function: levpp points each continue
 * at the increment's code and cannot rewrite inside an expansion. */
#include <stdio.h>

#define SKIP_IF(c)                                                                                 \
    if (c)                                                                                         \
    continue

static int next_odd(int i)
{
    int n = i + 1;
    while (n % 2 == 0)
        n++;
    return n;
}

int main(void)
{
    int s = 0;
    for (int i = 1; i < 20; i = next_odd(i)) {
        SKIP_IF(i % 3 == 0);
        s += i;
    }
    printf("%d\n", s);
    return 0;
}
