/* The steps of the 8-bit table kernels (avx512f.c, avx512vbmi.c): 64 source
 * bytes looked up by the including file's lookup64(x, t), t its table in
 * registers, for mxp_stream_loop (kernels/stream-loop.h).  Reads the 64
 * bytes before writing them: safe in place. */
#ifndef MXP_KERNELS_U8_LUT_X8_STEP_H
#define MXP_KERNELS_U8_LUT_X8_STEP_H

#include "kernels/stream-loop.h"

MXP_INLINE void lut8_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const __m512i r = lookup64(_mm512_loadu_si512((const void *)((const uint8_t *)src + i)), ctx);
    uint8_t *d = (uint8_t *)dst + i;
    if (stream)
        _mm512_stream_si512((__m512i *)d, r);
    else
        _mm512_storeu_si512((void *)d, r);
}

MXP_INLINE void lut8_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const __mmask64 mask = (__mmask64)(~0ull >> (64 - count));
    _mm512_mask_storeu_epi8((uint8_t *)dst + i, mask, lookup64(_mm512_maskz_loadu_epi8(mask, (const uint8_t *)src + i), ctx));
}

#endif
