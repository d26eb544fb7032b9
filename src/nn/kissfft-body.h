/* Internal: the body of kissfft-f32.c and kissfft-f64.c.  The including
 * file defines kiss_fft_scalar, KISS_T (its C type) and KISS_NAME(x) (x
 * with the precision's suffix); this file renames KISS FFT's external
 * symbols so that the two builds link side by side (none is exported:
 * cmake/mxp.map keeps only mxp_*, and these are mxp_kiss*), then compiles
 * the library's own sources unchanged. */
#define kf_work KISS_NAME(mxp_kiss_kf_work)
#define kf_factor KISS_NAME(mxp_kiss_kf_factor)
#define kiss_fft_alloc KISS_NAME(mxp_kiss_fft_alloc)
#define kiss_fft_stride KISS_NAME(mxp_kiss_fft_stride)
#define kiss_fft KISS_NAME(mxp_kiss_fft)
#define kiss_fft_cleanup KISS_NAME(mxp_kiss_fft_cleanup)
#define kiss_fft_next_fast_size KISS_NAME(mxp_kiss_fft_next_fast_size)
#define kiss_fftr_alloc KISS_NAME(mxp_kiss_fftr_alloc)
#define kiss_fftr KISS_NAME(mxp_kiss_fftr)
#define kiss_fftri KISS_NAME(mxp_kiss_fftri)

#include "kiss_fft.c"
#include "kiss_fftr.c"

#include "nn/kissfft.h"

void *KISS_NAME(mxp_kissfft_plan)(int n, int inverse) { return kiss_fft_alloc(n, inverse, NULL, NULL); }

void KISS_NAME(mxp_kissfft)(void *plan, const KISS_T *in, KISS_T *out)
{
    kiss_fft((kiss_fft_cfg)plan, (const kiss_fft_cpx *)in, (kiss_fft_cpx *)out);
}

void *KISS_NAME(mxp_kissfftr_plan)(int n, int inverse) { return kiss_fftr_alloc(n, inverse, NULL, NULL); }

void KISS_NAME(mxp_kissfftr)(void *plan, const KISS_T *in, KISS_T *out)
{
    kiss_fftr((kiss_fftr_cfg)plan, in, (kiss_fft_cpx *)out);
}

void KISS_NAME(mxp_kissfftri)(void *plan, const KISS_T *in, KISS_T *out)
{
    kiss_fftri((kiss_fftr_cfg)plan, (const kiss_fft_cpx *)in, out);
}
