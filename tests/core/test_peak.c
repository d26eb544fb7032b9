/* The peak-rate loops (src/kernels/peak-list.inc): every row this machine
 * runs, and its twin, does the operations its list says per iteration;
 * mxp_peak_kernel_name and mxp_peak_gflops measure the most capable SIMD
 * row of each op at every level and none at the scalar level. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/dispatch.h"
#include "kernels/peak-kernels.h"
#include "mxp.h"
#include "support/kernel_check.h"

static void test_peak_rows_count_their_operations(void **state)
{
    (void)state;
    size_t n, tested = 0;
    const mxp_kernel *ks = mxp_peak_kernels(&n);
    assert_true(n >= MXP_PEAK_OP_COUNT); /* a twin for each op */
    static const uint64_t iters[] = { 0, 1, 7, 1000 };
    for (size_t r = 0; r < n; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        const mxp_kernel *twin = NULL; /* the twin's own row: its operations per iteration */
        for (size_t t = 0; t < n; t++)
            if (ks[t].fn == ks[r].twin)
                twin = &ks[t];
        assert_non_null(twin);
        assert_true(twin->isa == MXP_ISA_SCALAR && twin->tags == ks[r].tags);
        for (size_t i = 0; i < sizeof iters / sizeof iters[0]; i++) {
            assert_true(((mxp_peak_ukernel *)ks[r].fn)(iters[i]) == iters[i] * (uint64_t)ks[r].param);
            assert_true(((mxp_peak_ukernel *)ks[r].twin)(iters[i]) == iters[i] * (uint64_t)twin->param);
        }
        assert_true(ks[r].tags && !(ks[r].tags & (ks[r].tags - 1))); /* one op */
        tested++;
    }
    print_message("%zu of %zu peak loops checked\n", tested, n);
}

static void test_peak_api_at_every_level(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *ks = mxp_peak_kernels(&n);
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (int op = 0; op < MXP_PEAK_OP_COUNT; op++) {
            const mxp_kernel *k = mxp_kernel_pick(ks, n, (mxp_isa)isa, 1u << op);
            const char *name = mxp_peak_kernel_name((mxp_peak_op)op);
            if (!k || k->isa == MXP_ISA_SCALAR) {
                assert_null(name);
                assert_true(mxp_peak_gflops((mxp_peak_op)op, 1) == 0);
            } else {
                assert_non_null(name);
                assert_string_equal(name, k->name);
                assert_true(mxp_peak_gflops((mxp_peak_op)op, 1) > 0);
            }
        }
    }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    assert_string_equal(mxp_peak_op_name(MXP_PEAK_F32_FMA), "f32_fma");
    assert_string_equal(mxp_peak_op_name(MXP_PEAK_U8S8_DOT), "u8s8_dot");
    assert_string_equal(mxp_peak_op_name(MXP_PEAK_OP_COUNT), "invalid");
    assert_null(mxp_peak_kernel_name(MXP_PEAK_OP_COUNT));
    assert_null(mxp_peak_kernel_name((mxp_peak_op)-1));
    assert_true(mxp_peak_gflops(MXP_PEAK_OP_COUNT, 3) == 0);
    assert_true(mxp_peak_gflops(MXP_PEAK_F32_FMA, 0) == 0);
}

/* The table is the list (src/kernels/peak-list.inc, expanded here), row for row. */
static void test_peak_table_is_the_list(void **state)
{
    (void)state;
    static const char *const names[] = {
#define MXP_PEAK(op, isa, ops, fn, twin) #fn,
#include "kernels/peak-list.inc"
#undef MXP_PEAK
        NULL,
    };
    size_t n;
    const mxp_kernel *rows = mxp_peak_kernels(&n);
    assert_true(kc_table_is_list(rows, n, names));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peak_table_is_the_list),
        cmocka_unit_test(test_peak_rows_count_their_operations),
        cmocka_unit_test(test_peak_api_at_every_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
