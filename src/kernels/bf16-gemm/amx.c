/* bfloat16 GEMM micro-kernel, 32 x 32, AMX: four float32 C tiles of 16 x
 * 16, two A tiles (16 rows x 32 k) and two B tiles (16 k-pairs x 16
 * columns) per 32 values of k, each `tdpbf16ps` 16 x 16 x 32.
 *
 * Panels: A~ [k/32][32][32] (each row's 32 values of k contiguous, as a
 * tile row wants them), B~ [k/2][32][2] (the vdpbf16ps kernel's layout: a
 * B tile is 16 of its pair rows, 128 bytes apart), kc a multiple of 32.
 *
 * The instruction's arithmetic, per element and per 32 values of k
 * (measured on an Intel Xeon 6/0xa7 against this model: 0 mismatches in
 * 10^7 elements over every exponent range; the SDM's pseudo-code has the
 * two chains too): the even-k products and the odd-k products in two
 * chains of fused multiply-adds from +0, then C + (even + odd), every step
 * rounding to nearest even, bfloat16 subnormal inputs read as zero and
 * float32 subnormal results flushed.  The twin (scalar.c) computes exactly
 * that; alpha and beta come after, as in every float kernel. */
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/amx-tiles.h"
#include "kernels/gemm-kernels.h"

void mxp_bf16_gemm_release__amx(void)
{
    mxp_amx_tiles_release();
}

/* Tiles 0-3 = A times B~, A's rows a_row elements apart, 32 values of
 * k a_step elements apart (A~: 32 and 32 x 32; in place: lda and 32). */
static inline __attribute__((always_inline)) void multiply(size_t mr, size_t kc, const uint16_t *pa, size_t a_row,
                                                           size_t a_step, bool in_place, const uint16_t *pb)
{
    mxp_amx_tiles_configure();
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    mxp_amx_2x2(MXP_AMX_BF16, mr, kc / 32, (const uint8_t *)pa, a_row * 2, a_step * 2, in_place,
                (const uint8_t *)pb);
}

/* C (mr x nr, rows ldc apart) = alpha * the four tiles + beta * C. */
static inline __attribute__((always_inline)) void store(size_t mr, size_t nr, float *pc, size_t ldc, double alpha,
                                                        double beta)
{
    if (alpha == 1 && beta == 0 && mr == 32 && nr == 32) { /* the sums are the result: stored in place */
        mxp_amx_store_sums(pc, ldc * 4);
        return;
    }
    float sum[32][32] __attribute__((aligned(64)));
    mxp_amx_store_sums(sum, 128);
    mxp_amx_tile_memory_barrier();
    const __m512 va = _mm512_set1_ps((float)alpha), vb = _mm512_set1_ps((float)beta);
    for (size_t i = 0; i < mr; i++, pc += ldc)
        for (size_t j = 0; j < nr; j += 16) {
            const __mmask16 m = nr - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nr - j)) - 1);
            __m512 x = _mm512_mul_ps(va, _mm512_load_ps(&sum[i][j]));
            if (beta != 0)
                x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, pc + j), x);
            _mm512_mask_storeu_ps(pc + j, m, x);
        }
}

void mxp_bf16_gemm_ukernel_32x32__amx(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    multiply(mr, kc, a, 32, 32 * 32, false, b);
    store(mr, nr, c, ldc, alpha, beta);
}

/* One half of a taps tile (rows 16 h .. 16 h + 15): its rows' pointers
 * equally spaced (one tile load from the first, `stride` bytes apart), or
 * not (a chunk at a time through an edge buffer, zero past mr). */
typedef struct taps_half {
    const uint8_t *base;
    size_t stride;
    size_t rows; /* rows of the tile below mr; 0: none */
    bool copy;
} taps_half;

static taps_half taps_half_of(const void *const *rows, size_t mr, size_t h)
{
    taps_half t = { NULL, 64, mr > 16 * h ? (mr - 16 * h < 16 ? mr - 16 * h : 16) : 0, true };
    if (!t.rows)
        return t;
    const uint8_t *const *r = (const uint8_t *const *)rows + 16 * h;
    t.base = r[0];
    if (t.rows < 16)
        return t;
    const ptrdiff_t d = r[1] - r[0];
    for (size_t i = 2; i < 16; i++)
        if (r[i] - r[0] != (ptrdiff_t)i * d)
            return t;
    if (d <= 0)
        return t;
    t.stride = (size_t)d;
    t.copy = false;
    return t;
}

/* A's rows through pointers, k in nseg segments of seglen (a multiple of
 * 32) at rows[i] + off[s] (a convolution's taps: src/nn/conv-taps.c): the
 * tile k loop above with each half's rows loaded where they lie when they
 * are equally spaced (a run of pixels in one image row), else copied a
 * chunk at a time.  The same chunks in the same order as the A-in-place
 * kernel on the rows gathered: the same bits. */
void mxp_bf16_gemm_ukernel_32x32_taps__amx(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows,
                                           const ptrdiff_t *off, const void *b, void *c, size_t ldc, double alpha,
                                           double beta)
{
    uint8_t edge[32][64] __attribute__((aligned(64)));
    const taps_half h0 = taps_half_of(rows, mr, 0), h1 = taps_half_of(rows, mr, 1);
    if (h0.copy)
        memset(edge[h0.rows], 0, (16 - h0.rows) * 64);
    if (h1.copy)
        memset(edge[16 + h1.rows], 0, (16 - h1.rows) * 64);
    const uint8_t *const *r = (const uint8_t *const *)rows;
    const uint8_t *pb = b;
    mxp_amx_tiles_configure();
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (size_t sg = 0; sg < nseg; sg++) {
        const ptrdiff_t o = off[sg] * 2;
        for (size_t q = 0; q < seglen / 32; q++, pb += 16 * 128) {
            const ptrdiff_t at = o + (ptrdiff_t)q * 64;
            const uint8_t *t0 = h0.base + at, *t1 = h1.rows ? h1.base + at : &edge[16][0];
            if (h0.copy || (h1.copy && h1.rows)) {
                for (size_t i = 0; h0.copy && i < h0.rows; i++)
                    memcpy(edge[i], r[i] + at, 64);
                for (size_t i = 0; h1.copy && i < h1.rows; i++)
                    memcpy(edge[16 + i], r[16 + i] + at, 64);
                mxp_amx_tile_memory_barrier();
            }
            if (h0.copy)
                t0 = &edge[0][0];
            if (h1.copy)
                t1 = &edge[16][0];
            _tile_loadd(4, t0, h0.copy ? 64 : h0.stride);
            _tile_loadd(6, pb, 128);
            _tile_dpbf16ps(0, 4, 6);
            _tile_loadd(7, pb + 64, 128);
            _tile_dpbf16ps(1, 4, 7);
            _tile_loadd(5, t1, h1.copy ? 64 : h1.stride);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    store(mr, nr, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous, kc a multiple of 32. */
void mxp_bf16_gemm_ukernel_32x32_a__amx(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                        void *c, size_t ldc, double alpha, double beta)
{
    multiply(mr, kc, a, lda, 32, true, b);
    store(mr, nr, c, ldc, alpha, beta);
}
