/* macros.c - macros that touch a checkpointable function's state: a
 * local named in a macro's body, a declaration, a `return`, `continue`
 * or a call written by a macro, a statement expression or a GNU `?:` in
 * one, a call in a macro argument evaluated late. levpp rewrites the
 * bodies as the preprocessor expands them (preproc/pp_expand.c); each
 * case below was refused before it did, and its comment says why it was
 * then. Identifiers carry their case's name.
 */
#include <stdio.h>

#if defined(__has_include)
#if __has_include("leverage.h")
#include "leverage.h"
#define HAVE_LEVERAGE 1
#endif
#endif
#ifndef HAVE_LEVERAGE
static int lev_checkpoint(void) { return 0; }
#endif

/* attr_macro: an attributed statement whose attribute a macro writes: levpp
 * keeps attributes as written and cannot see this one. */
#define attr_macro__FALLTHROUGH __attribute__((fallthrough))

static int attr_macro__score(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        switch (i % 3) {
        case 0:
            s += 2;
            attr_macro__FALLTHROUGH;
        case 1:
            s++;
            break;
        default:
            break;
        }
    }
    return s;
}

static int attr_macro__main(void)
{
    printf("%d\n", attr_macro__score(6));
    return 0;
}
#undef attr_macro__attr_macro__FALLTHROUGH

/* macro_arg_late: calls of checkpointable functions in macro arguments that
 * the macro evaluates after other code of its expansion (MAX's second
 * argument), conditionally (a check's message) or repeatedly (a loop written
 * by the macro): levpp can only run a call before the statement. */
#define macro_arg_late__MAX(a, b)                                                                  \
    ({                                                                                             \
        __typeof__(a) max_a = (a);                                                                 \
        __typeof__(b) max_b = (b);                                                                 \
        max_a > max_b ? max_a : max_b;                                                             \
    })
#define macro_arg_late__CHECK(ok, e)                                                               \
    do {                                                                                           \
        if (!(ok))                                                                                 \
            printf("%d\n", (e));                                                                   \
    } while (0)
#define macro_arg_late__TIMES(n, e)                                                                \
    do {                                                                                           \
        for (int times_i = 0; times_i < (n); times_i++)                                            \
            (void)(e);                                                                             \
    } while (0)

static int macro_arg_late__step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

static int macro_arg_late__main(int argc, char **argv)
{
    (void)argv;
    int m = macro_arg_late__MAX(argc, macro_arg_late__step(3));
    macro_arg_late__CHECK(argc > 0, macro_arg_late__step(2));
    macro_arg_late__TIMES(2, macro_arg_late__step(1));
    printf("%d\n", m);
    return 0;
}
#undef macro_arg_late__macro_arg_late__CHECK
#undef macro_arg_late__macro_arg_late__MAX
#undef macro_arg_late__macro_arg_late__TIMES

/* for_macro_head: the three parts of a for statement's head written by one
 * macro: levpp finds them by the head's semicolons. */
#define for_macro_head__UPTO(i, n)                                                                 \
    int i = 0;                                                                                     \
    i < (n);                                                                                       \
    i++

static int for_macro_head__sum_to(int n)
{
    int s = 0;
    for (for_macro_head__UPTO(i, n))
        s += i;
    return s;
}

static int for_macro_head__main(void)
{
    printf("%d\n", for_macro_head__sum_to(5));
    return 0;
}
#undef for_macro_head__for_macro_head__UPTO

/* macro_loop_decl: a loop whose head a macro writes, declaring its own
 * counter, with a body that calls a checkpointable function: the counter
 * would have to move to the frame, inside the macro's text. */
#define macro_loop_decl__REPEAT(n) for (int rep_i = 0; rep_i < (n); rep_i++)

static int macro_loop_decl__step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

static int macro_loop_decl__main(void)
{
    int total = 0;
    macro_loop_decl__REPEAT(3) total += macro_loop_decl__step(rep_i);
    printf("%d\n", total);
    return 0;
}
#undef macro_loop_decl__macro_loop_decl__REPEAT

/* static_local_macro: a static local (moved to file scope by levpp) named
 * inside a macro expansion. */
#define static_local_macro__BUMP() (++counter)

static int static_local_macro__next_id(int n)
{
    static int counter;
    for (int i = 0; i < n; i++)
        counter += i;
    return static_local_macro__BUMP();
}

static int static_local_macro__main(void)
{
    printf("%d\n", static_local_macro__next_id(3));
    return 0;
}
#undef static_local_macro__static_local_macro__BUMP

/* icall_macro: a call through a pointer that may reach a checkpointable
 * function, written inside a macro: levpp cannot rewrite inside an
 * expansion. */
static int icall_macro__sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

static int (*icall_macro__s_op)(int) = icall_macro__sum_to;

#define icall_macro__RUN(n) icall_macro__s_op(n)

static int icall_macro__main(void)
{
    int t = icall_macro__RUN(10);
    printf("%d\n", t);
    return 0;
}
#undef icall_macro__icall_macro__RUN

/* macro_stmt: a for statement and a return written by macros inside a
 * checkpointable function. */
#define macro_stmt__RETURN(v) return (v)
#define macro_stmt__UPTO(i, n) for (i = 0; i < (n); i++)

static int macro_stmt__sum(int n)
{
    int s = 0, i;
    lev_checkpoint();
    macro_stmt__UPTO(i, n) s += i;
    macro_stmt__RETURN(s);
}

static int macro_stmt__main(void)
{
    printf("%d\n", macro_stmt__sum(4));
    return 0;
}
#undef macro_stmt__macro_stmt__RETURN
#undef macro_stmt__macro_stmt__UPTO

/* macro_call: a call of a checkpointable function written inside a macro:
 * levpp rewrites call sites and cannot rewrite inside an expansion. */
#define macro_call__SUM(n) macro_call__sum_to(n)

static int macro_call__sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

static int macro_call__main(void)
{
    int t = macro_call__SUM(10);
    printf("%d\n", t);
    return 0;
}
#undef macro_call__macro_call__SUM

/* icall_macro_late: a call through a pointer that may reach a checkpointable
 * function, in a macro argument that the macro evaluates after other code of
 * its expansion. */
#define icall_macro_late__MAX(a, b)                                                                \
    ({                                                                                             \
        __typeof__(a) max_a = (a);                                                                 \
        __typeof__(b) max_b = (b);                                                                 \
        max_a > max_b ? max_a : max_b;                                                             \
    })

static int icall_macro_late__sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

static int (*icall_macro_late__s_op)(int) = icall_macro_late__sum_to;

static int icall_macro_late__main(int argc, char **argv)
{
    (void)argv;
    int m = icall_macro_late__MAX(argc, icall_macro_late__s_op(4));
    printf("%d\n", m);
    return 0;
}
#undef icall_macro_late__icall_macro_late__MAX

/* local_in_macro: a local of a checkpointable function named in the body of
 * a macro (not passed as an argument): levpp moves locals into the frame and
 * cannot rewrite the name inside the macro. */
#define local_in_macro__BUMP() (total += 2)

static int local_in_macro__count(int n)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        local_in_macro__BUMP();
    return total;
}

static int local_in_macro__main(void)
{
    printf("%d\n", local_in_macro__count(3));
    return 0;
}
#undef local_in_macro__local_in_macro__BUMP

/* macro_arg_twice: a call of a checkpointable function in the argument of a
 * macro that evaluates its argument twice: levpp would run the call once and
 * read its result twice. */
#define macro_arg_twice__SQUARE(x) ((x) * (x))

static int macro_arg_twice__step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

static int macro_arg_twice__main(void)
{
    printf("%d\n", macro_arg_twice__SQUARE(macro_arg_twice__step(4)));
    return 0;
}
#undef macro_arg_twice__macro_arg_twice__SQUARE

/* continue_macro: a continue written by a macro in a loop whose increment
 * calls a checkpointable function: levpp points each continue at the
 * increment's code and cannot rewrite inside an expansion. */
#define continue_macro__SKIP_IF(c)                                                                 \
    if (c)                                                                                         \
    continue

static int continue_macro__next_odd(int i)
{
    int n = i + 1;
    while (n % 2 == 0)
        n++;
    return n;
}

static int continue_macro__main(void)
{
    int s = 0;
    for (int i = 1; i < 20; i = continue_macro__next_odd(i)) {
        continue_macro__SKIP_IF(i % 3 == 0);
        s += i;
    }
    printf("%d\n", s);
    return 0;
}
#undef continue_macro__continue_macro__SKIP_IF

/* comma_macro_end: a comma operator whose right operand calls a
 * checkpointable function and whose left operand ends with a macro argument:
 * levpp looks for the comma after the left operand's text. */
#define comma_macro_end__TWICE(n) 2 * n

static int comma_macro_end__sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; i++)
        s += i;
    return s;
}

static int comma_macro_end__main(int argc, char **argv)
{
    (void)argv;
    int t = (argc += comma_macro_end__TWICE(argc), comma_macro_end__sum_to(argc));
    printf("%d\n", t);
    return 0;
}
#undef comma_macro_end__comma_macro_end__TWICE

/* call_macro_operator: && written by a macro whose operand calls a
 * checkpointable function: the operator would have to be lowered inside the
 * macro's expansion. */
#define call_macro_operator__BOTH(a, b) ((a) && (b))

static int call_macro_operator__step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

static int call_macro_operator__main(int argc, char **argv)
{
    (void)argv;
    if (call_macro_operator__BOTH(argc > 0, call_macro_operator__step(3) > 2))
        puts("both");
    return 0;
}
#undef call_macro_operator__call_macro_operator__BOTH

/* decl_macro: a local declared by a macro in a checkpointable function. Kept
 * as a C local it would lose its value across the checkpoint in the loop, so
 * levpp refuses the declaration. */
#define decl_macro__DECL_ZERO(name) int name = 0

static int decl_macro__sum(int n)
{
    decl_macro__DECL_ZERO(s);
    for (int i = 0; i < n; i++) {
        lev_checkpoint();
        s += i;
    }
    return s;
}

static int decl_macro__main(void)
{
    printf("%d\n", decl_macro__sum(4));
    return 0;
}
#undef decl_macro__decl_macro__DECL_ZERO

/* return_macro_opaque: an error-check macro that returns, with no call in
 * it, in a checkpointable function: its `return -1;` cannot be rewritten to
 * the body's own way of returning. */
#define return_macro_opaque__CHECK(x)                                                              \
    do {                                                                                           \
        if (!(x))                                                                                  \
            return -1;                                                                             \
    } while (0)

static int return_macro_opaque__step(int v)
{
    int s = 0;
    for (int i = 0; i < v; i++) {
        return_macro_opaque__CHECK(i < 100);
        s += i;
    }
    return s;
}

static int return_macro_opaque__main(void)
{
    printf("%d\n", return_macro_opaque__step(10));
    return 0;
}
#undef return_macro_opaque__return_macro_opaque__CHECK

/* call_gnu_elvis: GNU `a ?: b` written by a macro whose second operand calls
 * a checkpointable function: the operator would have to be lowered inside
 * the macro's expansion. */
#define call_gnu_elvis__OR_ELSE(a, b) ((a) ?: (b))

static int call_gnu_elvis__step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

static int call_gnu_elvis__main(int argc, char **argv)
{
    (void)argv;
    int v = call_gnu_elvis__OR_ELSE(argc - 1, call_gnu_elvis__step(3));
    printf("%d\n", v);
    return 0;
}
#undef call_gnu_elvis__call_gnu_elvis__OR_ELSE

/* call_stmt_expr: a statement expression written in a macro argument that
 * calls a checkpointable function: its statements would have to be rewritten
 * inside the macro's expansion. */
#define call_stmt_expr__TWICE(x) (2 * (x))

static int call_stmt_expr__step(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}

static int call_stmt_expr__main(void)
{
    int v = call_stmt_expr__TWICE(({
        int t = 2;
        call_stmt_expr__step(t) + 1;
    }));
    printf("%d\n", v);
    return 0;
}
#undef call_stmt_expr__call_stmt_expr__TWICE

int main(int argc, char **argv)
{
    int rc = 0;
    rc |= attr_macro__main();
    rc |= macro_arg_late__main(argc, argv);
    rc |= for_macro_head__main();
    rc |= macro_loop_decl__main();
    rc |= static_local_macro__main();
    rc |= icall_macro__main();
    rc |= macro_stmt__main();
    rc |= macro_call__main();
    rc |= icall_macro_late__main(argc, argv);
    rc |= local_in_macro__main();
    rc |= macro_arg_twice__main();
    rc |= continue_macro__main();
    rc |= comma_macro_end__main(argc, argv);
    rc |= call_macro_operator__main(argc, argv);
    rc |= decl_macro__main();
    rc |= return_macro_opaque__main();
    rc |= call_gnu_elvis__main(argc, argv);
    rc |= call_stmt_expr__main();
    return rc;
}
