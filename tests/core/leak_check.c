/* A program for valgrind --leak-check=full --error-exitcode=1 (ctest
 * leak_check_shutdown and leak_check_suppressions): a GEMM on two threads
 * (the pool's workers start), a conversion and an array, then
 * mxp_shutdown(), which must leave nothing of mxp's for the leak checker
 * to report.  With --no-shutdown the workers are left running, for the
 * suppression file (tools/valgrind/mxp.supp) to cover. */
#include <stdio.h>
#include <string.h>

#include "mxp.h"

enum { M = 160, N = 160, K = 160 }; /* M N K > 4e6: two threads */

static float a[M * K], b[K * N], c[M * N];

int main(int argc, char **argv)
{
    const int shutdown = !(argc > 1 && !strcmp(argv[1], "--no-shutdown"));
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 5 - 2);
    mxp_set_pool(true); /* cached blocks: released by mxp_shutdown too */
    if (mxp_set_num_threads(2) != MXP_OK ||
        mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c, MXP_F32, N, NULL) !=
            MXP_OK) {
        fprintf(stderr, "leak_check: %s\n", mxp_last_error());
        return 1;
    }
    float want = 0;
    for (int p = 0; p < K; p++)
        want += a[5 * K + p] * b[p * N + 9];
    mxp_array *x = NULL;
    if (c[5 * N + 9] != want || mxp_array_arange(&x, MXP_BF16, 0, 100, 1) != MXP_OK) {
        fprintf(stderr, "leak_check: wrong result\n");
        return 1;
    }
    mxp_array_free(x);
    if (shutdown)
        mxp_shutdown();
    return 0;
}
