/* consumer.c - a program built against an installed Leverage: prints the
 * message of one error code, which the install test compares with the
 * installed lev_errors.h.
 */
#include <stdio.h>

#include <leverage.h>

int main(void)
{
    printf("LEV_EINVAL: %s\n", lev_strerror(LEV_EINVAL));
    return 0;
}
