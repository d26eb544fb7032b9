/* float32 -> the 8-bit float formats by the bfloat16 byte-lane tables
 * after rounding to odd into bfloat16, with AVX512_VBMI
 * (x16-lut-kernels.h; the loop in src/kernels/x16-lut/lut-loop.h).  Twin:
 * mxp_x32_lut_x8_ref (src/convert/convert-ref.c). */
#include "kernels/x16-lut/lut-loop.h"

/* t built for bfloat16 (float targets only), rest a float32 kernel. */
void mxp_x32_lut_x8__avx512vbmi(void *dst, const void *src, size_t n, const mxp_x16_lut_tables *t)
{
    lut_ctx c;
    lut_marks marks;
    if (!lut_begin(&c, &marks, dst, src, n, 4, t))
        return;
    const mxp_stream_shape sh = { 4, 1, 64, 64 };
    if (t->fnuz)
        LUT_LOOP(f32_fnuz);
    else if (t->wide)
        LUT_LOOP(f32_wide);
    else if (t->sign_bit != 0x80)
        LUT_LOOP(f32_n);
    else
        LUT_LOOP(f32);
    lut_end(dst, src, n, &c, t, 1);
}
