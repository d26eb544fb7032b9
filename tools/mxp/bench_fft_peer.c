/* The peer of mxp bench fft: KISS FFT itself (third_party/kissfft, the
 * library mxp_fft calls), compiled here for float32 under names of the
 * benchmark's own, called directly on contiguous interleaved rows. */
#define kiss_fft_scalar float
#define kf_work bench_kiss_kf_work
#define kf_factor bench_kiss_kf_factor
#define kiss_fft_alloc bench_kiss_fft_alloc
#define kiss_fft_stride bench_kiss_fft_stride
#define kiss_fft bench_kiss_fft
#define kiss_fft_cleanup bench_kiss_fft_cleanup
#define kiss_fft_next_fast_size bench_kiss_fft_next_fast_size
#define kiss_fftr_alloc bench_kiss_fftr_alloc
#define kiss_fftr bench_kiss_fftr
#define kiss_fftri bench_kiss_fftri
#include "kiss_fft.c"
#include "kiss_fftr.c"

#include "bench_fft.h"

void *bench_kiss_plan(int n, int real)
{
    return real ? (void *)kiss_fftr_alloc(n, 0, NULL, NULL) : (void *)kiss_fft_alloc(n, 0, NULL, NULL);
}

void bench_kiss_run(void *plan, int real, const float *in, float *out)
{
    if (real)
        kiss_fftr((kiss_fftr_cfg)plan, in, (kiss_fft_cpx *)out);
    else
        kiss_fft((kiss_fft_cfg)plan, (const kiss_fft_cpx *)in, (kiss_fft_cpx *)out);
}

void bench_kiss_free(void *plan) { KISS_FFT_FREE(plan); }
