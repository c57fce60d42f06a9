/* main_types.c - a main whose parameter and result have other integer
 * types than int, as a program gets that does `#define int long long`
 * before its main (the C compiler warns, clang refuses; levpp accepts it
 * as the C compiler does and calls it from a main of its own).
 * Exit status: the number of arguments beyond the program's name. */
#include <stdio.h>

#define int long long

/* The C compiler's warning, which the test's -Werror would make an error. */
#pragma GCC diagnostic ignored "-Wmain"

static int s_sum(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i * i;
    return s;
}

int main(int argc, char **argv)
{
    printf("%s: sum %lld\n", argc > 0 ? "args" : "none", s_sum(2000));
    for (int i = 1; i < argc; i++)
        printf("arg %lld: %s\n", i, argv[i]);
    return argc - 1;
}

