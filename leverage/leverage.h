/* leverage.h - the public interface of Leverage: the one header that
 * applications and tasks include.
 *
 * Installed with the headers it includes: lev_errors.h (error codes and
 * lev_strerror), lev_abi.h (the frame ABI that generated task code uses),
 * lev_task.h (what task code calls: lev_self, lev_report, lev_return,
 * lev_checkpoint, and lev_main_run for whole programs) and lev_client.h
 * (what an application calls: lev_vc_open, lev_vt_start, lev_vt_join,
 * lev_vc_on_report, lev_vt_send, lev_global_set, lev_global_get,
 * lev_vc_stats_get, lev_vc_close).
 */
#ifndef LEVERAGE_H
#define LEVERAGE_H

#include "lev_abi.h"
#include "lev_client.h"
#include "lev_errors.h"
#include "lev_task.h"

#endif
