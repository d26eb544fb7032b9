/* float16 -> bfloat16 with AVX2, every mode, in one pass: eight elements
 * at a time widened exactly to float32 in registers (vcvtph2ps: every
 * float16 is a normal float32), then the float32 kernel's bfloat16 core,
 * "add, then shift by 16" on the bits (cvt-round-avx2.h,
 * mxp_f32_to_bf16_avx2; stochastic rounding with the draws of
 * mxp_sr_mix_avx2), 32 elements a step.  No float16 overflows bfloat16.
 * Forward, each step's input read before its result is written: safe in
 * place.  Twin: the reference converter. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f32-avx2.h"
#include "kernels/stream-loop.h"

typedef struct f16_bf16_ctx {
    mxp_rounding mode;
    int saturate;
    mxp_sr_key key;
    __m256i idx; /* lo32(index0 + lane) */
} f16_bf16_ctx;

MXP_INLINE void f16_bf16_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const f16_bf16_ctx *c = ctx;
    const uint16_t *s = (const uint16_t *)src + i;
    __m256i r[4];
    for (int k = 0; k < 4; k++) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(s + 8 * k));
        const __m256i x = _mm256_castps_si256(_mm256_cvtph_ps(h));
        __m256i nrnd = _mm256_setzero_si256();
        if (c->mode == MXP_ROUND_STOCHASTIC)
            nrnd = mxp_sr_mix_not_avx2(_mm256_add_epi32(c->idx, MXP_V8(i + 8 * (size_t)k)), c->key);
        r[k] = mxp_f32_to_bf16_avx2(x, c->mode, c->saturate, nrnd);
    }
    uint16_t *d = (uint16_t *)dst + i;
    mxp_store256_avx2(d, mxp_pack16_avx2(r[0], r[1]), stream);
    mxp_store256_avx2(d + 16, mxp_pack16_avx2(r[2], r[3]), stream);
}

/* count < 32 elements through a zero-padded buffer, the draws of elements i.. */
MXP_INLINE void f16_bf16_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    f16_bf16_ctx c = *(const f16_bf16_ctx *)ctx;
    c.idx = _mm256_add_epi32(c.idx, MXP_V8(i));
    uint16_t in[32] = { 0 }, out[32];
    memcpy(in, (const uint16_t *)src + i, count * sizeof in[0]);
    f16_bf16_full(out, in, 0, 0, &c);
    memcpy((uint16_t *)dst + i, out, count * sizeof out[0]);
}

MXP_INLINE void f16_bf16_loop(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_rounding mode)
{
    const f16_bf16_ctx c = { mode, p->overflow == MXP_OVERFLOW_SATURATE, mxp_sr_key_for(p->seed, p->index0),
                             mxp_sr_index_avx2(p->index0) };
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 2, 2, 32, 32 }, f16_bf16_full, f16_bf16_part, &c);
}

void mxp_f16_bf16_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    switch (p->rounding) { /* integer arithmetic: nothing depends on MXCSR */
    case MXP_ROUND_NEAREST_EVEN: f16_bf16_loop(dst, src, n, p, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: f16_bf16_loop(dst, src, n, p, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: f16_bf16_loop(dst, src, n, p, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: f16_bf16_loop(dst, src, n, p, MXP_ROUND_UP); break;
    case MXP_ROUND_DOWN: f16_bf16_loop(dst, src, n, p, MXP_ROUND_DOWN); break;
    default: f16_bf16_loop(dst, src, n, p, MXP_ROUND_STOCHASTIC); break;
    }
}
