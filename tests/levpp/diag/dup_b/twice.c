/* dup_b/twice.c - one of two inputs with the same file name. */
int twice_b(int n)
{
    return n + n;
}
