/* fallthrough_assert.c - valid C11/GNU statements in a checkpointable
 * function, kept as written: a fallthrough attribute between
 * two case labels and a _Static_assert in the body. */
#include <stdio.h>

static int classify(int n)
{
    int score = 0;
    for (int i = 0; i < n; i++) {
        switch (i % 3) {
        case 0:
            score += 1;
            __attribute__((fallthrough));
        case 1:
            score += 10;
            break;
        default:
            score += 100;
            break;
        }
    }
    _Static_assert(sizeof(int) >= 2, "int has at least 16 bits");
    return score;
}

int main(void)
{
    for (int n = 1; n <= 12; n++)
        printf("%d %d\n", n, classify(n));
    return 0;
}
