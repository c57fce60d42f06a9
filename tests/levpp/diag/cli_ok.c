/* cli_ok.c - a program levpp accepts, for the tests of its command line
 * and of where it writes. */
#include <stdio.h>

int main(void)
{
    for (int i = 0; i < 3; i++)
        printf("%d\n", i);
    return 0;
}
