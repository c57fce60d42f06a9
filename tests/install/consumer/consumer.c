/* consumer.c - a program built against an installed Leverage: prints the
 * message of the error that the client API gives a NULL argument, which
 * the install test compares with LEV_EINVAL's in the installed
 * lev_errors.h (so the client API, and the libraries it needs, link).
 */
#include <stdio.h>

#include <leverage.h>

int main(void)
{
    printf("LEV_EINVAL: %s\n", lev_strerror(lev_vc_open(NULL, NULL)));
    return 0;
}
