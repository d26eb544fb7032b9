/* Runs a workload with the Nth allocation failing, for N = 1, 2, ... until
 * it succeeds; every failing run must return MXP_ERR_NO_MEMORY and leave
 * mxp's live bytes where they were.  Returns how many runs failed. */
#ifndef MXP_TEST_ALLOC_FAILURES_H
#define MXP_TEST_ALLOC_FAILURES_H

#include "mxp.h"

int check_every_allocation_failure(mxp_status (*workload)(void));

#endif
