/* va_list_param.c - functions that take a va_list from a variadic caller
 * and loop over it (vprintf-style helpers). A va_list parameter decays
 * to a pointer to the C library's __va_list_tag, a type no declaration can
 * name: levpp's frames and prototypes must spell it another way.
 * Exit status: 0. levpp-test: resume 0 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static long sum_list(int n, va_list ap)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, int);
    return s;
}

static void report(char *buf, size_t cap, const char *fmt, va_list ap)
{
    vsnprintf(buf, cap, fmt, ap);
    for (char *p = buf; *p; p++)
        if (*p == ' ')
            *p = '_';
}

static long sum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    long s = sum_list(n, ap);
    va_end(ap);
    return s;
}

static void say(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(buf, cap, fmt, ap);
    va_end(ap);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    unsigned long acc = 0;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        for (int i = 0; i < 3000; i++)
            acc += (unsigned long)sum(4, i, r, i * r, 7);
        char buf[80];
        say(buf, sizeof buf, "round %d sum %lu", r, acc);
        printf("%s\n", buf);
        fflush(stdout);
    }
    return 0;
}
