/* KISS FFT for float64 (kissfft-body.h). */
#define kiss_fft_scalar double
#define KISS_T double
#define KISS_NAME(x) x##_f64
#include "nn/kissfft-body.h"
