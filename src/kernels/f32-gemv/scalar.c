/* The twin of the float32 GEMV kernels: each y[j] one chain of fused
 * multiply-adds in k order (the vector kernels' chain when B is not
 * transposed), B widened exactly (float8 from its own decoding of the
 * fields, not the kernels' float16 route). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemv-kernels.h"

#if MXP_HAVE_X86_KERNELS
/* float16 bits as float32, exactly (subnormals too). */
static float f16_value(uint16_t h)
{
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const float mag = e == 0x1f ? (m ? NAN : INFINITY) : e ? ldexpf((float)(m | 0x400), e - 25) : ldexpf((float)m, -24);
    return h & 0x8000 ? -mag : mag;
}

/* float8_e4m3fn bits as float32 times 2^-8 (MXP_GEMV_E4M3): bias 7,
 * subnormals 2^-9 apart; S.1111.111 the default quiet NaN of either sign. */
static float e4m3_value(uint8_t b)
{
    const int e = (b >> 3) & 0xf, m = b & 7;
    if (e == 0xf && m == 7)
        return NAN;
    const float mag = e ? ldexpf((float)(m | 8), e - 18) : ldexpf((float)m, -17);
    return b & 0x80 ? -mag : mag;
}

static float load(const void *row, size_t p, int kind)
{
    uint16_t h;
    float f;
    switch (kind) {
    case MXP_GEMV_E4M3: return e4m3_value(((const uint8_t *)row)[p]);
    case MXP_GEMV_E5M2: return f16_value((uint16_t)(((const uint8_t *)row)[p] << 8));
    case MXP_GEMV_BF16: {
        memcpy(&h, (const uint16_t *)row + p, 2);
        const uint32_t u = (uint32_t)h << 16;
        memcpy(&f, &u, 4);
        return f;
    }
    case MXP_GEMV_F16:
        memcpy(&h, (const uint16_t *)row + p, 2);
        return f16_value(h);
    default:
        memcpy(&f, (const float *)row + p, 4);
        return f;
    }
}

void mxp_f32_gemv__scalar(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b, size_t ld_bytes,
                          float *y)
{
    const unsigned char *base = b;
    for (size_t j = 0; j < n; j++) {
        float s = 0;
        for (size_t p = 0; p < k; p++)
            s = fmaf(x[p], trans_b ? load(base + j * ld_bytes, p, kind) : load(base + p * ld_bytes, j, kind), s);
        y[j] = s;
    }
}
#endif
