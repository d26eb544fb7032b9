/* The peak-rate loop of AVX512_VNNI's byte dot product (the avx512bf16
 * level has VNNI): vpdpbusd does 16 x 4 multiply-adds; peak-template.h's
 * 12 independent chains, int32 accumulators.  See peak-kernels.h. */
#include "kernels/simd-s32-avx512.h"

#define MXP_PEAK_STEP _mm512_dpbusd_epi32
#define MXP_PEAK_OPERAND __m512i
#include "kernels/peak-template.h"

uint64_t mxp_u8s8_peak_dot__avx512bf16(uint64_t iters)
{
    return mxp_peak_chains(iters, _mm512_set1_epi8(3), _mm512_set1_epi8(-2), 4);
}
