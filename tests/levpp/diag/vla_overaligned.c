/* vla_overaligned.c - variable-length arrays that need more alignment than
 * the VT heap, where levpp keeps them, gives its objects (16 bytes): of a
 * type aligned to 32, and with an alignment specifier of 64. */
#include <stdio.h>

typedef double v4d __attribute__((vector_size(32)));

static double sum(int n)
{
    v4d a[n];
    _Alignas(64) char b[n];
    double s = 0;
    for (int i = 0; i < n; i++) {
        a[i] = (v4d){i, 1, 2, 3};
        b[i] = (char)i;
        s += a[i][0] + b[i];
    }
    return s;
}

int main(void)
{
    printf("%.1f\n", sum(4));
    return 0;
}
