/* frame_name.c - a file-scope object named fr, a name that levpp's
 * checkpointable code uses for its frame. */
#include <stdio.h>

static int fr = 3;

static int scaled(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += fr;
    return s;
}

int main(void)
{
    printf("%d\n", scaled(2));
    return 0;
}
