/* leverage.h - the public interface of Leverage: the one header that
 * applications and tasks include.
 *
 * Installed with the headers it includes: lev_errors.h (error codes and
 * lev_strerror) and lev_abi.h (the frame ABI that generated task code uses).
 */
#ifndef LEVERAGE_H
#define LEVERAGE_H

#include "lev_abi.h"
#include "lev_errors.h"

#endif
