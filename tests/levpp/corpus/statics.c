/* statics.c - static locals in checkpointable functions (a counter, a
 * table of an unnamed struct type, one in a recursive function), a type
 * declared inside a function, and an unnamed struct type at file scope:
 * all of them must keep their values across images.
 * Exit status: the last value of the static counter modulo 100 (12). */
#include <stdio.h>

static struct {
    int hits;
    char tag[8];
} g_stats = {0, "stats"};

static int next_id(void)
{
    static int id = 3;
    for (int k = 0; k < 3; k++)
        id++;
    g_stats.hits++;
    return id;
}

/* Depth-first count; the static local sums over every call. */
static int visit(int depth)
{
    static int visits;
    visits++;
    for (int i = 0; i < depth; i++) {
        int sub = visit(depth - 1);
        (void)sub;
    }
    return visits;
}

int main(void)
{
    struct pair {
        const char *name;
        int weight;
    };
    static const struct {
        const char *label;
        int scale;
    } table[] = {{"one", 1}, {"ten", 10}, {"hundred", 100}};
    struct pair pairs[3] = {{"a", 2}, {"b", 3}, {"c", 5}};
    int total = 0;
    for (int i = 0; i < 3; i++) {
        total += table[i].scale * pairs[i].weight;
        printf("%s x %s: %d\n", table[i].label, pairs[i].name, table[i].scale * pairs[i].weight);
    }
    int id = 0;
    for (int i = 0; i < 3; i++) {
        id = next_id();
        printf("id %d\n", id);
    }
    int v = visit(4);
    printf("total %d, visits %d, %s hits %d\n", total, v, g_stats.tag, g_stats.hits);
    return id % 100;
}
