/* A checkpointable function whose whole definition a macro writes, and
 * whose expansion levpp cannot keep: it holds a self-referential macro,
 * which the compiler of levpp's output would expand a second time. levpp
 * rewrites a checkpointable body as the input's text, and this one is in
 * no text of the input: refused, naming the function and the macro. */
#include <stdio.h>

static int scale = 3;
#define scale (scale + 0)

#define DEFINE_SUM(name)                                                                           \
    static int name(int n)                                                                         \
    {                                                                                              \
        int s = 0;                                                                                 \
        for (int i = 0; i < n; i++)                                                                \
            s += i * scale;                                                                        \
        return s;                                                                                  \
    }

DEFINE_SUM(weighted_sum)

int main(void)
{
    printf("%d\n", weighted_sum(10));
    return 0;
}
