/* icall_macro_late.c - a call through a pointer that may reach a
 * checkpointable function, in a macro argument that the macro evaluates
 * after other code of its expansion. */
#include <stdio.h>

#define MAX(a, b)                                                                                  \
    ({                                                                                             \
        __typeof__(a) max_a = (a);                                                                 \
        __typeof__(b) max_b = (b);                                                                 \
        max_a > max_b ? max_a : max_b;                                                             \
    })

static int sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

static int (*s_op)(int) = sum_to;

int main(int argc, char **argv)
{
    (void)argv;
    int m = MAX(argc, s_op(4));
    printf("%d\n", m);
    return 0;
}
