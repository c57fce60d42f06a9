/* condcalls.c - calls of checkpointable functions in the arms of ?:
 * (only the chosen arm runs), nested in conditions, arguments,
 * initialisers, return and compound assignments; results of pointer and
 * struct type and of type void.
 * Exit status: the number of calls of sq() modulo 100. */
#include <stdio.h>

struct pt {
    int x, y;
};

static int g_sq, g_log;
static char g_buf[3][8] = {"alpha", "beta", "gamma"};

static int sq(int n)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        r += n;
    g_sq++;
    return r;
}

static void note(int n)
{
    for (int i = 0; i < 1; i++)
        g_log = g_log * 3 + n;
}

static char *pick(int n)
{
    for (int i = 0; i < 1; i++)
        if (n < 0)
            return NULL;
    return g_buf[n % 3];
}

static struct pt mk(int x)
{
    struct pt p = {0, 0};
    for (int i = 0; i < 1; i++) {
        p.x = x;
        p.y = x * 2;
    }
    return p;
}

static int add(int a, int b)
{
    int s = 0;
    while (s < 1)
        s = a + b + 1;
    return s - 1;
}

static int pick_sign(int n) { return n % 2 ? sq(n) : -sq(n); }

int main(void)
{
    int acc = 0;
    for (int n = 0; n < 7; n++) {
        int before = g_sq;
        int a = n % 2 ? sq(n) : n;
        int b = n > 3 ? n : sq(n) + 1;
        printf("%d: a %d b %d calls %d\n", n, a, b, g_sq - before);
        /* call in the condition and in an arm, inside an argument */
        int c = add(sq(n) > 8 ? sq(2) : 1, n);
        int d = add(n, n % 3 ? (sq(n) > 4 ? sq(1) : 2) : (n ? sq(3) : 5));
        printf("%d: c %d d %d sign %d\n", n, c, d, pick_sign(n));
        /* compound assignment, array index */
        int arr[4] = {0, 0, 0, 0};
        acc += n & 1 ? sq(n) : add(n, 1);
        arr[n % 4] = n % 3 == 0 ? sq(1) : add(2, 2);
        printf("%d: acc %d arr %d %d %d %d\n", n, acc, arr[0], arr[1], arr[2], arr[3]);
        /* void arms, unused values */
        n % 2 ? note(1) : note(2);
        (void)(n > 4 ? sq(n) : 0);
        n > 5 ? sq(1) : add(1, 1);
        /* pointer and struct results */
        char *s = n % 3 ? pick(n) : pick(-1);
        struct pt p = n > 2 ? mk(n) : mk(-n);
        printf("%d: s %s p %d %d log %d\n", n, s ? s : "(null)", p.x, p.y, g_log);
        /* switch on a ?: */
        switch (n % 2 ? sq(1) : add(0, 2)) {
        case 1:
            printf("%d: one\n", n);
            break;
        default:
            printf("%d: other\n", n);
            break;
        }
    }
    printf("acc %d calls %d log %d\n", acc, g_sq, g_log);
    return g_sq % 100;
}
