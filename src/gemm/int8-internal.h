/* Internal: integer GEMM below mxp_gemm_int8 (src/gemm/int8.c): packing
 * (src/gemm/int8-pack.c) and the finish of the int32 sums into C
 * (src/gemm/int8-finish.c); the configurations are in the one table of
 * src/gemm/config.c (acc MXP_S32), the loops in src/gemm/driver.c.
 *
 * The kernels multiply raw values, unsigned A~ by signed B~ (vpdpbusd's
 * operand types; the AVX2 kernel has them widened to int16).  int8 A is
 * packed as A + 128 (the byte with its top bit flipped) and its zero point
 * becomes za + 128, so with A' the packed A:
 *
 *   acc[i][j] = sum_k (A'[i][k] - za') (B[k][j] - zb)
 *             = sum_k A' B  -  zb * rowsum(A')[i]  -  za' * colsum(B)[j]  +  K za' zb
 *
 * The last three terms are row_off[i] + col_off[j], added by the kernel on
 * the first K block.  Everything runs modulo 2^32, so the result is exact
 * whenever the true acc fits int32, which mxp_gemm_int8 guarantees by
 * refusing K beyond its limit. */
#ifndef MXP_GEMM_INT8_INTERNAL_H
#define MXP_GEMM_INT8_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm/gemm-internal.h"

/* Bytes of a packed panel (or panels) `width` rows or columns wide holding
 * kc values of k, padded to whole K-groups. */
static inline size_t mxp_int8_panel_bytes(const mxp_gemm_config *cfg, size_t width, size_t kc)
{
    const size_t kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    return width * kcp * mxp_dtype_itemsize(cfg->packed);
}

/* op(A)[i0 .. i0+mc, p0 .. p0+kc] as MR-row panels, op(B)[p0 .. p0+kc,
 * j0 .. j0+nc] as NR-column panels, in the configuration's layout.  B
 * with check (K-quads only): returns true, B~ left unfinished, at the
 * first K-pair with |b0| + |b1| > 128 (which the vpmaddubsw kernel cannot
 * take); false otherwise. */
void mxp_int8_pack_a(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                     size_t kc, void *dst);
bool mxp_int8_pack_b(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                     size_t nc, void *dst, bool check);

/* A scale as m * p exactly: m an odd integer (|m| < 2^24, 0 for a zero
 * scale), p > 0 a power of two, 2^-shift when 1 <= shift <= 62 (shift 0
 * otherwise); s the scale itself. */
typedef struct mxp_int8_scale {
    int64_t m;
    double p;
    int shift;
    float s;
} mxp_int8_scale;

/* How finished blocks of sums go into C: int32 C as it is (beta 1: a
 * saturating add), or in float64 scale * acc, alpha, beta * C and the
 * epilogue, rounded once into a floating C, or into int8/uint8 C with its
 * zero point (requantization), by a kernel where one serves. */
typedef struct mxp_int8_finish {
    const mxp_gemm_opts *o;
    mxp_gemm_epilogue epi;
    mxp_dtype ct;
    unsigned char *c;
    size_t ldc, cs, n;
    double alpha, beta;
    bool plain;                       /* alpha 1, beta 0, no epilogue: t = scale * acc */
    bool shifts;                      /* plain int8 C, every scale with a shift, a deterministic mode, no counters */
    bool epilogue;
    const mxp_int8_scale *scale;      /* scale[j], or scale[0] for every column */
    bool per_col;
    int32_t zp, lo, hi;               /* int8/uint8 C */
    const int32_t *qm, *qs;           /* shifts: the scales' m and shift, n entries (per_col) or 1 */
    mxp_s32_requant_fn requant;
    mxp_s32_dequant_f32_fn dequant;   /* plain float32 C in a mode a kernel rounds in (NULL: none) */
    mxp_s32_dequant_bias_f32_fn dequant_bias; /* float32 C with a finite float32 bias per column and/or
                                                 beta C, nothing else (NULL: not so) */
    const float *bias_f32;            /* that bias, or NULL */
    float one_scale;                  /* 1.0 when no scales are given */
    /* owned workspaces (mxp_int8_finish_release) */
    mxp_int8_scale one, *cols;
    int32_t one_m, one_s, *qms;
    /* int8/uint8 C, nearest even, no beta, an epilogue of bias, relu and
     * clamp at most, no counters: the float64 requantization kernel
     * (src/kernels/s32-requant/), its parameters with the scales' m and p
     * (and a per-column bias) widened: rq_m, rq_p, rq_bias (owned) */
    mxp_s32_requant_f64_fn rq64;
    mxp_s32_requant_f64_params rq;
    double *rq_m, *rq_p, *rq_bias;
    /* A quantized per row (o->a_zero_points, o->a_scales): each chunk's
     * sums less a_zero_points[i] b_sums[j] (b_sums: the column sums of B -
     * b_zero_point, set by the caller; NULL: the sums are 0, nothing to
     * take), its scales float32(a_scales[i] s_j); the kernels of the plain
     * float32 paths take those, the others the general path */
    bool per_row;
    const int32_t *b_sums;
} mxp_int8_finish;

/* x modulo 2^32 as an int32 (the wrap-around of two's complement). */
static inline int32_t mxp_wrap_s32(uint32_t x)
{
    return x <= INT32_MAX ? (int32_t)x : -(int32_t)~x - 1;
}

/* Sets up f for C (c_type, ldc, n columns); MXP_ERR_NO_MEMORY (nothing to
 * release) when a workspace for per-column scales is not there. */
mxp_status mxp_int8_finish_init(mxp_int8_finish *f, const mxp_gemm_opts *o, mxp_dtype c_type, void *c, size_t ldc,
                                size_t n, double alpha, double beta);
void mxp_int8_finish_release(mxp_int8_finish *f);
/* Every sum is at most acc_max in magnitude (K dA dB): where that times
 * the largest scale integer m stays below 2^53, the float64
 * requantization kernel is told its products are exact (rq.exact). */
void mxp_int8_finish_bound(mxp_int8_finish *f, double acc_max);

/* mxp_gemm_finish_fn: sums (rows ldw apart) of rows i0 .. i0+mc, columns
 * j0 .. j0+nc, into C. */
void mxp_int8_finish_block(void *ctx, size_t i0, size_t mc, size_t j0, size_t nc, const void *w, size_t ldw);

#endif
