/* longjmp.c - longjmp out of a checkpointable function (it loops) would
 * skip the frames levpp keeps. The setjmp is in plain code. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf s_env;

static void scan(int limit)
{
    for (int i = 0; i < 10; i++) {
        if (i == limit)
            longjmp(s_env, i);
    }
}

static int guarded(void (*fn)(int), int arg)
{
    int code = setjmp(s_env);
    if (code == 0)
        fn(arg);
    return code;
}

int main(void)
{
    int code = guarded(scan, 4);
    scan(20);
    printf("%d\n", code);
    return 0;
}
