/* structs.c - structs and arrays of structs in frames, structs passed
 * and returned by value, pointers to locals and to array elements kept
 * across loops, shadowed names and file-scope variables.
 * Exit status: the number of calls counted in a file-scope variable. */
#include <stdio.h>

struct point {
    int x, y;
};

struct rect {
    struct point lo, hi;
    char name[8];
};

struct stats {
    long sum;
    int min, max;
    double mean;
};

static int g_calls;              /* file-scope, written by the callees */
static struct point g_origin = {3, -2};
int g_table[5] = {5, 1, 4, 1, 3}; /* external linkage */

/* Returns a struct by value. */
static struct stats summarize(const int *v, int n)
{
    struct stats s = {0, v[0], v[0], 0.0};
    for (int i = 0; i < n; i++) {
        s.sum += v[i];
        if (v[i] < s.min)
            s.min = v[i];
        if (v[i] > s.max)
            s.max = v[i];
    }
    s.mean = (double)s.sum / n;
    g_calls++;
    return s;
}

/* Takes a struct by value and a pointer to one. */
static int area_and_grow(struct rect r, struct rect *out)
{
    int w = r.hi.x - r.lo.x, h = r.hi.y - r.lo.y;
    for (int k = 0; k < 2; k++) {
        r.hi.x++;
        r.hi.y++;
    }
    *out = r;
    g_calls++;
    return w * h;
}

/* Bumps through a pointer into the caller's frame. */
static void bump_all(int *p, int n, int by)
{
    for (int i = 0; i < n; i++)
        p[i] += by;
    g_calls++;
}

static int s_counter = 100;

/* Adds 0 + 1 + 2 to s_counter; its local shadows the file-scope g_calls. */
static int counter(void)
{
    int g_calls = 0;
    for (int i = 0; i < 3; i++)
        g_calls += i;
    s_counter += g_calls;
    return s_counter;
}

static struct point centroid(struct point *pts, int n)
{
    struct point c = {0, 0};
    struct point *p = pts;
    while (p < pts + n) {
        c.x += p->x;
        c.y += p->y;
        p++;
    }
    c.x /= n;
    c.y /= n;
    g_calls++;
    return c;
}

int main(void)
{
    int data[8] = {9, -4, 17, 0, 3, 3, 8, -1};
    struct stats st = summarize(data, 8);
    printf("sum %ld min %d max %d mean %.3f\n", st.sum, st.min, st.max, st.mean);

    struct rect rects[3] = {
        {{0, 0}, {2, 3}, "a"},
        {{1, 1}, {4, 5}, "b"},
        {{-2, -2}, {0, 0}, "c"},
    };
    struct rect grown[3];
    int total = 0;
    for (int i = 0; i < 3; i++) {
        int a = area_and_grow(rects[i], &grown[i]);
        total += a;
        printf("rect %s: area %d, grown to (%d,%d)\n", grown[i].name, a, grown[i].hi.x,
               grown[i].hi.y);
    }
    printf("total area %d\n", total);

    /* A pointer to a local and one to an array element, both used after
     * checkpointable calls. */
    int x = 10;
    int *px = &x;
    int *mid = &data[4];
    bump_all(px, 1, 5);
    bump_all(mid, 4, 100);
    printf("x %d via pointer %d; data[4..7] %d %d %d %d; mid[-1] %d\n", x, *px, data[4], data[5],
           data[6], data[7], mid[-1]);

    /* Shadowed names in nested blocks, each living across loops. */
    int v = 1;
    for (int i = 0; i < 3; i++) {
        int v = i * 10;
        {
            int v2 = v;
            for (int v = 0; v < 2; v++)
                v2 += v;
            printf("inner %d: v %d v2 %d\n", i, v, v2);
        }
    }
    printf("outer v %d\n", v);

    int c1 = counter();
    int c2 = counter();
    printf("counter %d then %d\n", c1, c2);

    struct point pts[4] = {{0, 0}, {4, 0}, {4, 4}, {0, 8}};
    struct point c = centroid(pts, 4);
    struct point *pp = &pts[2];
    bump_all(&pp->x, 1, 1);
    bump_all(&pp->y, 1, 1);
    printf("centroid (%d,%d); pts[2] now (%d,%d); origin (%d,%d)\n", c.x, c.y, pts[2].x, pts[2].y,
           g_origin.x, g_origin.y);

    bump_all(g_table, 5, 2);
    bump_all(&g_origin.x, 1, -1);
    bump_all(&g_origin.y, 1, -1);
    st = summarize(g_table, 5);
    printf("table sum %ld; origin (%d,%d)\n", st.sum, g_origin.x, g_origin.y);
    printf("calls %d\n", g_calls);
    return g_calls;
}
