/* macro_arg_late.c - calls of checkpointable functions in macro arguments
 * that the macro evaluates after other code of its expansion (MAX's second
 * argument), conditionally (a check's message) or repeatedly (a loop
 * written by the macro): levpp can only run a call before the statement. */
#include <stdio.h>

#define MAX(a, b)                                                                                  \
    ({                                                                                             \
        __typeof__(a) max_a = (a);                                                                 \
        __typeof__(b) max_b = (b);                                                                 \
        max_a > max_b ? max_a : max_b;                                                             \
    })
#define CHECK(ok, e)                                                                               \
    do {                                                                                           \
        if (!(ok))                                                                                 \
            printf("%d\n", (e));                                                                   \
    } while (0)
#define TIMES(n, e)                                                                                \
    do {                                                                                           \
        for (int times_i = 0; times_i < (n); times_i++)                                            \
            (void)(e);                                                                             \
    } while (0)

static int step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

int main(int argc, char **argv)
{
    (void)argv;
    int m = MAX(argc, step(3));
    CHECK(argc > 0, step(2));
    TIMES(2, step(1));
    printf("%d\n", m);
    return 0;
}
