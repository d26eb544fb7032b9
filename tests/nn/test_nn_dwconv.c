/* Depthwise convolution through mxp_conv2d where src/nn/dwconv.c moves
 * the taps kernel onto x's cache lines (NHWC, stride 1, x off a line as
 * NumPy allocates it): every offset gives the bits of x on a line, at
 * every ISA level (MXP_ISA; test_nn_conv checks x on a line against the
 * direct loop). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

typedef struct shape {
    int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
} shape;

/* Float32 depthwise NHWC at stride 1 with x off a 64-byte line (as NumPy
 * allocates): src/nn/dwconv.c then calls the taps kernel with its
 * pointers moved onto the line and the weights rotated, and finishes the
 * first and last pixels' other channels by the row kernel.  Every offset
 * of x gives the bits of x on a line (test_nn_conv.c's depthwise test
 * checks those against the direct loop): channels 16 to 64, windows 3
 * and 5 wide, dilation, no padding, one, two and three pixels inside the
 * image, a bias (the widened epilogue). */
static void test_conv2d_depthwise_nhwc_off_a_line_bits(void **state)
{
    (void)state;
    static const shape shapes[] = {
        /* n  c   h   w   o  kh kw sh sw ph pw dh dw g */
        { 2, 16, 5, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16 },  /* 3x3 same: 7 pixels inside */
        { 1, 32, 4, 12, 32, 3, 3, 1, 1, 0, 0, 1, 1, 32 }, /* no padding: every pixel inside */
        { 1, 48, 3, 6, 48, 3, 5, 1, 1, 1, 2, 1, 1, 48 },  /* 3x5: two inside */
        { 1, 64, 3, 5, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64 },  /* three inside */
        { 1, 16, 3, 3, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16 },  /* one inside: the plain call */
        { 1, 32, 5, 11, 32, 3, 3, 1, 1, 2, 2, 2, 2, 32 }, /* dilated */
    };
    static const int64_t skews[] = { 1, 3, 4, 8, 12, 15 };
    uint64_t rng = 67;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++)
        for (int bias = 0; bias < 2; bias++) {
            const shape *k = &shapes[t];
            const int64_t xs[4] = { k->n, k->h, k->w, k->c }, ws[4] = { k->c, k->kh, k->kw, 1 };
            const int64_t nx = k->n * k->h * k->w * k->c;
            mxp_array *xa = NULL, *wa = NULL, *ba = NULL, *want = NULL, *buf = NULL;
            assert_int_equal(mxp_array_random_normal(&xa, MXP_F32, 4, xs, 0, 1, rng++), MXP_OK);
            assert_int_equal(mxp_array_random_normal(&wa, MXP_F32, 4, ws, 0, 1, rng++), MXP_OK);
            assert_int_equal(mxp_array_random_normal(&ba, MXP_F32, 1, &k->c, 0, 1, rng++), MXP_OK);
            ((float *)mxp_array_data(xa))[k->c + 1] = NAN;
            ((float *)mxp_array_data(xa))[nx - 1] = -0.0f;
            const mxp_conv_opts o = { .layout = MXP_NHWC, .padding = { k->ph, k->pw }, .dilation = { k->dh, k->dw },
                                      .groups = k->c };
            assert_int_equal(mxp_conv2d(&want, xa, wa, bias ? ba : NULL, &o, MXP_F32), MXP_OK);
            const int64_t cap = nx + 16;
            assert_int_equal(mxp_array_empty(&buf, MXP_F32, 1, &cap), MXP_OK); /* on a line */
            for (size_t s = 0; s < sizeof skews / sizeof skews[0]; s++) {
                float *at = (float *)mxp_array_data(buf) + skews[s];
                memcpy(at, mxp_array_data(xa), (size_t)nx * sizeof(float));
                mxp_array *xo = NULL, *y = NULL;
                assert_int_equal(mxp_array_wrap(&xo, at, MXP_F32, 4, xs, NULL, false, NULL, NULL), MXP_OK);
                assert_int_equal(mxp_conv2d(&y, xo, wa, bias ? ba : NULL, &o, MXP_F32), MXP_OK);
                const int64_t ny = mxp_array_size(want);
                const float *g = mxp_array_data(y), *e = mxp_array_data(want);
                for (int64_t i = 0; i < ny; i++)
                    if (memcmp(&g[i], &e[i], sizeof(float)) && !(isnan(g[i]) && isnan(e[i])))
                        fail_msg("shape %zu bias %d, x %lld floats past a line: output %lld is %a, want %a", t, bias,
                                 (long long)skews[s], (long long)i, (double)g[i], (double)e[i]);
                mxp_array_free(y);
                mxp_array_free(xo);
            }
            mxp_array_free(buf), mxp_array_free(want), mxp_array_free(ba), mxp_array_free(wa), mxp_array_free(xa);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_depthwise_nhwc_off_a_line_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
