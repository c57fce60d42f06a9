/* main_signature.c - with --main-task, main must have one of the forms C
 * and its compilers take: no parameters, argc and argv, or argc, argv and
 * envp. */
#include <stdio.h>

int main(int argc)
{
    for (int i = 0; i < argc; i++)
        puts("x");
    return 0;
}
