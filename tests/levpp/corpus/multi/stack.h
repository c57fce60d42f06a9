/* stack.h - a growable stack of longs shared by the two files of the
 * multi-file program, and the counter both files update. */
#ifndef STACK_H
#define STACK_H

#include <stddef.h>

struct stack {
    long *items;
    size_t size, cap;
};

extern int g_ops; /* operations done, counted by both files */

int stack_push(struct stack *s, long v);
long stack_pop(struct stack *s);
long stack_sum(const struct stack *s);
void stack_free(struct stack *s);
/* Evaluates a reverse Polish expression of single digits and + - * d
 * (d: duplicate); returns the value on top, or -1 on error. */
long rpn(struct stack *s, const char *text);
/* Folds the stack's items, bottom first, with f: f(...f(init, x0)..., xn). */
long stack_fold(const struct stack *s, long (*f)(long, long), long init);
/* The larger of a and b (a function for stack_fold). */
long stack_max(long a, long b);

#endif
