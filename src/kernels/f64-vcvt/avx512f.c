/* float64 -> f32, bf16, f16, e4m3, e5m2 with AVX-512F, every rounding mode,
 * rounded once from the float64 value (never through float32).  The integer
 * method of f32-vcvt/round-avx512.h on 64-bit lanes:
 *
 *   f64:  s eeeeeeeeeee m(52)   value = sig * 2^(max(E,1) - 1075)
 *
 * d low bits of sig are dropped (d = 52 - M in the target's normal range);
 * frac64 = those bits as a 64-bit fraction of one target ulp, exact for
 * d <= 64.  Stochastic rounding compares its 32 random bits with the top 32
 * bits of frac64, as the reference does. */
#include "kernels/cvt-kernels.h"
#include "kernels/f32-vcvt/round-avx512.h"

typedef struct wide_fmt {
    int bits; /* 8, 16 or 32 */
    int mbits, bias, has_inf;
} wide_fmt;

MXP_INLINE __m256i sr_mix8(__m256i x, mxp_sr_key k)
{
    x = _mm256_add_epi32(x, _mm256_set1_epi32((int)k.k1));
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
    x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
    x = _mm256_xor_si256(x, _mm256_set1_epi32((int)k.k2));
    x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bu));
    return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

MXP_INLINE __mmask8 round_up8(mxp_rounding mode, __m512i base, __m512i frac64, __mmask8 neg, __mmask8 far,
                              __m512i rnd)
{
    const __m512i half = _mm512_set1_epi64((long long)0x8000000000000000ull);
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        return _mm512_cmpgt_epu64_mask(frac64, half) |
               (_mm512_cmpeq_epi64_mask(frac64, half) & _mm512_test_epi64_mask(base, _mm512_set1_epi64(1)));
    case MXP_ROUND_NEAREST_AWAY:
        return _mm512_cmpge_epu64_mask(frac64, half);
    case MXP_ROUND_TOWARD_ZERO:
        return 0;
    case MXP_ROUND_UP:
        return (_mm512_test_epi64_mask(frac64, frac64) | far) & (__mmask8)~neg;
    case MXP_ROUND_DOWN:
        return (_mm512_test_epi64_mask(frac64, frac64) | far) & neg;
    default:
        return _mm512_cmplt_epu64_mask(rnd, _mm512_srli_epi64(frac64, 32));
    }
}

MXP_INLINE __m512i f64_to_narrow8(__m512i x, wide_fmt f, mxp_rounding mode, int saturate, __m512i rnd)
{
    const int d0 = 52 - f.mbits;
    const long long emin_biased = 1023 + 1 - f.bias;
    const unsigned long long eall = (1ull << (f.bits - 1 - f.mbits)) - 1, mmask = (1ull << f.mbits) - 1;
    const unsigned long long max_enc = f.has_inf ? ((eall - 1) << f.mbits) | mmask : (eall << f.mbits) | (mmask - 1);
    const unsigned long long inf_enc = eall << f.mbits;
    const unsigned long long nan_enc = f.has_inf ? inf_enc | (1ull << (f.mbits - 1)) : (eall << f.mbits) | mmask;
    const __m512i c64 = _mm512_set1_epi64(64);

    const __m512i a = _mm512_and_si512(x, _mm512_set1_epi64(0x7fffffffffffffffll));
    const __mmask8 neg = _mm512_movepi64_mask(x);
    const __m512i e = _mm512_srli_epi64(a, 52);
    const __mmask8 special = _mm512_cmpeq_epi64_mask(e, _mm512_set1_epi64(2047));
    const __m512i m = _mm512_and_si512(a, _mm512_set1_epi64(0xfffffffffffffll));

    __m512i base = _mm512_sub_epi64(_mm512_srli_epi64(a, d0), _mm512_set1_epi64((long long)(1023 - f.bias) << f.mbits));
    __m512i frac64 = _mm512_slli_epi64(a, 64 - d0);
    __mmask8 far = 0;
    const __mmask8 nonzero = _mm512_test_epi64_mask(a, a);
    const __mmask8 sub = _mm512_cmplt_epi64_mask(e, _mm512_set1_epi64(emin_biased)) & nonzero;
    if (sub) {
        const __m512i sig = _mm512_mask_or_epi64(m, _mm512_test_epi64_mask(e, e), m, _mm512_set1_epi64(1ll << 52));
        const __m512i d = _mm512_sub_epi64(_mm512_set1_epi64(emin_biased + d0), _mm512_max_epi64(e, _mm512_set1_epi64(1)));
        base = _mm512_mask_srlv_epi64(base, sub, sig, d);
        frac64 = _mm512_mask_mov_epi64(frac64, sub,
                                       _mm512_or_si512(_mm512_sllv_epi64(sig, _mm512_sub_epi64(c64, d)),
                                                       _mm512_srlv_epi64(sig, _mm512_sub_epi64(d, c64))));
        far = _mm512_cmpgt_epi64_mask(d, c64) & sub;
    }
    const __mmask8 up = round_up8(mode, base, frac64, neg, far, rnd);
    __m512i r = _mm512_mask_add_epi64(base, up, base, _mm512_set1_epi64(1));
    r = _mm512_maskz_mov_epi64(nonzero, r); /* zeros: the rebias made them negative */

    const __mmask8 ovf = _mm512_cmpgt_epu64_mask(r, _mm512_set1_epi64((long long)max_enc)) & (__mmask8)~special;
    if (ovf) {
        __mmask8 to_inf;
        switch (mode) {
        case MXP_ROUND_TOWARD_ZERO: to_inf = 0; break;
        case MXP_ROUND_UP: to_inf = (__mmask8)~neg; break;
        case MXP_ROUND_DOWN: to_inf = neg; break;
        default: to_inf = 0xff; break;
        }
        if (saturate)
            to_inf = 0;
        r = _mm512_mask_mov_epi64(r, ovf, _mm512_set1_epi64((long long)max_enc));
        r = _mm512_mask_mov_epi64(r, ovf & to_inf, _mm512_set1_epi64((long long)(f.has_inf ? inf_enc : nan_enc)));
    }
    if (special) {
        const __mmask8 is_nan = _mm512_test_epi64_mask(m, m) & special;
        const unsigned long long inf_out = saturate ? max_enc : f.has_inf ? inf_enc : nan_enc;
        r = _mm512_mask_mov_epi64(r, special & (__mmask8)~is_nan, _mm512_set1_epi64((long long)inf_out));
        __m512i nan = _mm512_set1_epi64((long long)nan_enc);
        if (f.has_inf)
            nan = _mm512_or_si512(nan, _mm512_srli_epi64(m, d0));
        r = _mm512_mask_mov_epi64(r, is_nan, nan);
    }
    const __m512i sign = _mm512_slli_epi64(_mm512_srli_epi64(x, 63), f.bits - 1);
    return _mm512_or_si512(r, sign);
}

MXP_INLINE void store8(void *dst, size_t i, __m512i r, int bits, __mmask8 mask, int stream)
{
    if (bits == 32) {
        __m256i *d = (__m256i *)((uint32_t *)dst + i);
        if (mask != 0xff)
            _mm512_mask_cvtepi64_storeu_epi32(d, mask, r);
        else if (stream)
            _mm256_stream_si256(d, _mm512_cvtepi64_epi32(r));
        else
            _mm256_storeu_si256(d, _mm512_cvtepi64_epi32(r));
    } else if (bits == 16) {
        __m128i *d = (__m128i *)((uint16_t *)dst + i);
        if (mask != 0xff)
            _mm512_mask_cvtepi64_storeu_epi16(d, mask, r);
        else if (stream)
            _mm_stream_si128(d, _mm512_cvtepi64_epi16(r));
        else
            _mm_storeu_si128(d, _mm512_cvtepi64_epi16(r));
    } else {
        uint8_t *d = (uint8_t *)dst + i;
        if (mask != 0xff)
            _mm512_mask_cvtepi64_storeu_epi8(d, mask, r);
        else if (stream)
            _mm_stream_si64((long long *)(void *)d, _mm_cvtsi128_si64(_mm512_cvtepi64_epi8(r)));
        else
            _mm_storel_epi64((__m128i *)d, _mm512_cvtepi64_epi8(r));
    }
}

/* Elements [i, i + count), count <= 8, with masked loads and stores. */
MXP_INLINE void partial(void *dst, const double *src, size_t i, size_t count, wide_fmt f, mxp_rounding mode,
                        int saturate, __m256i idx, mxp_sr_key key)
{
    __mmask8 mask = (__mmask8)((1u << count) - 1);
    __m512i x = _mm512_maskz_loadu_epi64(mask, src + i);
    __m512i rnd = mode == MXP_ROUND_STOCHASTIC ? _mm512_cvtepu32_epi64(sr_mix8(idx, key)) : _mm512_setzero_si512();
    store8(dst, i, f64_to_narrow8(x, f, mode, saturate, rnd), f.bits, mask, 0);
}

MXP_INLINE void loop(void *dst, const double *src, size_t n, const mxp_cvt_params *p, wide_fmt f, mxp_rounding mode)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const size_t out_size = (size_t)f.bits / 8, vec_bytes = 8 * out_size;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)p->index0), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m512i rnd = _mm512_setzero_si512();
    size_t i = 0;
    /* Large outputs bypass the cache, as memcpy does; the head is converted
     * until dst is aligned. */
    int stream = n * (8 + out_size) >= MXP_STREAM_BYTES && (uintptr_t)dst % out_size == 0;
    if (stream) {
        size_t head = ((vec_bytes - (uintptr_t)dst % vec_bytes) % vec_bytes) / out_size;
        if (head) {
            partial(dst, src, 0, head < n ? head : n, f, mode, saturate, idx, key);
            idx = _mm256_add_epi32(idx, _mm256_set1_epi32((int)head));
            i = head;
        }
    }
    for (; i + 8 <= n; i += 8) {
        __m512i x = _mm512_loadu_si512((const void *)(src + i));
        if (mode == MXP_ROUND_STOCHASTIC) {
            rnd = _mm512_cvtepu32_epi64(sr_mix8(idx, key));
            idx = _mm256_add_epi32(idx, _mm256_set1_epi32(8));
        }
        store8(dst, i, f64_to_narrow8(x, f, mode, saturate, rnd), f.bits, 0xff, stream);
    }
    if (i < n)
        partial(dst, src, i, n - i, f, mode, saturate, idx, key);
    if (stream)
        _mm_sfence();
}

MXP_INLINE void by_mode(void *dst, const void *src, size_t n, const mxp_cvt_params *p, wide_fmt f)
{
    const double *s = src;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: loop(dst, s, n, p, f, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: loop(dst, s, n, p, f, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: loop(dst, s, n, p, f, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: loop(dst, s, n, p, f, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: loop(dst, s, n, p, f, MXP_ROUND_DOWN); break;
    default: loop(dst, s, n, p, f, MXP_ROUND_STOCHASTIC); break;
    }
}

void mxp_f64_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (wide_fmt){ 32, 23, 127, 1 });
}

void mxp_f64_bf16_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (wide_fmt){ 16, 7, 127, 1 });
}

void mxp_f64_f16_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (wide_fmt){ 16, 10, 15, 1 });
}

void mxp_f64_e4m3_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (wide_fmt){ 8, 3, 7, 0 });
}

void mxp_f64_e5m2_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (wide_fmt){ 8, 2, 15, 1 });
}
