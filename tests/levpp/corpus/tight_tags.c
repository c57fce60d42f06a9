/* tight_tags.c - local and file-scope struct, union and enum types written
 * with their declarators glued to the closing brace (`}s[4];`), named and
 * unnamed, several declarators, a pointer, static locals of such types
 * (which must travel in the image like any static local), a comment in
 * between, each live across safe points. levpp moves a local type's
 * definition before its function and leaves `struct TAG` in its place,
 * which must stay apart from the declarator that follows; an enum
 * without a tag keeps its constants in place and its variable is of the
 * enum's integer type in the frame.
 * usage: tight_tags [ROUNDS]   (default 3; 0: until killed)
 */
/* levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

struct{int a;char *p;}g_tight[2];
static struct pt{int x,y;}g_pts[3],*g_pp=g_pts;

static int tick(int x)
{
    for (int i = 0; i < 2; i++)
        x = x * 5 + i;
    return x % 97;
}

static long shapes(int k)
{
    static const int tab[3] = {1, 2, 3};
    struct{const int *a;int d;}stack[4];
    union{long l;double d;}u[2];
    enum{RED,GREEN,BLUE}colour=GREEN;
    struct node{int v;struct node *next;}n1,n2,*head=&n1;
    struct{int a;}/* a comment */c1;
    static struct{int hits;}seen;
    static struct cnt{int n;}counts[2];
    static enum{OFF,ON}mode=ON;
    static char text[] = "tight";
    long s = 0;
    n1.v = k;
    n1.next = &n2;
    n2.v = k + 1;
    n2.next = NULL;
    c1.a = k % 7;
    for (int i = 0; i < 8; i++) {
        stack[i % 4].a = &tab[i % 3];
        stack[i % 4].d = tick(i + k);
        u[i % 2].l = i;
        s += *stack[i % 4].a + stack[i % 4].d + u[i % 2].l;
    }
    seen.hits++;
    counts[k % 2].n += mode == ON;
    mode = counts[0].n % 3 ? ON : OFF;
    g_tight[k % 2].a = k;
    g_tight[k % 2].p = text;
    g_pp[k % 3].x = tick(k);
    for (struct node *q = head; q; q = q->next)
        s += q->v + tick(q->v);
    return s + colour + c1.a + seen.hits % 5 + counts[1].n % 7 + mode + g_tight[k % 2].a + g_pts[k % 3].x +
           (g_tight[k % 2].p[0] == 't');
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 3;
    for (long r = 0; rounds == 0 || r < rounds; r++) {
        int k = (int)(r % 1000);
        printf("%d shapes %ld\n", k, shapes(k));
        fflush(stdout);
    }
    return 0;
}
