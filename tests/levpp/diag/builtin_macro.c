/* builtin_macro.c - not valid C, in the expansion of a built-in macro
 * (spelled in no file): `short long` once __PTRDIFF_TYPE__ is expanded. */
short __PTRDIFF_TYPE__ bad;

int main(void)
{
    return 0;
}
