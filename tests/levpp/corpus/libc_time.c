/* libc_time.c - localtime, gmtime, asctime and ctime return pointers to
 * the C library's static storage; a program may hold them across safe
 * points (a loop, a call) before it reads them. levpp makes the storage a
 * travelling static, so the pointers move with the image; tm_zone, which
 * strftime's %Z reads, points into it too.
 * Exit status: 0. levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long spin(unsigned long x, int n)
{
    for (int i = 0; i < n; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    unsigned long acc = 1;
    for (int r = 1; rounds == 0 || r <= rounds; r++) {
        time_t t = (time_t)1700000000 + (time_t)r * 86461;
        struct tm *g = gmtime(&t);
        acc = spin(acc, 20000); /* safe points while g is held */
        char buf[64];
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %Z", g);
        struct tm *l = localtime(&t);
        acc = spin(acc, 20000);
        char lbuf[64];
        strftime(lbuf, sizeof lbuf, "%j %a %Z", l);
        char *text = asctime(g);
        acc = spin(acc, 20000);
        char *c = ctime(&t);
        acc = spin(acc, 20000);
        printf("round %d: %s | %s | gm %d/%d yday %d | %.24s | same buffer %d | %lx\n", r, buf,
               lbuf, g->tm_mon, g->tm_mday, g->tm_yday, text, c == text, acc & 0xffff);
        fflush(stdout);
    }
    return 0;
}
