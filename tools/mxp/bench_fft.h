/* mxp bench fft's peer: KISS FFT called directly (bench_fft_peer.c). */
#ifndef MXP_TOOLS_BENCH_FFT_H
#define MXP_TOOLS_BENCH_FFT_H
void *bench_kiss_plan(int n, int real);
void bench_kiss_run(void *plan, int real, const float *in, float *out);
void bench_kiss_free(void *plan);
#endif
