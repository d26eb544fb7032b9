/* The peak-rate loop of AVX512_BF16's dot product: vdpbf16ps does 16 x 2
 * multiply-adds; peak-template.h's 12 independent chains, float32
 * accumulators.  See peak-kernels.h. */
#include "kernels/simd-f32-avx512.h"

#define MXP_PEAK_STEP _mm512_dpbf16_ps
#define MXP_PEAK_OPERAND __m512bh
#include "kernels/peak-template.h"

uint64_t mxp_bf16_peak_dot__avx512bf16(uint64_t iters)
{
    const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x3f7f3f7f);
    return mxp_peak_chains(iters, x, y, 2);
}
