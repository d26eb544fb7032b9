#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/alloc_failures.h"

int check_every_allocation_failure(mxp_status (*workload)(void))
{
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    int failures = 0;
    for (uint64_t nth = 1;; nth++) {
        mxp_set_alloc_fail_after(nth);
        mxp_status st = workload();
        mxp_set_alloc_fail_after(0);
        mxp_memory_stats_get(&after);
        if (after.current_bytes != before.current_bytes)
            fail_msg("allocation %llu failing leaked %lld bytes", (unsigned long long)nth,
                     (long long)(after.current_bytes - before.current_bytes));
        if (st == MXP_OK)
            return failures;
        if (st != MXP_ERR_NO_MEMORY)
            fail_msg("allocation %llu failing gave %s, not MXP_ERR_NO_MEMORY", (unsigned long long)nth,
                     mxp_status_str(st));
        failures++;
    }
}
