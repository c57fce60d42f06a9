/* parser.c - the parser of the setjmp_multi program: it loops (polls)
 * and fails through fail() of main.c, whose longjmp goes to a setjmp of
 * main.c across this file's frames. */
#include "guard.h"

static long number(const char **p)
{
    long v = 0;
    int digits = 0;
    while (**p >= '0' && **p <= '9') {
        v = v * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    if (!digits)
        fail((unsigned char)**p);
    return v;
}

long parse_sum(const char *s)
{
    long sum = 0;
    while (*s) {
        sum += number(&s);
        if (*s == ',')
            s++;
    }
    return sum;
}
