/* Every row of src/kernels/f32-dwconv-list.inc that the machine runs gives
 * its twin's bits: runs of 0 to 40 columns, 1 to 40 channels (NHWC) or one
 * channel with strides 1 to 3 (NCHW), unaligned starts, special values;
 * and the dispatch table is the list. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "nn/conv-internal.h"
#include "support/kernel_list.h"
#include "support/prng.h"

static const kl_listed dw_listed[] = {
#define MXP_F32_DWCONV(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-dwconv-list.inc"
#undef MXP_F32_DWCONV
};

static const kl_listed taps_listed[] = {
#define MXP_F32_DWCONV_TAPS(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-dwconv-taps-list.inc"
#undef MXP_F32_DWCONV_TAPS
};

static void test_table_is_the_list(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_dwconv_kernels(&n);
    kl_expect_table(k, n, dw_listed, sizeof dw_listed / sizeof dw_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        assert_non_null(nn_f32_dwconv_kernel((mxp_isa)isa));
    k = nn_f32_dwconv_taps_kernels(&n);
    kl_expect_table(k, n, taps_listed, sizeof taps_listed / sizeof taps_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        assert_non_null(nn_f32_dwconv_taps_kernel((mxp_isa)isa));
}

enum { MAXN = 40, MAXC = 40, PAD = 3 };

static void fill(float *v, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++) {
        const double u = prng_uniform(rng) - 0.5;
        v[i] = i % 97 == 5 ? INFINITY : i % 89 == 7 ? NAN : i % 83 == 3 ? 1e-40f : (float)(u * 8);
    }
}

static void test_every_kernel_gives_its_twins_bits(void **state)
{
    (void)state;
    size_t nk;
    const mxp_kernel *ks = nn_f32_dwconv_kernels(&nk);
    const mxp_isa top = mxp_isa_current();
    float *x = malloc((MAXN * 3 * MAXC + PAD) * sizeof(float)), *w = malloc((MAXC + PAD) * sizeof(float));
    float *a0 = malloc((MAXN * MAXC + PAD) * sizeof(float)), *a1 = malloc((MAXN * MAXC + PAD) * sizeof(float));
    uint64_t rng = 77;
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], top))
            continue;
        mxp_f32_dwconv_ukernel *k = (mxp_f32_dwconv_ukernel *)ks[r].fn, *twin = (mxp_f32_dwconv_ukernel *)ks[r].twin;
        for (size_t n = 0; n <= MAXN; n++)
            for (size_t ch = 1; ch <= MAXC; ch += ch < 20 ? 1 : 7)
                for (size_t s = 1; s <= 3; s++) {
                    const size_t off = (n + ch + s) % PAD, step = ch == 1 ? s : s * ch;
                    fill(x, MAXN * 3 * MAXC + PAD, &rng);
                    fill(w, MAXC + PAD, &rng);
                    fill(a0, MAXN * MAXC + PAD, &rng);
                    memcpy(a1, a0, (MAXN * MAXC + PAD) * sizeof(float));
                    k(a0 + off, x + off, w + off, n, ch, step);
                    twin(a1 + off, x + off, w + off, n, ch, step);
                    if (memcmp(a0, a1, (MAXN * MAXC + PAD) * sizeof(float)))
                        fail_msg("%s: n %zu, ch %zu, step %zu differs from %s", ks[r].name, n, ch, step,
                                 ks[r].twin_name);
                }
    }
    free(x), free(w), free(a0), free(a1);
}

/* The taps kernels: 0 to 3 window rows, widths 1 to 4, 0 to 9 pixels, 1
 * to 70 channels (the 64- and 32-channel blocks and every tail), and one
 * channel over 0 to 150 pixels (NCHW planes: the column blocks), strides
 * and dilations 1 to 2, unaligned starts, special values; and against the
 * row kernel called tap after tap on a zeroed row (the operation's other
 * path for the same elements). */
static void test_taps_kernels_give_their_twins_bits(void **state)
{
    (void)state;
    enum { TC = 70, TN = 9, TN1 = 150, ROWLEN = (TN * 2 + 4 * 2) * TC + PAD }; /* one channel: up to TN1 pixels */
    size_t nk;
    const mxp_kernel *ks = nn_f32_dwconv_taps_kernels(&nk);
    const mxp_isa top = mxp_isa_current();
    float *x = malloc(3 * ROWLEN * sizeof(float)), *w = malloc((3 * 4 * TC + PAD) * sizeof(float));
    float *a0 = malloc((TN * TC + PAD) * sizeof(float)), *a1 = malloc((TN * TC + PAD) * sizeof(float));
    float *a2 = malloc((TN * TC + PAD) * sizeof(float));
    uint64_t rng = 91;
    mxp_f32_dwconv_ukernel *row = nn_f32_dwconv_kernel(MXP_ISA_SCALAR);
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], top))
            continue;
        mxp_f32_dwconv_taps_ukernel *k = (mxp_f32_dwconv_taps_ukernel *)ks[r].fn;
        mxp_f32_dwconv_taps_ukernel *twin = (mxp_f32_dwconv_taps_ukernel *)ks[r].twin;
        for (size_t nrows = 0; nrows <= 3; nrows++)
            for (size_t kw = 1; kw <= 4; kw++)
                for (size_t n = 0; n <= TN1; n += n < 3 ? 1 : 3)
                    for (size_t ch = 1; ch <= (n <= TN ? TC : 1); ch += ch < 18 ? 1 : ch < 64 ? 15 : 3)
                        for (size_t sd = 0; sd < 4; sd++) {
                            const size_t s = 1 + sd % 2, d = 1 + sd / 2, off = (n + ch + kw) % PAD;
                            const float *rows[3], *wrows[3];
                            fill(x, 3 * ROWLEN, &rng);
                            fill(w, 3 * 4 * TC + PAD, &rng);
                            for (size_t q = 0; q < nrows; q++) {
                                rows[q] = x + q * ROWLEN + off;
                                wrows[q] = w + q * kw * ch + off;
                            }
                            fill(a0, TN * TC + PAD, &rng);
                            memcpy(a1, a0, (TN * TC + PAD) * sizeof(float));
                            memset(a2, 0, (TN * TC + PAD) * sizeof(float));
                            k(a0 + off, rows, wrows, nrows, kw, n, ch, s * ch, d * ch);
                            twin(a1 + off, rows, wrows, nrows, kw, n, ch, s * ch, d * ch);
                            for (size_t q = 0; q < nrows; q++)
                                for (size_t t = 0; t < kw; t++)
                                    row(a2 + off, rows[q] + t * d * ch, wrows[q] + t * ch, n, ch, s * ch);
                            if (memcmp(a0, a1, (TN * TC + PAD) * sizeof(float)))
                                fail_msg("%s: rows %zu, kw %zu, n %zu, ch %zu, s %zu, d %zu differs from %s",
                                         ks[r].name, nrows, kw, n, ch, s, d, ks[r].twin_name);
                            for (size_t e = off; e < off + n * ch; e++) /* NaN payloads: the compiler's choice */
                                if (memcmp(&a0[e], &a2[e], sizeof(float)) && !(isnan(a0[e]) && isnan(a2[e])))
                                    fail_msg("%s: rows %zu, kw %zu, n %zu, ch %zu: element %zu %a, the row kernel's %a",
                                             ks[r].name, nrows, kw, n, ch, e - off, (double)a0[e], (double)a2[e]);
                        }
    }
    free(x), free(w), free(a0), free(a1), free(a2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_the_list),
        cmocka_unit_test(test_every_kernel_gives_its_twins_bits),
        cmocka_unit_test(test_taps_kernels_give_their_twins_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
