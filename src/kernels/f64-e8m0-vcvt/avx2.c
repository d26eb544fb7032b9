/* float64 -> float8_e8m0fnu with AVX2, stochastic rounding (the other modes:
 * float32 rounded to odd, then the float32 kernel -- one rounding; the
 * draws of stochastic rounding need the fraction's top 32 bits, which
 * float32 does not keep).  cvt-e8m0.h's rule on float64 bits b of a
 * positive x: E = (b >> 52) - 896 (1023 - 127), the result E plus one
 * where r < the fraction's top 32 bits ((b >> 20) mod 2^32, r the
 * element's draw); below 2^-127 (E < 0, so E plus one < 1) 0, the
 * smallest value, as the float32 kernels give; a result past 254 (2^127 rounded up, x >= 2^128,
 * +inf) 255, or 254 saturating; zero, negative values and NaN 255.
 * Eight elements a quarter step, 32 a step.  Twin: the reference
 * converter. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernels.h"
#include "kernels/cvt-round-avx2.h"
#include "kernels/stream-loop.h"

typedef struct f64_e8m0_ctx {
    int saturate;
    mxp_sr_key key;
    uint64_t index0;
} f64_e8m0_ctx;

/* The low 32 bits of each 64-bit lane of a (elements 0-3) and b (4-7). */
static inline __m256i low32(__m256i a, __m256i b)
{
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    return _mm256_blend_epi32(_mm256_permutevar8x32_epi32(a, even), _mm256_permutevar8x32_epi32(b, even), 0xf0);
}

/* 8 doubles from s to 8 codes in 32-bit lanes, draws for index i */
static inline __m256i step8(const double *s, size_t i, const f64_e8m0_ctx *c)
{
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)s);
    const __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(s + 4));
    const __m256i zero = _mm256_setzero_si256(), inf1 = _mm256_set1_epi64x(0x7ff0000000000001ll);
    /* 0 < b < +inf's pattern + 1 as signed: positive, finite or +inf */
    const __m256i v0 = _mm256_and_si256(_mm256_cmpgt_epi64(b0, zero), _mm256_cmpgt_epi64(inf1, b0));
    const __m256i v1 = _mm256_and_si256(_mm256_cmpgt_epi64(b1, zero), _mm256_cmpgt_epi64(inf1, b1));
    const __m256i valid = low32(v0, v1);
    const __m256i e = _mm256_sub_epi32(low32(_mm256_srli_epi64(b0, 52), _mm256_srli_epi64(b1, 52)), MXP_V8(896));
    const __m256i frac = low32(_mm256_srli_epi64(b0, 20), _mm256_srli_epi64(b1, 20));
    const __m256i r = mxp_sr_mix_avx2(mxp_sr_index_avx2(c->index0 + i), c->key);
    /* up is -1 where true; E < 0 stays below 1 and the packs (signed to
       unsigned, saturating) make it 0 */
    __m256i k = _mm256_sub_epi32(e, mxp_cmplt_epu32_avx2(r, frac));
    k = _mm256_min_epi32(k, MXP_V8(c->saturate ? 254 : 255)); /* past 254 (E < 1152) */
    return _mm256_blendv_epi8(MXP_V8(255), k, valid);
}

static inline __m256i step32(const double *s, size_t i, const f64_e8m0_ctx *c)
{
    return mxp_pack8_avx2(step8(s + i, i, c), step8(s + i + 8, i + 8, c), step8(s + i + 16, i + 16, c),
                          step8(s + i + 24, i + 24, c));
}

static void full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    mxp_store256_avx2((uint8_t *)dst + i, step32(src, i, ctx), stream);
}

/* count < 32 elements through a zero-padded buffer (its draws those of
 * elements i ..) */
static void part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    double in[32] = { 0 };
    uint8_t out[32];
    f64_e8m0_ctx shifted = *(const f64_e8m0_ctx *)ctx;
    shifted.index0 += i;
    memcpy(in, (const double *)src + i, count * sizeof in[0]);
    _mm256_storeu_si256((__m256i *)(void *)out, step32(in, 0, &shifted));
    memcpy((uint8_t *)dst + i, out, count);
}

void mxp_f64_e8m0_vcvt__avx2_sr(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const f64_e8m0_ctx c = { p->overflow == MXP_OVERFLOW_SATURATE, mxp_sr_key_for(p->seed, p->index0), p->index0 };
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 8, 1, 32, 32 }, full, part, &c);
}
