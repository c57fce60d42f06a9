/* task.c - the runtime calls a task makes on its own virtual thread:
 * lev_self, lev_report, lev_return, and the plain lev_checkpoint that
 * untransformed code reaches.
 */
#include <stdlib.h>
#include <string.h>

#include "executor.h"
#include "lev_task.h"
#include "rt.h"
#include "vt.h"

uint64_t lev_self(void)
{
    rt_vt *vt = rt_vt_current();
    return vt ? vt->id : 0;
}

int lev_report(const void *buf, size_t len)
{
    rt_vt *vt = rt_vt_current();
    if (!vt)
        return rt_err(LEV_ENOVT, "lev_report: not called from a virtual thread");
    if (len && !buf)
        return rt_err(LEV_EINVAL, "lev_report: NULL buffer of %zu bytes", len);
    return rt_exec_report(vt, buf, len);
}

int lev_return(const void *buf, size_t len)
{
    rt_vt *vt = rt_vt_current();
    if (!vt)
        return rt_err(LEV_ENOVT, "lev_return: not called from a virtual thread");
    if (len && !buf)
        return rt_err(LEV_EINVAL, "lev_return: NULL buffer of %zu bytes", len);
    void *copy = malloc(len ? len : 1);
    if (!copy)
        return rt_err(LEV_ENOMEM, "lev_return: cannot copy %zu bytes", len);
    if (len)
        memcpy(copy, buf, len);
    free(vt->result);
    vt->result = copy;
    vt->result_len = len;
    return 0;
}

int lev_checkpoint(void) { return 0; }

int lev_yield(void) { return 0; }
