/* main_signature.c - with --main-task, main must have one of the two
 * standard forms. */
#include <stdio.h>

int main(int argc)
{
    for (int i = 0; i < argc; i++)
        puts("x");
    return 0;
}
