/* body_include_static.h - included inside f() in body_include_static.c:
 * redefines A, declares a static table. */
#undef A
#define A(x) ((x) + 1)
static const int tab[2] = {1, 2};
