/* mxp_gemm with operands at odd addresses gives the aligned call's bytes,
 * the degenerate sizes included: with k = 0, A and B are never read, so a
 * misaligned A or B must not send the call to the aligned copies (it once
 * went there, copied nothing -- A and B span no bytes -- and called itself
 * again until the stack ran out).  Every ISA level. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

enum { M = 3, N = 5, LDC = 7 };

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

static _Alignas(64) unsigned char a_buf[64], b_buf[64], c_buf[2][M * LDC * 8 + 64];

/* C as doubles i - 3.25 (every C dtype holds them), stored in dtype ct at p. */
static void fill_c(void *p, mxp_dtype ct)
{
    double v[M * LDC];
    for (int i = 0; i < M * LDC; i++)
        v[i] = (double)(i % 11) - 3.25;
    unsigned char tmp[M * LDC * 8];
    assert_int_equal(mxp_convert(tmp, ct, v, MXP_F64, M * LDC, NULL), MXP_OK);
    memcpy(p, tmp, M * LDC * mxp_dtype_itemsize(ct));
}

/* One k = 0 product into C at c_buf[which] + c_shift, A and B at a_shift
 * and b_shift bytes past a 64-byte boundary. */
static mxp_status run(mxp_dtype at, mxp_dtype bt, mxp_dtype ct, double beta, const mxp_gemm_opts *o, int which,
                      size_t a_shift, size_t b_shift, size_t c_shift)
{
    void *c = c_buf[which] + c_shift;
    fill_c(c, ct);
    return mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, 0, 1.5, a_buf + a_shift, at, 1, b_buf + b_shift, bt, N, beta, c,
                    ct, LDC, o);
}

static void test_gemm_k_zero_with_misaligned_operands_gives_the_aligned_bytes(void **state)
{
    (void)state;
    static const mxp_dtype types[][3] = {
        { MXP_F32, MXP_F32, MXP_F32 },  { MXP_F64, MXP_F64, MXP_F64 },  { MXP_BF16, MXP_BF16, MXP_F32 },
        { MXP_F16, MXP_F16, MXP_F16 },  { MXP_BF16, MXP_BF16, MXP_BF16 }, { MXP_F32, MXP_F64, MXP_F64 },
        { MXP_E4M3, MXP_E4M3, MXP_F32 }, { MXP_U8, MXP_S8, MXP_S32 },     { MXP_U8, MXP_S8, MXP_F32 },
    };
    static const float bias[N] = { 0.5f, -1.0f, 2.0f, 0.25f, -0.75f };
    const mxp_gemm_opts with_bias = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL,
                                      .bias_len = N, .activation = MXP_ACT_RELU };
    static const size_t shifts[][3] = { { 1, 0, 0 }, { 0, 2, 0 }, { 3, 1, 0 }, { 1, 1, 2 }, { 0, 0, 4 } };
    const size_t c_bytes = sizeof c_buf[0] - 64;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t t = 0; t < NELEMS(types); t++)
            for (int e = 0; e < 2; e++)
                for (int zero_beta = 0; zero_beta < 2; zero_beta++) {
                    const mxp_dtype at = types[t][0], bt = types[t][1], ct = types[t][2];
                    const double beta = zero_beta || ct == MXP_S32 ? 0.0 : -0.5; /* int32 C: beta 0 only */
                    const mxp_gemm_opts *o = e && ct != MXP_S32 ? &with_bias : NULL;
                    memset(c_buf, 0, sizeof c_buf);
                    const mxp_status want = run(at, bt, ct, beta, o, 0, 0, 0, 0);
                    for (size_t s = 0; s < NELEMS(shifts); s++) {
                        const size_t cs = shifts[s][2];
                        memset(c_buf[1], 0, sizeof c_buf[1]);
                        const mxp_status got = run(at, bt, ct, beta, o, 1, shifts[s][0], shifts[s][1], cs);
                        if (got != want || memcmp(c_buf[1] + cs, c_buf[0], c_bytes) != 0)
                            fail_msg("%s x %s -> %s, beta %g, %s, A/B/C shifted %zu/%zu/%zu bytes, isa %s: status "
                                     "%s (aligned: %s) or C differs from the aligned call's",
                                     mxp_dtype_name(at), mxp_dtype_name(bt), mxp_dtype_name(ct), beta,
                                     o ? "bias + relu" : "no epilogue", shifts[s][0], shifts[s][1], cs,
                                     mxp_isa_name((mxp_isa)isa), mxp_status_str(got), mxp_status_str(want));
                    }
                }
    }
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_k_zero_with_misaligned_operands_gives_the_aligned_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
