/* cli_cc_macro.c - a function body that uses a macro, for the --cc
 * checks: its expansion needs the C compiler's preprocessor. */
#include <stdio.h>

#define TWICE(x) (2 * (x))

int main(void)
{
    printf("%d\n", TWICE(21));
    return 0;
}
