/* recursion.c - direct recursion (permutations, a deep chain) and mutual
 * recursion (a recursive-descent expression parser, even/odd), in
 * functions that loop and so are checkpointable.
 * Exit status: 0 if every expression evaluated as expected, else 1. */
#include <stdio.h>
#include <string.h>

static const char *s_pos; /* the parser's cursor */
static int s_errors;

static long parse_expr(void);

static void skip_spaces(void)
{
    while (*s_pos == ' ')
        s_pos++;
}

/* factor := number | '(' expr ')' | '-' factor */
static long parse_factor(void)
{
    skip_spaces();
    if (*s_pos == '(') {
        s_pos++;
        long v = parse_expr();
        skip_spaces();
        if (*s_pos != ')') {
            s_errors++;
            return 0;
        }
        s_pos++;
        return v;
    }
    if (*s_pos == '-') {
        s_pos++;
        long v = parse_factor();
        return -v;
    }
    long v = 0;
    while (*s_pos >= '0' && *s_pos <= '9') {
        v = v * 10 + (*s_pos - '0');
        s_pos++;
    }
    return v;
}

/* term := factor (('*' | '/' | '%') factor)* */
static long parse_term(void)
{
    long v = parse_factor();
    for (;;) {
        skip_spaces();
        char op = *s_pos;
        if (op != '*' && op != '/' && op != '%')
            return v;
        s_pos++;
        long r = parse_factor();
        if (r == 0 && op != '*') {
            s_errors++;
            return 0;
        }
        if (op == '*')
            v *= r;
        else if (op == '/')
            v /= r;
        else
            v %= r;
    }
}

/* expr := term (('+' | '-') term)* */
static long parse_expr(void)
{
    long v = parse_term();
    while (1) {
        skip_spaces();
        if (*s_pos == '+') {
            s_pos++;
            long r = parse_term();
            v += r;
        } else if (*s_pos == '-') {
            s_pos++;
            long r = parse_term();
            v -= r;
        } else {
            break;
        }
    }
    return v;
}

static long evaluate(const char *text)
{
    s_pos = text;
    return parse_expr();
}

static int s_perm_count, s_perm_fixed;

/* All permutations of a[k..n-1]; counts those with no fixed point. */
static void permute(int *a, int k, int n)
{
    if (k == n) {
        int fixed = 0;
        for (int i = 0; i < n; i++)
            if (a[i] == i)
                fixed++;
        s_perm_count++;
        if (fixed == 0)
            s_perm_fixed++;
        return;
    }
    for (int i = k; i < n; i++) {
        int t = a[k];
        a[k] = a[i];
        a[i] = t;
        permute(a, k + 1, n);
        t = a[k];
        a[k] = a[i];
        a[i] = t;
    }
}

/* A deep chain of frames. */
static long chain(int n)
{
    if (n == 0)
        return 0;
    long s = chain(n - 1);
    for (int k = 0; k < n % 3; k++)
        s += k;
    return s + n;
}

static int is_odd(unsigned n);

static int is_even(unsigned n)
{
    while (n > 100)
        n -= 2;
    if (n == 0)
        return 1;
    return is_odd(n - 1);
}

static int is_odd(unsigned n)
{
    while (n > 100)
        n -= 2;
    if (n == 0)
        return 0;
    return is_even(n - 1);
}

struct expr_case {
    const char *text;
    long value;
};

static struct expr_case s_cases[] = {
    {"1 + 2 * 3", 7},
    {"(1 + 2) * 3", 9},
    {"-(4 - 10) * (2 + -3)", -6},
    {"100 / 7 % 5 + 2 * (3 + (4 * (5 - 1)))", 42},
    {"((((((1))))))+((((2))))", 3},
};

int main(void)
{
    int bad = 0;
    for (unsigned i = 0; i < sizeof s_cases / sizeof s_cases[0]; i++) {
        long v = evaluate(s_cases[i].text);
        printf("%s = %ld\n", s_cases[i].text, v);
        if (v != s_cases[i].value)
            bad++;
    }
    long v = evaluate("7 / (3 - 3)");
    printf("division by zero gives %ld, errors %d\n", v, s_errors);

    int a[6];
    for (int i = 0; i < 6; i++)
        a[i] = i;
    permute(a, 0, 6);
    printf("permutations of 6: %d, derangements: %d\n", s_perm_count, s_perm_fixed);
    printf("after permuting: %d %d %d %d %d %d\n", a[0], a[1], a[2], a[3], a[4], a[5]);

    long c = chain(1000);
    printf("chain(1000) = %ld\n", c);

    for (unsigned n = 0; n < 6; n++) {
        int e = is_even(n * 37);
        printf("%u is %s\n", n * 37, e ? "even" : "odd");
    }
    return bad ? 1 : 0;
}
