/* dup_a/twice.c - one of two inputs with the same file name. */
int twice_a(int n)
{
    return 2 * n;
}
