/* no_main.c - --main-task given for a file that does not define main. */
int helper(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i;
    return s;
}
