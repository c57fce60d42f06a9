/* attr_macro.c - an attributed statement whose attribute a macro writes:
 * levpp keeps attributes as written and cannot see this one. */
#include <stdio.h>

#define FALLTHROUGH __attribute__((fallthrough))

static int score(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        switch (i % 3) {
        case 0:
            s += 2;
            FALLTHROUGH;
        case 1:
            s++;
            break;
        default:
            break;
        }
    }
    return s;
}

int main(void)
{
    printf("%d\n", score(6));
    return 0;
}
