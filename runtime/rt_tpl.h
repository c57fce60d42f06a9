/* rt_tpl.h - guarded use of tpl: its fatal hook longjmps back to the
 * caller instead of exiting the process.
 */
#ifndef RT_TPL_H
#define RT_TPL_H

#include <setjmp.h>

/* This thread's slot for the jump buffer the tpl fatal hook returns to. */
jmp_buf **rt_tpl_jmp_slot(void);

#endif
