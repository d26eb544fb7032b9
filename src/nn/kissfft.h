/* Internal: KISS FFT (third_party/kissfft, BSD-3-Clause), compiled twice
 * under names of mxp's own: for float32 (kissfft-f32.c) and float64
 * (kissfft-f64.c).  Complex data are interleaved (re, im) pairs of the
 * precision.  A plan is used by one thread at a time (the real plans keep
 * a scratch buffer of their own). */
#ifndef MXP_NN_KISSFFT_H
#define MXP_NN_KISSFFT_H

/* c2c of n points (inverse: the unscaled inverse); NULL when out of memory. */
void *mxp_kissfft_plan_f32(int n, int inverse);
void *mxp_kissfft_plan_f64(int n, int inverse);
void mxp_kissfft_f32(void *plan, const float *in, float *out);
void mxp_kissfft_f64(void *plan, const double *in, double *out);
/* Real transforms of an even n: r2c gives n/2 + 1 complex values, c2r
 * takes them (inverse plans) and gives n reals (unscaled). */
void *mxp_kissfftr_plan_f32(int n, int inverse);
void *mxp_kissfftr_plan_f64(int n, int inverse);
void mxp_kissfftr_f32(void *plan, const float *in, float *out);
void mxp_kissfftr_f64(void *plan, const double *in, double *out);
void mxp_kissfftri_f32(void *plan, const float *in, float *out);
void mxp_kissfftri_f64(void *plan, const double *in, double *out);
void mxp_kissfft_free(void *plan);

#endif
