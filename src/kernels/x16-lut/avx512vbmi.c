/* bfloat16/float16 -> the 8-bit float formats and int4/uint4/int2/uint2
 * by byte-lane tables with AVX512_VBMI (x16-lut-kernels.h; the loop in
 * lut-loop.h).  Twin: mxp_x16_lut_x8_ref (src/convert/convert-ref.c). */
#include "kernels/x16-lut/lut-loop.h"

void mxp_x16_lut_x8__avx512vbmi(void *dst, const void *src, size_t n, const mxp_x16_lut_tables *t)
{
    lut_ctx c;
    lut_marks marks;
    if (!lut_begin(&c, &marks, dst, src, n, 2, t))
        return;
    const mxp_stream_shape sh = { 2, 1, 64, 64 };
    const int f16 = t->f16;
    if (t->kind == MXP_X16_LUT_SIGNED)
        f16 ? LUT_LOOP(f16_s) : LUT_LOOP(bf16_s);
    else if (t->kind == MXP_X16_LUT_UNSIGNED)
        f16 ? LUT_LOOP(f16_u) : LUT_LOOP(bf16_u);
    else if (t->fnuz)
        f16 ? LUT_LOOP(f16_fnuz) : LUT_LOOP(bf16_fnuz);
    else if (t->wide)
        f16 ? LUT_LOOP(f16_wide) : LUT_LOOP(bf16_wide);
    else if (t->sign_bit != 0x80)
        f16 ? LUT_LOOP(f16_n) : LUT_LOOP(bf16_n);
    else
        f16 ? LUT_LOOP(f16) : LUT_LOOP(bf16);
    lut_end(dst, src, n, &c, t, 0);
}
