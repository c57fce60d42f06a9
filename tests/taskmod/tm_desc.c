/* tm_desc.c - shared objects whose constructors register what a task
 * module must not: descriptors the runtime refuses (TM_BAD_ABI: built for
 * another frame ABI), or two modules (TM_TWO_MODULES). The loader must
 * refuse both, naming the problem. */
#include <stddef.h>

#include "lev_abi.h"

#ifdef TM_BAD_ABI
static const lev_module_desc s_desc = {
    LEV_ABI_VERSION + 100, "tm_bad_abi", 0, NULL, 0, NULL, 0, NULL};
#else
static const lev_module_desc s_desc = {LEV_ABI_VERSION, "tm_first", 0, NULL, 0, NULL, 0, NULL};
static const lev_module_desc s_other = {LEV_ABI_VERSION, "tm_second", 0, NULL, 0, NULL, 0, NULL};
#endif

__attribute__((constructor)) static void s_register(void)
{
    lev_module *m;
    (void)lev_module_register(&s_desc, &m);
#ifndef TM_BAD_ABI
    (void)lev_module_register(&s_other, &m);
#endif
}
