/* stack.c - the stack of the multi-file program and an RPN evaluator that
 * calls back into main.c through the header. */
#include "stack.h"

#include <stdlib.h>

int g_ops;

/* Same name as a helper in main.c: each file keeps its own. */
static long helper(long v)
{
    long r = 0;
    for (int i = 0; i < 3; i++)
        r += v;
    return r;
}

int stack_push(struct stack *s, long v)
{
    if (s->size == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 2;
        long *items = realloc(s->items, cap * sizeof(long));
        if (!items)
            return -1;
        s->items = items;
        s->cap = cap;
    }
    s->items[s->size++] = v;
    g_ops++;
    return 0;
}

long stack_pop(struct stack *s)
{
    g_ops++;
    return s->size ? s->items[--s->size] : 0;
}

long stack_sum(const struct stack *s)
{
    long sum = 0;
    for (size_t i = 0; i < s->size; i++)
        sum += s->items[i];
    long h = helper(sum);
    return h;
}

long stack_fold(const struct stack *s, long (*f)(long, long), long init)
{
    long acc = init;
    for (size_t i = 0; i < s->size; i++)
        acc = f(acc, s->items[i]); /* may be a function of main.c */
    return acc;
}

long stack_max(long a, long b)
{
    long m = a;
    for (int i = 0; i < 1; i++)
        if (b > m)
            m = b;
    return m;
}

void stack_free(struct stack *s)
{
    free(s->items);
    s->items = NULL;
    s->size = s->cap = 0;
}

long rpn(struct stack *s, const char *text)
{
    for (const char *p = text; *p; p++) {
        long a, b;
        switch (*p) {
        case '+':
        case '-':
        case '*':
            if (s->size < 2)
                return -1;
            b = stack_pop(s);
            a = stack_pop(s);
            if (*p == '+')
                stack_push(s, a + b);
            else if (*p == '-')
                stack_push(s, a - b);
            else
                stack_push(s, a * b);
            break;
        case 'd':
            if (!s->size)
                return -1;
            a = stack_pop(s);
            stack_push(s, a);
            stack_push(s, a);
            break;
        case ' ':
            break;
        default:
            if (*p < '0' || *p > '9')
                return -1;
            stack_push(s, *p - '0');
        }
    }
    return s->size ? s->items[s->size - 1] : -1;
}
