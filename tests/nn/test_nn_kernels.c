/* Every row of src/kernels/f32-norm-list.inc that the machine runs gives
 * its twin's bits: rows of every length to 70 and longer ones, unaligned
 * starts, with and without weight and bias, layer and RMS norm, special
 * values (NaN, inf, huge, tiny, constant rows), in place; the dispatch
 * table is the list; and the layer's generic path (a strided input) gives
 * the kernels' bits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fpenv.h"
#include "mxp.h"
#include "nn/nn-internal.h"
#include "support/prng.h"

static const struct { const char *name; mxp_isa isa; } listed[] = {
#define MXP_F32_NORM(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-norm-list.inc"
#undef MXP_F32_NORM
};

static void test_table_is_the_list(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_norm_kernels(&n);
    assert_int_equal(n, sizeof listed / sizeof listed[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(k[i].name, listed[i].name);
        assert_int_equal(k[i].isa, listed[i].isa);
    }
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        assert_non_null(nn_f32_norm_kernel((mxp_isa)isa));
}

static void fill(float *x, size_t n, uint64_t *rng, int kind)
{
    for (size_t i = 0; i < n; i++) {
        const double u = prng_uniform(rng) - 0.3;
        x[i] = kind == 0 ? (float)(u * 6) : kind == 1 ? (float)(u * 3e38) : kind == 2 ? 2.5f : (float)(u * 1e-40);
    }
    if (kind == 4 && n > 2) {
        x[n / 2] = NAN;
        x[1] = INFINITY;
    }
}

static void test_rows_match_their_twin(void **state)
{
    (void)state;
    enum { MAXN = 1100 };
    static float x[MAXN + 8], y1[MAXN + 8], y2[MAXN + 8];
    static double w[MAXN + 8], b[MAXN + 8];
    uint64_t rng = prng_seed(26);
    for (int i = 0; i < MAXN + 8; i++) {
        w[i] = prng_uniform(&rng) + 0.5;
        b[i] = prng_uniform(&rng) - 0.5;
    }
    size_t nk;
    const mxp_kernel *ks = nn_f32_norm_kernels(&nk);
    const mxp_fpenv env = mxp_fpenv_enter();
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        mxp_f32_norm_ukernel *fn = (mxp_f32_norm_ukernel *)ks[r].fn, *twin = (mxp_f32_norm_ukernel *)ks[r].twin;
        for (size_t n = 1; n <= MAXN; n = n < 70 ? n + 1 : n * 2 + 3)
            for (int kind = 0; kind < 5; kind++)
                for (int variant = 0; variant < 8; variant++) {
                    const size_t off = (size_t)variant % 3;
                    const double *wv = variant & 1 ? w + off : NULL, *bv = variant & 2 ? b : NULL;
                    const int rms = variant >= 4;
                    fill(x + off, n, &rng, kind);
                    memset(y1, 0x5a, sizeof y1);
                    memset(y2, 0x5a, sizeof y2);
                    twin(y1 + off, x + off, n, wv, bv, 1e-5, rms);
                    fn(y2 + off, x + off, n, wv, bv, 1e-5, rms);
                    if (memcmp(y1, y2, sizeof y1))
                        fail_msg("%s: n %zu kind %d variant %d differs from its twin", ks[r].name, n, kind, variant);
                    memcpy(y2, x, sizeof x); /* in place */
                    fn(y2 + off, y2 + off, n, wv, bv, 1e-5, rms);
                    if (memcmp(y1 + off, y2 + off, n * sizeof(float)))
                        fail_msg("%s: n %zu in place differs", ks[r].name, n);
                }
    }
    mxp_fpenv_leave(env);
}

/* The operation through its kernel (contiguous rows) and through the
 * generic path (every other element of a wider array): the same bits. */
static void test_generic_path_gives_the_kernel_bits(void **state)
{
    (void)state;
    enum { R = 7, D = 389 };
    uint64_t rng = 3;
    static float wide[R * D * 2];
    for (int i = 0; i < R * D * 2; i++)
        wide[i] = (float)((prng_uniform(&rng) - 0.5) * 10);
    mxp_array *base = NULL, *strided = NULL, *dense = NULL, *w = NULL, *y1 = NULL, *y2 = NULL;
    assert_int_equal(mxp_array_wrap(&base, wide, MXP_F32, 2, (int64_t[]){ R, 2 * D }, NULL, false, NULL, NULL), MXP_OK);
    const mxp_slice every_other[2] = { MXP_SLICE_ALL, { 0, MXP_SLICE_NONE, 2 } };
    assert_int_equal(mxp_array_slice(&strided, base, 2, every_other), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&dense, strided, 'C'), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&w, MXP_F32, 1, (int64_t[]){ D }, 1, 0.2, 9), MXP_OK);
    for (int rms = 0; rms < 2; rms++) {
        assert_int_equal(rms ? mxp_rms_norm(&y1, strided, 1, w, 1e-6, 0) : mxp_layer_norm(&y1, strided, 1, w, w, 1e-5, 0),
                         MXP_OK);
        assert_int_equal(rms ? mxp_rms_norm(&y2, dense, 1, w, 1e-6, 0) : mxp_layer_norm(&y2, dense, 1, w, w, 1e-5, 0),
                         MXP_OK);
        assert_memory_equal(mxp_array_data(y1), mxp_array_data(y2), R * D * sizeof(float));
        mxp_array_free(y1);
        mxp_array_free(y2);
    }
    mxp_array_free(w);
    mxp_array_free(dense);
    mxp_array_free(strided);
    mxp_array_free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_the_list),
        cmocka_unit_test(test_rows_match_their_twin),
        cmocka_unit_test(test_generic_path_gives_the_kernel_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
