/* vector_heap.c - vectors of 32 and 64 bytes (GCC vector types) and complex
 * numbers in the VT heap and in a static, across safe points: each is
 * described by its elements (four doubles, eight ints), which an image
 * carries one by one. */
#include <stdio.h>
#include <stdlib.h>

typedef double v4d __attribute__((vector_size(32)));
typedef int v16i __attribute__((vector_size(64)));

static v16i s_total;

static double spin(double x)
{
    for (int i = 0; i < 3; i++)
        x = x * 0.5 + i;
    return x;
}

int main(void)
{
    int n = 6;
    v4d *many = malloc((size_t)n * sizeof(v4d));
    double _Complex *zs = malloc((size_t)n * sizeof *zs);
    if (!many || !zs)
        return 1;
    for (int i = 0; i < n; i++) {
        many[i] = (v4d){i, i + 1, i + 2, spin(i)};
        zs[i] = __builtin_complex((double)i, spin(i));
        s_total += (v16i){i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, i * i};
    }
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += many[i][0] + many[i][3] * spin(1) + __real__ zs[i] + __imag__ zs[i];
    printf("%.4f %d %d\n", sum, s_total[0], s_total[15]);
    free(many);
    free(zs);
    return 0;
}
