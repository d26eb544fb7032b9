/* float32 -> float16 (F16C, the four IEEE modes) with AVX2, 8 lanes per
 * step; and float32 -> bf16, f16 (nearest away, stochastic), e4m3, e5m2,
 * s8, u8 in every mode by the methods of round-avx2.h, 32 elements a step.  Tails (and the head before an aligned streaming store) go
 * through a small zero-padded buffer.  Forward, reading a step's input
 * before writing its results: in-place narrowing (dst == src) works. */
#include <immintrin.h>
#include <string.h>

#include "core/fpenv.h"
#include "kernels/cvt-kernels.h"
#include "kernels/f32-vcvt/round-avx2.h"

/* vcvtps2ph reads float32 subnormals as zero under MXCSR.DAZ; that only
 * changes results rounding away from zero, so those lanes are fixed up. */
MXP_INLINE __m128i cvtps_ph(__m256 x, mxp_rounding mode)
{
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case MXP_ROUND_TOWARD_ZERO: return _mm256_cvtps_ph(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    case MXP_ROUND_UP: return _mm256_cvtps_ph(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    }
}

MXP_INLINE __m128i f16x8(__m256i x, mxp_rounding mode, int saturate)
{
    __m128i r = cvtps_ph(_mm256_castsi256_ps(x), mode);
    if (mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN) {
        __m256i zero = _mm256_setzero_si256();
        __m256i exp0 = _mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7f800000)), zero);
        __m256i nz = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), zero),
                                      _mm256_set1_epi32(-1));
        __m256i neg = _mm256_srai_epi32(x, 31);
        __m256i tiny = _mm256_and_si256(_mm256_and_si256(exp0, nz), mode == MXP_ROUND_UP ? _mm256_xor_si256(neg, _mm256_set1_epi32(-1)) : neg);
        /* no branch: subnormal inputs are common enough (data near zero)
         * that a branch on them mispredicts */
        __m128i mask = _mm_packs_epi32(_mm256_castsi256_si128(tiny), _mm256_extracti128_si256(tiny, 1));
        r = _mm_blendv_epi8(r, _mm_set1_epi16(mode == MXP_ROUND_UP ? 0x0001 : (short)0x8001), mask);
    }
    if (saturate) { /* +-inf - 1 ulp = +-max */
        __m128i inf = _mm_cmpeq_epi16(_mm_and_si128(r, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
        r = _mm_add_epi16(r, inf);
    }
    return r;
}

MXP_INLINE void f16_loop(uint16_t *d, const float *s, size_t n, int saturate, mxp_rounding mode)
{
    size_t i = 0;
    /* Large outputs bypass the cache (as memcpy does); the head is
     * converted until dst is aligned. */
    const int stream = n * 6 >= MXP_STREAM_BYTES && (uintptr_t)d % 2 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)d % 32) % 32) / 2;
        head = head < n ? head : n;
        if (head) {
            float in[16] = { 0 };
            uint16_t out[16];
            memcpy(in, s, head * 4);
            _mm_storeu_si128((__m128i *)out, f16x8(_mm256_loadu_si256((const __m256i *)in), mode, saturate));
            _mm_storeu_si128((__m128i *)(out + 8), f16x8(_mm256_loadu_si256((const __m256i *)(in + 8)), mode, saturate));
            memcpy(d, out, head * 2);
            i = head;
        }
        for (; i + 16 <= n; i += 16) {
            _mm_prefetch((const char *)(s + i + 256), _MM_HINT_T0);
            __m128i r0 = f16x8(_mm256_loadu_si256((const __m256i *)(s + i)), mode, saturate);
            __m128i r1 = f16x8(_mm256_loadu_si256((const __m256i *)(s + i + 8)), mode, saturate);
            _mm256_stream_si256((__m256i *)(d + i), _mm256_set_m128i(r1, r0));
        }
    }
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i), f16x8(_mm256_loadu_si256((const __m256i *)(s + i)), mode, saturate));
    if (i < n) {
        float in[8] = { 0 };
        uint16_t out[8];
        memcpy(in, s + i, (n - i) * 4);
        _mm_storeu_si128((__m128i *)out, f16x8(_mm256_loadu_si256((const __m256i *)in), mode, saturate));
        memcpy(d + i, out, (n - i) * 2);
    }
    if (stream)
        _mm_sfence();
}

/* ---- every mode by integer arithmetic ------------------------------------
 * fmt.bits == 0 selects an integer target with range [lo, hi]. */
typedef struct target {
    mxp_narrow_fmt2 fmt;
    int lo, hi;
    int fp; /* deterministic modes by mxp_f32_to_narrow_fp_avx2 */
} target;

MXP_INLINE size_t out_size(target t)
{
    return t.fmt.bits == 16 ? 2 : 1;
}

/* 8 lanes; r: the random bits (stochastic rounding) */
MXP_INLINE __m256i convert8(__m256i x, target t, mxp_rounding mode, int saturate, __m256i r)
{
    if (t.fmt.bits == 16 && t.fmt.mbits == 7)
        return mxp_f32_to_bf16_avx2(x, mode, saturate, mxp_not_avx2(r));
    if (t.fmt.bits && t.fp && mode != MXP_ROUND_STOCHASTIC)
        return mxp_f32_to_narrow_fp_avx2(x, t.fmt, mode, saturate);
    if (t.fmt.bits)
        return mxp_f32_to_narrow_avx2(x, t.fmt, mode, saturate, r);
    if (mode != MXP_ROUND_STOCHASTIC) /* int32, for the saturating packs */
        return mxp_f32_to_int_sat_avx2(x, mode, 1);
    return _mm256_and_si256(mxp_f32_to_small_int_avx2(x, t.lo, t.hi, mode, r), MXP_V8(0xff));
}

/* 32 elements from s to d; idx: lo32 of element 0's index in every lane's
 * place (lanes 0..7). */
MXP_INLINE void step32(void *d, const float *s, target t, mxp_rounding mode, int saturate, __m256i idx,
                       mxp_sr_key key, int stream)
{
    __m256i x[4], r[4], z = _mm256_setzero_si256();
    for (int k = 0; k < 4; k++)
        x[k] = _mm256_loadu_si256((const __m256i *)(s + 8 * k));
    for (int k = 0; k < 4; k++) {
        __m256i rk = z;
        if (mode == MXP_ROUND_STOCHASTIC)
            rk = mxp_sr_mix_avx2(_mm256_add_epi32(idx, MXP_V8(8 * k)), key);
        r[k] = convert8(x[k], t, mode, saturate, rk);
    }
    if (out_size(t) == 2) {
        mxp_store256_avx2(d, mxp_pack16_avx2(r[0], r[1]), stream);
        mxp_store256_avx2((uint16_t *)d + 16, mxp_pack16_avx2(r[2], r[3]), stream);
    } else if (t.fmt.bits == 0 && mode != MXP_ROUND_STOCHASTIC) {
        mxp_store256_avx2(d, t.lo ? mxp_pack_s8_avx2(r[0], r[1], r[2], r[3]) : mxp_pack_u8_avx2(r[0], r[1], r[2], r[3]),
                          stream);
    } else {
        mxp_store256_avx2(d, mxp_pack8_avx2(r[0], r[1], r[2], r[3]), stream);
    }
}

/* count < 32 elements through a buffer */
MXP_INLINE void part32(void *d, const float *s, size_t count, target t, mxp_rounding mode, int saturate,
                       __m256i idx, mxp_sr_key key)
{
    float in[32] = { 0 };
    uint16_t out[32];
    memcpy(in, s, count * 4);
    step32(out, in, t, mode, saturate, idx, key, 0);
    memcpy(d, out, count * out_size(t));
}

MXP_INLINE void loop(void *dst, const float *src, size_t n, const mxp_cvt_params *p, target t, mxp_rounding mode)
{
    const size_t os = out_size(t);
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    __m256i idx = mxp_sr_index_avx2(p->index0);
    unsigned char *d = dst;
    size_t i = 0;
    const int stream = n * (4 + os) >= MXP_STREAM_BYTES && (uintptr_t)dst % os == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / os;
        head = head < n ? head : n;
        if (head) {
            part32(d, src, head, t, mode, saturate, idx, key);
            i = head;
        }
    }
    /* A software prefetch 1 KiB ahead: measured on the Xeon (family 6
     * model 0xa7) to take the compute-heavier modes closer to memcpy. */
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(src + i + 256), _MM_HINT_T0);
        _mm_prefetch((const char *)(src + i + 256 + 16), _MM_HINT_T0);
        step32(d + i * os, src + i, t, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key, stream);
    }
    if (i < n)
        part32(d + i * os, src + i, n - i, t, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key);
    if (stream)
        _mm_sfence();
}

/* One instantiation of the loop per rounding mode, so the mode is a constant. */
MXP_INLINE void by_mode(void *dst, const void *src, size_t n, const mxp_cvt_params *p, target t)
{
    const float *s = (const float *)src;
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: loop(dst, s, n, p, t, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: loop(dst, s, n, p, t, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: loop(dst, s, n, p, t, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: loop(dst, s, n, p, t, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: loop(dst, s, n, p, t, MXP_ROUND_DOWN); break;
    default: loop(dst, s, n, p, t, MXP_ROUND_STOCHASTIC); break;
    }
    mxp_fpenv_leave(env);
}

/* bfloat16, every mode: "add, then shift by 16" on the bits. */
void mxp_f32_bf16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 16, 7, 127, 1 }, 0, 0, 0 });
}

/* float8, every mode: the deterministic ones by the float unit
 * (mxp_f32_to_narrow_fp_avx2), stochastic rounding by the variable-shift
 * method. */
void mxp_f32_e4m3_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 8, 3, 7, 0 }, 0, 0, 1 });
}

void mxp_f32_e5m2_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 8, 2, 15, 1 }, 0, 0, 1 });
}

/* float16: the four IEEE modes by vcvtps2ph (above); nearest away by the
 * float unit, stochastic rounding by the variable-shift method (sr-vcvt/avx2.c
 * has the faster add-and-shift kernel). */
void mxp_f32_f16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int sat = p->overflow == MXP_OVERFLOW_SATURATE;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: f16_loop(dst, src, n, sat, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_TOWARD_ZERO: f16_loop(dst, src, n, sat, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: f16_loop(dst, src, n, sat, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: f16_loop(dst, src, n, sat, MXP_ROUND_DOWN); break;
    default: by_mode(dst, src, n, p, (target){ { 16, 10, 15, 1 }, 0, 0, 1 }); break;
    }
}

/* int8, uint8: the deterministic modes by vroundps, stochastic rounding by
 * the integer method. */
void mxp_f32_s8_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 0, 0, 0, 0 }, -128, 127, 0 });
}

void mxp_f32_u8_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 0, 0, 0, 0 }, 0, 255, 0 });
}
