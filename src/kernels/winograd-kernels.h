/* Float32 Winograd F(2x2, 3x3) transforms for 3x3 stride-1 convolutions
 * (src/kernels/f32-winograd/, list f32-winograd-list.inc; the operation
 * is src/nn/conv-winograd.c).  One kernel, three transforms, each over n
 * independent lanes (channels or filters) in the order written below, so
 * that every kernel gives its twin's bits (additions, subtractions and
 * halvings only: no fused multiply-add to differ):
 *
 *   MXP_WINO_W    a 3x3 filter g into U = G g G^T, 16 values:
 *                 per column q (rows p):  a0 = g0, s = g0 + g2,
 *                 a1 = (s + g1) * 0.5, a2 = (s - g1) * 0.5, a3 = g2;
 *                 then per row i of a the same along its columns:
 *                 U[4i + j].  src: tap t = 3p + q of lane l at
 *                 src[t src_ld + l]; U[k] of lane l at dst[k dst_ld + l].
 *   MXP_WINO_IN   a 4x4 input patch d into V = B^T d B:
 *                 per row r:  t0 = d0 - d2, t1 = d1 + d2, t2 = d2 - d1,
 *                 t3 = d1 - d3; then per column the same down the rows:
 *                 V[4i + j].  src: d[r][s] of lane l at
 *                 src[r src_ld + s src_px + l]; V[k] at dst[k dst_ld + l].
 *   MXP_WINO_OUT  a 4x4 product m into the 2x2 outputs y = A^T m A:
 *                 per column j:  s0 = (m0j + m1j) + m2j,
 *                 s1 = (m1j - m2j) - m3j; then per row i of s:
 *                 y[i][0] = (si0 + si1) + si2, y[i][1] = (si1 - si2) - si3.
 *                 src: m[k] of lane l at src[k src_ld + l]; y[i][j] of
 *                 lane l at dst[i dst_ld + j dst_px + l] for i < rows,
 *                 j < cols (an edge tile's outputs inside the image).
 *
 * G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], B^T = [1 0 -1 0; 0 1 1 0;
 * 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1] (Lavin and Gray, "Fast
 * Algorithms for Convolutional Neural Networks", 2015): with
 * M[k] = sum_c V[k] U[k] over the channels, y is the 2x2 block of the
 * cross-correlation of the 4x4 patch with the filters. */
#ifndef MXP_KERNELS_WINOGRAD_KERNELS_H
#define MXP_KERNELS_WINOGRAD_KERNELS_H

#include <stddef.h>

enum { MXP_WINO_W, MXP_WINO_IN, MXP_WINO_OUT };

typedef struct mxp_f32_wino_params {
    int kind;           /* MXP_WINO_W, _IN or _OUT */
    const float *src;
    size_t src_ld, src_px; /* floats (src_px: _IN's pixels) */
    float *dst;
    size_t dst_ld, dst_px; /* floats (dst_px: _OUT's pixels) */
    size_t n;           /* lanes */
    int rows, cols;     /* _OUT: the outputs written, 1 or 2 each */
} mxp_f32_wino_params;

typedef void mxp_f32_wino_ukernel(const mxp_f32_wino_params *p);

#define MXP_F32_WINO(isa, tile, fn, twin) mxp_f32_wino_ukernel fn;
#include "kernels/f32-winograd-list.inc"
#undef MXP_F32_WINO

#endif
