/* The twins of the vdpbf16ps kernels (avx512bf16.c), element by element as
 * the instruction computes each lane: per k-pair, the odd product then the
 * even one added by fused multiply-adds rounding to nearest even, bfloat16
 * subnormal inputs read as zero and float32 subnormal results flushed to
 * zero (its DAZ and FTZ, whatever the MXCSR says); then alpha * sum and
 * beta * C in one fused multiply-add, as the float32 kernels. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

#if MXP_HAVE_X86_KERNELS
static float bf16_daz(uint16_t v)
{
    const uint32_t u = (v & 0x7f80u) == 0 ? (uint32_t)(v & 0x8000u) << 16 : (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float ftz(float x)
{
    return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x;
}

/* Element (i, p) of A at a[i * a_row + p / 2 * a_pair + p % 2]; (p, j) of B
 * at b[p / 2 * b_pair + j * b_col + p % 2 * b_odd].  An odd kc's last pair
 * has a zero second value. */
static void dot_tile(size_t mr, size_t nr, size_t kc, const uint16_t *a, size_t a_row, size_t a_pair,
                     const uint16_t *b, size_t b_pair, size_t b_col, size_t b_odd, float *c, size_t ldc,
                     double alpha, double beta)
{
    const float fa = (float)alpha, fb = (float)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            float s = 0;
            for (size_t p = 0; p < kc; p += 2) {
                const uint16_t *ap = a + i * a_row + p / 2 * a_pair, *bp = b + p / 2 * b_pair + j * b_col;
                const bool odd = p + 1 < kc;
                s = ftz(fmaf(odd ? bf16_daz(ap[1]) : 0.0f, odd ? bf16_daz(bp[b_odd]) : 0.0f, s));
                s = ftz(fmaf(bf16_daz(ap[0]), bf16_daz(bp[0]), s));
            }
            const float x = fa * s;
            c[i * ldc + j] = beta != 0 ? fmaf(fb, c[i * ldc + j], x) : x;
        }
}

void mxp_bf16_gemm_ukernel_6x32__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                        size_t ldc, double alpha, double beta)
{
    dot_tile(mr, nr, kc, a, 2, 12, b, 64, 2, 1, c, ldc, alpha, beta);
}

void mxp_bf16_gemm_ukernel_6x32_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t lda,
                                          const void *b, void *c, size_t ldc, double alpha, double beta)
{
    dot_tile(mr, nr, kc, a, lda, 2, b, 64, 2, 1, c, ldc, alpha, beta);
}

/* The taps kernels' twins: row i's k = s * seglen + p at rows[i] + off[s]
 * + p, B~ [k/2][32][2], the chain through every segment `step` values of
 * k at a time by dot (a pair, or an AMX chunk of 32). */
static void taps_tile(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows, const ptrdiff_t *off,
                      const uint16_t *b, float *c, size_t ldc, double alpha, double beta, size_t step,
                      float (*dot)(float s, const uint16_t *ap, const uint16_t *bp))
{
    const float fa = (float)alpha, fb = (float)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            float s = 0;
            for (size_t sg = 0; sg < nseg; sg++)
                for (size_t p = 0; p < seglen; p += step)
                    s = dot(s, (const uint16_t *)rows[i] + off[sg] + p, b + (sg * seglen + p) / 2 * 64 + 2 * j);
            const float x = fa * s;
            c[i * ldc + j] = beta != 0 ? fmaf(fb, c[i * ldc + j], x) : x;
        }
}

/* s + one pair as vdpbf16ps adds it: the odd product, then the even one. */
static float pair_dot(float s, const uint16_t *ap, const uint16_t *bp)
{
    s = ftz(fmaf(bf16_daz(ap[1]), bf16_daz(bp[1]), s));
    return ftz(fmaf(bf16_daz(ap[0]), bf16_daz(bp[0]), s));
}

/* The vdpbf16ps taps kernel's (seglen even). */
void mxp_bf16_gemm_ukernel_6x32_taps__scalar(size_t mr, size_t nr, size_t nseg, size_t seglen,
                                             const void *const *rows, const ptrdiff_t *off, const void *b, void *c,
                                             size_t ldc, double alpha, double beta)
{
    taps_tile(mr, nr, nseg, seglen, rows, off, b, c, ldc, alpha, beta, 2, pair_dot);
}

/* The AMX kernels' (amx.c): A's element (i, p) at a[i * a_row + p / 32 *
 * a_step + p % 32] (A~ [k/32][32][32]: 32 and 1024; in place: lda and 32),
 * B~ [k/2][32][2], kc a multiple of 32; per 32 values of k, the even-k and
 * odd-k products in two chains from +0, then sum + (even + odd), as
 * tdpbf16ps computes them. */
/* s + one chunk of 32 values of k: A's at ap, B~'s column pair rows at bp. */
static float chunk_amx(float s, const uint16_t *ap, const uint16_t *bp)
{
    float even = 0, odd = 0;
    for (size_t q = 0; q < 16; q++) {
        even = ftz(fmaf(bf16_daz(ap[2 * q]), bf16_daz(bp[q * 64]), even));
        odd = ftz(fmaf(bf16_daz(ap[2 * q + 1]), bf16_daz(bp[q * 64 + 1]), odd));
    }
    return ftz(s + ftz(even + odd));
}

static void tile_amx(size_t mr, size_t nr, size_t kc, const uint16_t *a, size_t a_row, size_t a_step,
                     const uint16_t *b, float *c, size_t ldc, double alpha, double beta)
{
    const float fa = (float)alpha, fb = (float)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            float s = 0;
            for (size_t p0 = 0; p0 < kc; p0 += 32)
                s = chunk_amx(s, a + i * a_row + p0 / 32 * a_step, b + p0 / 2 * 64 + 2 * j);
            const float x = fa * s;
            c[i * ldc + j] = beta != 0 ? fmaf(fb, c[i * ldc + j], x) : x;
        }
}

/* The AMX taps kernel's (seglen a multiple of 32). */
void mxp_bf16_gemm_ukernel_32x32_taps__scalar(size_t mr, size_t nr, size_t nseg, size_t seglen,
                                              const void *const *rows, const ptrdiff_t *off, const void *b, void *c,
                                              size_t ldc, double alpha, double beta)
{
    taps_tile(mr, nr, nseg, seglen, rows, off, b, c, ldc, alpha, beta, 32, chunk_amx);
}

void mxp_bf16_gemm_ukernel_32x32__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                         size_t ldc, double alpha, double beta)
{
    tile_amx(mr, nr, kc, a, 32, 32 * 32, b, c, ldc, alpha, beta);
}

void mxp_bf16_gemm_ukernel_32x32_a__scalar(size_t mr, size_t nr, size_t kc, const void *a, size_t lda,
                                           const void *b, void *c, size_t ldc, double alpha, double beta)
{
    tile_amx(mr, nr, kc, a, lda, 32, b, c, ldc, alpha, beta);
}

void mxp_bf16_gemm_direct_8x32__scalar(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                       void *c, size_t ldc, double alpha, double beta)
{
    dot_tile(mr, nr, kc, a, 2, 16, b, 2 * ldb, 1, ldb, c, ldc, alpha, beta);
}
#endif
