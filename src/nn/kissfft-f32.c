/* KISS FFT for float32 (kissfft-body.h). */
#define kiss_fft_scalar float
#define KISS_T float
#define KISS_NAME(x) x##_f32
#include "nn/kissfft-body.h"

void mxp_kissfft_free(void *plan) { KISS_FFT_FREE(plan); }
