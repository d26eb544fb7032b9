/* mxp — how many threads mxp's parallel functions (mxp_gemm) use, and
 * handing the worker threads back.  Results never depend on the thread
 * count: work is split so that every output element is computed by one
 * thread in the same order (docs/reliability.md, "Threads and
 * determinism"). */
#ifndef MXP_THREADS_H
#define MXP_THREADS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most threads one call uses (mxp_set_num_threads, MXP_NUM_THREADS). */
#define MXP_MAX_THREADS 256

/* n >= 1 threads from now on; 0 restores the default: MXP_NUM_THREADS from
 * the environment (read once per process; a value that is not a positive
 * integer is ignored, one above MXP_MAX_THREADS capped, each with a message
 * on stderr), else the number of online processors. */
MXP_API mxp_status mxp_set_num_threads(int n);
MXP_API int mxp_get_num_threads(void);

/* Joins the worker threads of mxp's thread pool and releases the buffers
 * the allocator caches (mxp_set_pool), so that leak checkers (valgrind
 * --leak-check=full) find nothing of mxp's at exit.  Waits for a job that
 * another thread is running on the pool.  mxp stays usable: the next
 * parallel call starts new workers.  Called from inside one of mxp's
 * parallel jobs (from a callback such as a custom allocator's) it does
 * nothing.  Where calling it is not possible,
 * share/mxp/mxp.supp is a valgrind suppression file for the workers. */
MXP_API void mxp_shutdown(void);

#ifdef __cplusplus
}
#endif
#endif
