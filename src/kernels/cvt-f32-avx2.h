/* float32 -> bf16, f16, e4m3, e5m2, s8, u8 with AVX2 in every rounding mode,
 * by the integer methods of cvt-round-avx2.h (float8 and float16 in the
 * deterministic modes: its float-unit step), 32 elements a step: the loop
 * shared by the src/kernels/f32-<dst>-vcvt/avx2.c kernels.  Tails (and the
 * head before an aligned streaming store) go through a small zero-padded
 * buffer.  Forward, reading a step's input before writing its results:
 * in-place narrowing (dst == src) works. */
#ifndef MXP_KERNELS_CVT_F32_AVX2_H
#define MXP_KERNELS_CVT_F32_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "core/fpenv.h"
#include "kernels/cvt-round-avx2.h"

/* ---- every mode by integer arithmetic ------------------------------------
 * fmt.bits == 0 selects an integer target with range [lo, hi]. */
typedef struct mxp_f32_target2 {
    mxp_narrow_fmt2 fmt;
    int lo, hi;
    int fp; /* deterministic modes by mxp_f32_to_narrow_fp_avx2 */
} mxp_f32_target2;

MXP_INLINE size_t mxp_f32_out_size_avx2(mxp_f32_target2 t)
{
    return t.fmt.bits == 16 ? 2 : 1;
}

/* 8 lanes; r: the random bits (stochastic rounding) */
MXP_INLINE __m256i mxp_f32_convert8_avx2(__m256i x, mxp_f32_target2 t, mxp_rounding mode, int saturate, __m256i r)
{
    if (t.fmt.bits == 16 && t.fmt.mbits == 7)
        return mxp_f32_to_bf16_avx2(x, mode, saturate, mxp_not_avx2(r));
    if (t.fmt.bits && t.fp && mode != MXP_ROUND_STOCHASTIC)
        return mxp_f32_to_narrow_fp_avx2(x, t.fmt, mode, saturate, 1);
    if (t.fmt.bits)
        return mxp_f32_to_narrow_avx2(x, t.fmt, mode, saturate, r);
    if (mode != MXP_ROUND_STOCHASTIC) /* int32, for the saturating packs */
        return mxp_f32_to_int_sat_avx2(x, mode, 1);
    return _mm256_and_si256(mxp_f32_to_small_int_avx2(x, t.lo, t.hi, mode, r), MXP_V8(0xff));
}

/* 32 elements from s to d; idx: lo32 of element 0's index in every lane's
 * place (lanes 0..7). */
MXP_INLINE void mxp_f32_step32_avx2(void *d, const float *s, mxp_f32_target2 t, mxp_rounding mode, int saturate,
                                    __m256i idx, mxp_sr_key key, int stream)
{
    __m256i x[4], r[4], z = _mm256_setzero_si256();
    for (int k = 0; k < 4; k++)
        x[k] = _mm256_loadu_si256((const __m256i *)(s + 8 * k));
    for (int k = 0; k < 4; k++) {
        __m256i rk = z;
        if (mode == MXP_ROUND_STOCHASTIC)
            rk = mxp_sr_mix_avx2(_mm256_add_epi32(idx, MXP_V8(8 * k)), key);
        r[k] = mxp_f32_convert8_avx2(x[k], t, mode, saturate, rk);
    }
    if (mxp_f32_out_size_avx2(t) == 2) {
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
MXP_INLINE void mxp_f32_part32_avx2(void *d, const float *s, size_t count, mxp_f32_target2 t, mxp_rounding mode,
                                    int saturate, __m256i idx, mxp_sr_key key)
{
    float in[32] = { 0 };
    uint16_t out[32];
    memcpy(in, s, count * 4);
    mxp_f32_step32_avx2(out, in, t, mode, saturate, idx, key, 0);
    memcpy(d, out, count * mxp_f32_out_size_avx2(t));
}

MXP_INLINE void mxp_f32_loop_avx2(void *dst, const float *src, size_t n, const mxp_cvt_params *p, mxp_f32_target2 t,
                                  mxp_rounding mode)
{
    const size_t os = mxp_f32_out_size_avx2(t);
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
            mxp_f32_part32_avx2(d, src, head, t, mode, saturate, idx, key);
            i = head;
        }
    }
    /* A software prefetch 1 KiB ahead: measured on the Xeon (family 6
     * model 0xa7) to take the compute-heavier modes closer to memcpy. */
    for (; i + 32 <= n; i += 32) {
        _mm_prefetch((const char *)(src + i + 256), _MM_HINT_T0);
        _mm_prefetch((const char *)(src + i + 256 + 16), _MM_HINT_T0);
        mxp_f32_step32_avx2(d + i * os, src + i, t, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key, stream);
    }
    if (i < n)
        mxp_f32_part32_avx2(d + i * os, src + i, n - i, t, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key);
    if (stream)
        _mm_sfence();
}

/* One instantiation of the loop per rounding mode, so the mode is a constant. */
MXP_INLINE void mxp_f32_by_mode_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_f32_target2 t)
{
    const float *s = (const float *)src;
    const mxp_fpenv env = mxp_fpenv_enter();
    /* MXCSR's rounding: the mode's (nearest away: toward zero), for the
     * float-unit step; nothing else here depends on it */
    const unsigned csr = _mm_getcsr();
    const mxp_rounding m = p->rounding;
    const unsigned rc = m == MXP_ROUND_TOWARD_ZERO || m == MXP_ROUND_NEAREST_AWAY ? 0x6000
                        : m == MXP_ROUND_UP                                     ? 0x4000
                        : m == MXP_ROUND_DOWN                                   ? 0x2000
                                                                                : 0;
    _mm_setcsr((csr & ~0x6000u) | rc);
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_DOWN); break;
    default: mxp_f32_loop_avx2(dst, s, n, p, t, MXP_ROUND_STOCHASTIC); break;
    }
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}

#endif
