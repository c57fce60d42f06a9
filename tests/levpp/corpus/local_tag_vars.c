/* local_tag_vars.c - a tag defined together with its variables in a
 * function (`struct acc {...} a, *pa;`, an enum with its variable): the
 * definition moves to file scope, the variables stay in the frame. */
#include <stdio.h>
static int f(int n)
{
    struct acc {
        long sum;
        int cnt;
    } a = {0, 0}, *pa = &a;
    enum color { RED, GREEN = 5 } c = GREEN;
    for (int i = 0; i < n; i++) {
        pa->sum += i * c;
        a.cnt++;
    }
    return (int)(a.sum / (a.cnt ? a.cnt : 1));
}
int main(void)
{
    struct pt {
        int x, y;
    } p = {1, 2};
    for (int i = 0; i < 5; i++) {
        p.x += f(i * 10);
        printf("%d %d\n", p.x, p.y);
    }
    return 0;
}
