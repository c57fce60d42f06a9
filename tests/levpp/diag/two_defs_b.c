/* two_defs_b.c - a second definition of helper(). */
int helper(int n)
{
    return n;
}
