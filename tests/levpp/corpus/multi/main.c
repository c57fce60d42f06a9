/* main.c - the multi-file program: pushes and pops through the stack of
 * stack.c, evaluates RPN expressions there, folds the stack there with
 * functions of both files called through a pointer, and keeps its own
 * static helper of the same name as one in stack.c.
 * Exit status: the number of stack operations modulo 100. */
#include <stdio.h>

#include "stack.h"

static long helper(long v)
{
    long r = 1;
    for (int i = 0; i < 2; i++)
        r *= v;
    return r;
}

/* checkpointable (a loop), called from stack.c through a pointer */
static long add_square(long acc, long v)
{
    long sq = 0;
    for (long i = 0; i < v; i++)
        sq += v;
    return acc + sq;
}

int main(void)
{
    struct stack s = {NULL, 0, 0};
    for (long i = 1; i <= 10; i++) {
        long sq = helper(i);
        int rc = stack_push(&s, sq);
        if (rc)
            return 100;
    }
    long sum = stack_sum(&s);
    printf("sum of squares, tripled: %ld (cap %zu)\n", sum, s.cap);
    printf("fold: sum of squares of squares %ld, max %ld\n", stack_fold(&s, add_square, 0),
           stack_fold(&s, stack_max, -1));
    long top = stack_pop(&s);
    printf("popped %ld, %zu left\n", top, s.size);
    stack_free(&s);

    const char *exprs[] = {"34+5*", "9d*d*", "12-3-", "2 3 4 * +", "1+", "52x"};
    for (int i = 0; i < 6; i++) {
        long v = rpn(&s, exprs[i]);
        printf("rpn \"%s\" = %ld (depth %zu)\n", exprs[i], v, s.size);
        s.size = 0;
    }
    stack_free(&s);
    printf("operations %d\n", g_ops);
    return g_ops % 100;
}
