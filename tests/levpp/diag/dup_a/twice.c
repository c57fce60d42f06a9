/* dup_a/twice.c - an input given twice (diag dup_names). */
int twice_a(int n)
{
    return 2 * n;
}
