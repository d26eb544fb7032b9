/* float32 -> bf16, f16, e4m3, e5m2, s8, u8 with AVX-512F, every rounding
 * mode, 16 lanes per step, masked tails; then faster kernels for some modes
 * by hardware conversions: int8/uint8 by vcvtps2dq, e5m2 and e4m3 through
 * vcvtps2ph rounded to odd.  Forward, reading a vector before writing it:
 * safe for in-place narrowing (dst == src). */
#include "core/fpenv.h"
#include "kernels/cvt-kernels.h"
#include "kernels/f32-vcvt/round-avx512.h"

typedef enum { OUT_U16, OUT_U8 } out_kind;

MXP_INLINE void store_lanes(void *dst, size_t i, __m512i r, out_kind out, __mmask16 mask, int stream)
{
    if (out == OUT_U16) {
        uint16_t *d = (uint16_t *)dst + i;
        if (mask != 0xffff)
            _mm512_mask_cvtepi32_storeu_epi16(d, mask, r);
        else if (stream)
            _mm256_stream_si256((__m256i *)d, _mm512_cvtepi32_epi16(r));
        else
            _mm256_storeu_si256((__m256i *)d, _mm512_cvtepi32_epi16(r));
    } else {
        uint8_t *d = (uint8_t *)dst + i;
        if (mask != 0xffff)
            _mm512_mask_cvtepi32_storeu_epi8(d, mask, r);
        else if (stream)
            _mm_stream_si128((__m128i *)d, _mm512_cvtepi32_epi8(r));
        else
            _mm_storeu_si128((__m128i *)d, _mm512_cvtepi32_epi8(r));
    }
}

/* fmt.bits == 0 selects an integer target with range [lo, hi]. */
typedef struct target {
    mxp_narrow_fmt fmt;
    int lo, hi;
} target;

MXP_INLINE __m512i convert16(__m512i x, target t, mxp_rounding mode, int saturate, __m512i rnd)
{
    if (t.fmt.bits == 16 && t.fmt.mbits == 7)
        return mxp_f32_to_bf16_avx512(x, mode, saturate, rnd);
    if (t.fmt.bits)
        return mxp_f32_to_narrow_fast_avx512(x, t.fmt, mode, saturate, rnd);
    return mxp_f32_to_small_int_avx512(x, t.lo, t.hi, mode, rnd);
}

/* Converts elements [i, i + count), count <= 16, with masked loads and stores. */
MXP_INLINE void partial(void *dst, const float *src, size_t i, size_t count, target t, mxp_rounding mode,
                        int saturate, __m512i rnd)
{
    const out_kind out = t.fmt.bits == 16 ? OUT_U16 : OUT_U8;
    __mmask16 mask = (__mmask16)((1u << count) - 1);
    __m512i x = _mm512_maskz_loadu_epi32(mask, src + i);
    store_lanes(dst, i, convert16(x, t, mode, saturate, rnd), out, mask, 0);
}

MXP_INLINE void loop(void *dst, const float *src, size_t n, const mxp_cvt_params *p, target t,
                     mxp_rounding mode)
{
    const out_kind out = t.fmt.bits == 16 ? OUT_U16 : OUT_U8;
    const size_t out_size = out == OUT_U16 ? 2 : 1, vec_bytes = 16 * out_size;
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    __m512i idx = mxp_sr_index_avx512(p->index0);
    __m512i rnd = _mm512_setzero_si512();
    size_t i = 0;
    /* Large outputs bypass the cache (as memcpy does): no read-for-ownership
     * of the destination.  The head is converted until dst is aligned. */
    int stream = n * (4 + out_size) >= MXP_STREAM_BYTES && (uintptr_t)dst % out_size == 0;
    if (stream) {
        size_t head = ((vec_bytes - (uintptr_t)dst % vec_bytes) % vec_bytes) / out_size;
        if (head) {
            if (mode == MXP_ROUND_STOCHASTIC)
                rnd = mxp_sr_mix_avx512(idx, key);
            partial(dst, src, 0, head, t, mode, saturate, rnd);
            idx = _mm512_add_epi32(idx, _mm512_set1_epi32((int)head));
            i = head;
        }
    }
    /* Two vectors a step: independent work for the out-of-order core. */
    for (; i + 32 <= n; i += 32) {
        __m512i x0 = _mm512_loadu_si512((const void *)(src + i));
        __m512i x1 = _mm512_loadu_si512((const void *)(src + i + 16));
        __m512i rnd1 = rnd;
        if (mode == MXP_ROUND_STOCHASTIC) {
            rnd = mxp_sr_mix_avx512(idx, key);
            rnd1 = mxp_sr_mix_avx512(_mm512_add_epi32(idx, _mm512_set1_epi32(16)), key);
            idx = _mm512_add_epi32(idx, _mm512_set1_epi32(32));
        }
        __m512i r0 = convert16(x0, t, mode, saturate, rnd);
        __m512i r1 = convert16(x1, t, mode, saturate, rnd1);
        store_lanes(dst, i, r0, out, 0xffff, stream);
        store_lanes(dst, i + 16, r1, out, 0xffff, stream);
    }
    for (; i + 16 <= n; i += 16) {
        __m512i x = _mm512_loadu_si512((const void *)(src + i));
        if (mode == MXP_ROUND_STOCHASTIC) {
            rnd = mxp_sr_mix_avx512(idx, key);
            idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16));
        }
        store_lanes(dst, i, convert16(x, t, mode, saturate, rnd), out, 0xffff, stream);
    }
    if (i < n) {
        if (mode == MXP_ROUND_STOCHASTIC)
            rnd = mxp_sr_mix_avx512(idx, key);
        partial(dst, src, i, n - i, t, mode, saturate, rnd);
    }
    if (stream)
        _mm_sfence();
}

/* One instantiation of the loop per rounding mode, so the mode is a constant. */
MXP_INLINE void by_mode(void *dst, const void *src, size_t n, const mxp_cvt_params *p, target t)
{
    const float *s = (const float *)src;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: loop(dst, s, n, p, t, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: loop(dst, s, n, p, t, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: loop(dst, s, n, p, t, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: loop(dst, s, n, p, t, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: loop(dst, s, n, p, t, MXP_ROUND_DOWN); break;
    default: loop(dst, s, n, p, t, MXP_ROUND_STOCHASTIC); break;
    }
}

void mxp_f32_bf16_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 16, 7, 127, 1 }, 0, 0 });
}

/* float16 in the four IEEE directed/nearest modes: vcvtps2ph.  It reads
 * float32 subnormals as zero under MXCSR.DAZ (its output ignores FTZ), which
 * only matters when rounding away from zero: those lanes are fixed up. */
MXP_INLINE __m256i cvtps_ph(__m512 x, mxp_rounding mode)
{
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case MXP_ROUND_TOWARD_ZERO: return _mm512_cvtps_ph(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    case MXP_ROUND_UP: return _mm512_cvtps_ph(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    }
}

MXP_INLINE __m256i f16_hw16(__m512i x, mxp_rounding mode, int saturate)
{
    __m256i r = cvtps_ph(_mm512_castsi512_ps(x), mode);
    if (mode == MXP_ROUND_UP || mode == MXP_ROUND_DOWN) {
        __mmask16 tiny = _mm512_testn_epi32_mask(x, _mm512_set1_epi32(0x7f800000)) &
                         _mm512_test_epi32_mask(x, _mm512_set1_epi32(0x7fffffff));
        __mmask16 neg = _mm512_movepi32_mask(x);
        tiny &= mode == MXP_ROUND_UP ? (__mmask16)~neg : neg;
        r = _mm256_mask_mov_epi16(r, tiny, _mm256_set1_epi16(mode == MXP_ROUND_UP ? 0x0001 : (short)0x8001));
    }
    if (saturate) {
        __mmask16 inf = _mm256_cmpeq_epi16_mask(_mm256_and_si256(r, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x7c00));
        r = _mm256_mask_sub_epi16(r, inf, r, _mm256_set1_epi16(1)); /* +-inf - 1 ulp = +-max */
    }
    return r;
}

MXP_INLINE void f16_hw_loop(void *dst, const float *src, size_t n, const mxp_cvt_params *p, mxp_rounding mode)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    uint16_t *d = dst;
    size_t i = 0;
    int stream = n * 6 >= MXP_STREAM_BYTES && (uintptr_t)dst % 2 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / 2;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            __m256i r = f16_hw16(_mm512_maskz_loadu_epi32(mask, src), mode, saturate);
            _mm256_mask_storeu_epi16(d, mask, r);
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        __m256i r = f16_hw16(_mm512_loadu_si512((const void *)(src + i)), mode, saturate);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm256_mask_storeu_epi16(d + i, mask, f16_hw16(_mm512_maskz_loadu_epi32(mask, src + i), mode, saturate));
    }
    if (stream)
        _mm_sfence();
}

void mxp_f32_f16_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const float *s = src;
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: f16_hw_loop(dst, s, n, p, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_TOWARD_ZERO: f16_hw_loop(dst, s, n, p, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: f16_hw_loop(dst, s, n, p, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: f16_hw_loop(dst, s, n, p, MXP_ROUND_DOWN); break;
    default: by_mode(dst, src, n, p, (target){ { 16, 10, 15, 1 }, 0, 0 }); break;
    }
}

void mxp_f32_e4m3_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 8, 3, 7, 0 }, 0, 0 });
}

void mxp_f32_e5m2_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 8, 2, 15, 1 }, 0, 0 });
}

void mxp_f32_s8_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 0, 0, 0, 0 }, -128, 127 });
}

void mxp_f32_u8_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    by_mode(dst, src, n, p, (target){ { 0, 0, 0, 0 }, 0, 255 });
}

/* ---- float32 -> int8/uint8 by vcvtps2dq ------------------------------------
 * The deterministic modes by hardware (mxp_f32_to_small_int_hw_avx512), in the
 * library's MXCSR, set here. */
MXP_INLINE void small_int_hw_loop(uint8_t *d, const float *s, size_t n, mxp_rounding mode, int is_unsigned)
{
    size_t i = 0;
    int stream = n * 5 >= MXP_STREAM_BYTES;
    if (stream) {
        size_t head = (16 - (uintptr_t)d % 16) % 16;
        head = head < n ? head : n;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            _mm_mask_storeu_epi8(d, mask, mxp_f32_to_small_int_hw_avx512(_mm512_maskz_loadu_epi32(mask, s), mode, is_unsigned));
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        __m128i r = mxp_f32_to_small_int_hw_avx512(_mm512_loadu_si512((const void *)(s + i)), mode, is_unsigned);
        if (stream)
            _mm_stream_si128((__m128i *)(d + i), r);
        else
            _mm_storeu_si128((__m128i *)(d + i), r);
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm_mask_storeu_epi8(d + i, mask, mxp_f32_to_small_int_hw_avx512(_mm512_maskz_loadu_epi32(mask, s + i), mode, is_unsigned));
    }
    if (stream)
        _mm_sfence();
}

MXP_INLINE void small_int_hw(void *dst, const void *src, size_t n, const mxp_cvt_params *p, int is_unsigned)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: small_int_hw_loop(dst, src, n, MXP_ROUND_NEAREST_EVEN, is_unsigned); break;
    case MXP_ROUND_TOWARD_ZERO: small_int_hw_loop(dst, src, n, MXP_ROUND_TOWARD_ZERO, is_unsigned); break;
    case MXP_ROUND_UP: small_int_hw_loop(dst, src, n, MXP_ROUND_UP, is_unsigned); break;
    case MXP_ROUND_DOWN: small_int_hw_loop(dst, src, n, MXP_ROUND_DOWN, is_unsigned); break;
    default: small_int_hw_loop(dst, src, n, MXP_ROUND_NEAREST_AWAY, is_unsigned); break;
    }
    mxp_fpenv_leave(env);
}

void mxp_f32_s8_vcvt__avx512f_hw(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    small_int_hw(dst, src, n, p, 0);
}

void mxp_f32_u8_vcvt__avx512f_hw(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    small_int_hw(dst, src, n, p, 1);
}

/* ---- float32 -> e5m2 through float16 rounded to odd ------------------------
 * float8_e5m2 is the top byte of a float16 (same exponent field and bias,
 * subnormals included).  vcvtps2ph toward zero, with the last bit set where
 * that was inexact ("round to odd"), keeps 8 more bits than e5m2 and the
 * sticky bit, so rounding that float16 by "add, then shift by 8" in any
 * deterministic mode gives the rounding of the float32.  Beyond float16's
 * range the float16 is max (odd), which overflows e5m2 as the float32 does.
 * NaNs: the float16 NaN's top byte (quiet bit and top payload bit).
 * Runs in the library's MXCSR (no DAZ), set here. */
MXP_INLINE void e5m2_f16_loop(uint8_t *d, const float *s, size_t n, mxp_rounding mode, int saturate)
{
    size_t i = 0;
    int stream = n * 5 >= MXP_STREAM_BYTES;
    if (stream) {
        size_t head = (16 - (uintptr_t)d % 16) % 16;
        head = head < n ? head : n;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            _mm_mask_storeu_epi8(d, mask, mxp_f32_to_e5m2_via_f16_avx512(_mm512_maskz_loadu_epi32(mask, s), mode, saturate));
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        __m128i r = mxp_f32_to_e5m2_via_f16_avx512(_mm512_loadu_si512((const void *)(s + i)), mode, saturate);
        if (stream)
            _mm_stream_si128((__m128i *)(d + i), r);
        else
            _mm_storeu_si128((__m128i *)(d + i), r);
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm_mask_storeu_epi8(d + i, mask, mxp_f32_to_e5m2_via_f16_avx512(_mm512_maskz_loadu_epi32(mask, s + i), mode, saturate));
    }
    if (stream)
        _mm_sfence();
}

void mxp_f32_e5m2_vcvt__avx512f_f16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: e5m2_f16_loop(dst, src, n, MXP_ROUND_NEAREST_EVEN, saturate); break;
    case MXP_ROUND_NEAREST_AWAY: e5m2_f16_loop(dst, src, n, MXP_ROUND_NEAREST_AWAY, saturate); break;
    case MXP_ROUND_TOWARD_ZERO: e5m2_f16_loop(dst, src, n, MXP_ROUND_TOWARD_ZERO, saturate); break;
    case MXP_ROUND_UP: e5m2_f16_loop(dst, src, n, MXP_ROUND_UP, saturate); break;
    default: e5m2_f16_loop(dst, src, n, MXP_ROUND_DOWN, saturate); break;
    }
    mxp_fpenv_leave(env);
}

/* ---- float32 -> e4m3 through float16 rounded to odd ------------------------
 * As for e5m2: vcvtps2ph toward zero with the inexact lanes made odd keeps
 * 7 more bits than e4m3 and the sticky bit, and float16's exponent range
 * holds e4m3's, so the integer "add, then shift" of round-avx512.h on the
 * float16 bits, 32 lanes of 16 bits at a time, rounds once.  The shift is
 * 7 in e4m3's normal range and up to 15 below it (subnormals).  Overflow is
 * a clamp to max or to the NaN pattern after it; inf and NaN give NaN, or
 * max for an infinity under saturation. */
/* Elements [i, i + count), count <= 32. */
MXP_INLINE void e4m3_f16_step(uint8_t *d, const float *s, size_t i, size_t count, mxp_rounding mode, int saturate,
                              int stream)
{
    if (count == 32) {
        __m256i r = mxp_f32_to_e4m3_via_f16_avx512(_mm512_loadu_si512((const void *)(s + i)),
                                    _mm512_loadu_si512((const void *)(s + i + 16)), mode, saturate);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
        return;
    }
    const __mmask32 mask = (__mmask32)((1ull << count) - 1);
    __m256i r = mxp_f32_to_e4m3_via_f16_avx512(_mm512_maskz_loadu_epi32((__mmask16)mask, s + i),
                                _mm512_maskz_loadu_epi32((__mmask16)(mask >> 16), s + i + 16), mode, saturate);
    _mm256_mask_storeu_epi8(d + i, mask, r);
}

MXP_INLINE void e4m3_f16_loop(uint8_t *d, const float *s, size_t n, mxp_rounding mode, int saturate)
{
    size_t i = 0;
    int stream = n * 5 >= MXP_STREAM_BYTES;
    if (stream) {
        size_t head = (32 - (uintptr_t)d % 32) % 32;
        head = head < n ? head : n;
        if (head) {
            e4m3_f16_step(d, s, 0, head, mode, saturate, 0);
            i = head;
        }
    }
    for (; i + 32 <= n; i += 32)
        e4m3_f16_step(d, s, i, 32, mode, saturate, stream);
    if (i < n)
        e4m3_f16_step(d, s, i, n - i, mode, saturate, 0);
    if (stream)
        _mm_sfence();
}

void mxp_f32_e4m3_vcvt__avx512f_f16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_fpenv env = mxp_fpenv_enter();
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: e4m3_f16_loop(dst, src, n, MXP_ROUND_NEAREST_EVEN, saturate); break;
    case MXP_ROUND_NEAREST_AWAY: e4m3_f16_loop(dst, src, n, MXP_ROUND_NEAREST_AWAY, saturate); break;
    case MXP_ROUND_TOWARD_ZERO: e4m3_f16_loop(dst, src, n, MXP_ROUND_TOWARD_ZERO, saturate); break;
    case MXP_ROUND_UP: e4m3_f16_loop(dst, src, n, MXP_ROUND_UP, saturate); break;
    default: e4m3_f16_loop(dst, src, n, MXP_ROUND_DOWN, saturate); break;
    }
    mxp_fpenv_leave(env);
}
