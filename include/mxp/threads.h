/* mxp — how many threads mxp's parallel functions (mxp_gemm) use.  Results
 * never depend on the thread count: work is split so that every output
 * element is computed by one thread in the same order. */
#ifndef MXP_THREADS_H
#define MXP_THREADS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* n >= 1 threads from now on; 0 restores the default: MXP_NUM_THREADS from
 * the environment, else the number of online processors. */
MXP_API mxp_status mxp_set_num_threads(int n);
MXP_API int mxp_get_num_threads(void);

#ifdef __cplusplus
}
#endif
#endif
