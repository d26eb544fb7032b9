/* libFuzzer target for `mxp quant-gemm --a A.npy --b B.npy` (make
 * check-fuzz): the bytes are A's file then B's (npy_pair.h), read and
 * checked by the command's own code (mxp_npy_load_buffer,
 * quant_gemm_operand, quant_gemm_operands_agree: tools/mxp/quant_gemm.c),
 * then the pipeline it runs (quant_gemm_measure: calibration, quantization,
 * the int8 GEMMs, the comparisons), once.  Any bytes must give an error
 * with a sentence or a clean run: never a crash, a leak or undefined
 * behaviour (NaN, inf and huge values included).  tests/fuzz/test_fuzz_replay.c
 * replays tests/fuzz/regressions_quant_gemm/ in make check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mxp.h"
#include "npy_pair.h"
#include "quant_gemm.h"

/* One input: returns 1 when the pipeline ran, 0 when the input was refused;
 * aborts on a broken promise. */
static int fuzz_quant_gemm_one(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        mxp_set_num_threads(1);
        once = 1;
    }
    const size_t na = npy_pair_split(data, size);
    mxp_array *xa = NULL, *xb = NULL, *a = NULL, *b = NULL;
    char err[1024] = "";
    mxp_status st = mxp_npy_load_buffer(&xa, data, na);
    if (st == MXP_OK)
        st = mxp_npy_load_buffer(&xb, data + na, size - na);
    if (st == MXP_OK)
        st = quant_gemm_operand("--a", "a.npy", xa, &a, err, sizeof err);
    if (st == MXP_OK)
        st = quant_gemm_operand("--b", "b.npy", xb, &b, err, sizeof err);
    if (st == MXP_OK)
        st = quant_gemm_operands_agree(a, b, err, sizeof err);
    if (st == MXP_OK) {
        quant_gemm_result r;
        st = quant_gemm_measure(a, b, 1, &r);
        if (st == MXP_OK && (r.a_zero_point < 0 || r.a_zero_point > 255))
            abort();
    } else if (xa && xb && !err[0]) {
        abort(); /* the checks' failures say why */
    }
    mxp_array_free(xa);
    mxp_array_free(xb);
    mxp_array_free(a);
    mxp_array_free(b);
    return st == MXP_OK;
}

#ifndef MXP_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quant_gemm_one(data, size);
    return 0;
}
#endif
