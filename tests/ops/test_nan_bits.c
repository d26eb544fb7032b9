/* NaN results have one pattern at every ISA level (docs/ops.md, "NaN
 * results"): every elementwise operation whose float result is NaN writes
 * the positive quiet NaN with no payload (float32 0x7fc00000, float64
 * 0x7ff8000000000000, float16 0x7e00, bfloat16 0x7fc0, float8_e4m3fn 0x7f,
 * float8_e5m2 0x7e; float8_e4m3fn's -inf, which it cannot hold, is 0xff as
 * in every conversion); negative, positive, abs and copysign change the sign
 * bit alone and keep the input NaN's payload.  Inputs: a grid of special
 * values (signed zeros, +-1, +-inf, NaNs of both signs and a payload,
 * huge and tiny values) for every float dtype through every operation,
 * contiguous (the one-pass kernels) and strided (the blocked loop), at
 * every ISA level the machine has. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mxp/convert.h"
#include "mxp/cpu.h"
#include "mxp/dtype.h"
#include "mxp/ops.h"

enum { NV = 14, N = NV * NV, MAXB = 8 };

static const mxp_dtype floats[] = { MXP_F32, MXP_F64, MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2 };

static uint64_t canonical(mxp_dtype dt)
{
    switch (dt) {
    case MXP_F32: return 0x7fc00000u;
    case MXP_F64: return 0x7ff8000000000000ull;
    case MXP_F16: return 0x7e00u;
    case MXP_BF16: return 0x7fc0u;
    case MXP_E4M3: return 0x7fu;
    default: return 0x7eu; /* e5m2 */
    }
}

static bool is_nan_bits(mxp_dtype dt, uint64_t b)
{
    switch (dt) {
    case MXP_F32: return (b & 0x7fffffffu) > 0x7f800000u;
    case MXP_F64: return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    case MXP_F16: return (b & 0x7fffu) > 0x7c00u;
    case MXP_BF16: return (b & 0x7fffu) > 0x7f80u;
    case MXP_E4M3: return (b & 0x7fu) == 0x7fu;
    default: return (b & 0x7fu) > 0x7cu;
    }
}

static uint64_t load(const unsigned char *p, size_t size)
{
    uint64_t b = 0;
    memcpy(&b, p, size);
    return b;
}

/* The grid's operands a[i*NV + j] = v[i], b[...] = v[j] in dtype dt; the
 * last value is a NaN with a payload and the sign set (from float64). */
static void operands(mxp_dtype dt, unsigned char *a, unsigned char *b)
{
    double v[NV] = { 0.0, -0.0, 1.0, -1.0, 2.5, -3.0, INFINITY, -INFINITY, NAN, -NAN, 1e30, -1e-30, 100.0, 0 };
    const uint64_t payload = 0xfff4000000000123ull; /* -NaN, signalling in float64, payload bits high */
    memcpy(&v[NV - 1], &payload, sizeof payload);
    double av[N], bv[N];
    for (int i = 0; i < NV; i++) {
        for (int j = 0; j < NV; j++) {
            av[i * NV + j] = v[i];
            bv[i * NV + j] = v[j];
        }
    }
    assert_int_equal(mxp_convert(a, dt, av, MXP_F64, N, NULL), MXP_OK);
    assert_int_equal(mxp_convert(b, dt, bv, MXP_F64, N, NULL), MXP_OK);
}

static bool is_sign_op(bool unary, int op)
{
    return unary ? op == MXP_OP_NEGATIVE || op == MXP_OP_POSITIVE || op == MXP_OP_ABS : op == MXP_OP_COPYSIGN;
}

/* One operation on the grid at one ISA level, contiguous or with stride 2. */
static mxp_status run(bool unary, int op, mxp_dtype dt, mxp_dtype rt, const unsigned char *a,
                      const unsigned char *b, unsigned char *out, int stride)
{
    static unsigned char wa[2 * N * MAXB], wb[2 * N * MAXB], wo[2 * N * MAXB];
    const size_t s = mxp_dtype_itemsize(dt), rs = mxp_dtype_itemsize(rt);
    for (int k = 0; k < N; k++) {
        memcpy(wa + (size_t)(k * stride) * s, a + (size_t)k * s, s);
        memcpy(wb + (size_t)(k * stride) * s, b + (size_t)k * s, s);
    }
    const ptrdiff_t is = (ptrdiff_t)(s * (size_t)stride), os = (ptrdiff_t)(rs * (size_t)stride);
    mxp_status st = unary ? mxp_unary_strided((mxp_unary_op)op, N, wo, rt, os, wa, dt, is, NULL)
                          : mxp_binary_strided((mxp_binary_op)op, N, wo, rt, os, wa, dt, is, wb, dt, is, NULL);
    for (int k = 0; st == MXP_OK && k < N; k++)
        memcpy(out + (size_t)k * rs, wo + (size_t)(k * stride) * rs, rs);
    return st;
}

static const char *op_name(bool unary, int op)
{
    return unary ? mxp_unary_op_name((mxp_unary_op)op) : mxp_binary_op_name((mxp_binary_op)op);
}

static void test_nan_results_are_the_positive_quiet_nan_at_every_isa_level(void **state)
{
    (void)state;
    unsigned char a[N * MAXB], b[N * MAXB], out[N * MAXB];
    int checked = 0, nans = 0;
    for (size_t t = 0; t < sizeof floats / sizeof floats[0]; t++) {
        const mxp_dtype dt = floats[t];
        operands(dt, a, b);
        for (int u = 0; u < 2; u++) {
            const int count = u ? MXP_UNARY_OP_COUNT : MXP_BINARY_OP_COUNT;
            for (int op = 0; op < count; op++) {
                const mxp_dtype rt = u ? mxp_unary_result_type((mxp_unary_op)op, dt)
                                       : mxp_binary_result_type((mxp_binary_op)op, dt, dt);
                if (rt >= MXP_DTYPE_COUNT || (u == 0 && op == MXP_OP_LDEXP))
                    continue;
                const mxp_dtype_traits *rtr = mxp_dtype_get_traits(rt);
                if (!rtr || rtr->kind != MXP_KIND_FLOAT || is_sign_op(u, op))
                    continue;
                const size_t rs = mxp_dtype_itemsize(rt);
                unsigned char first[N * MAXB];
                for (int isa = MXP_ISA_SCALAR; isa <= (int)mxp_isa_supported(); isa++) {
                    assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                    for (int stride = 1; stride <= 2; stride++) {
                        assert_int_equal(run(u, op, dt, rt, a, b, out, stride), MXP_OK);
                        if (isa == MXP_ISA_SCALAR && stride == 1)
                            memcpy(first, out, N * rs);
                        for (int k = 0; k < N; k++) {
                            const uint64_t r = load(out + (size_t)k * rs, rs), r0 = load(first + (size_t)k * rs, rs);
                            checked++;
                            if (is_nan_bits(rt, r) != is_nan_bits(rt, r0) || (is_nan_bits(rt, r) && r != r0))
                                fail_msg("%s %s(a[%d], b[%d]) at %s, stride %d: 0x%llx, at scalar 0x%llx", op_name(u, op),
                                         mxp_dtype_name(dt), k / NV, k % NV, mxp_isa_name((mxp_isa)isa), stride,
                                         (unsigned long long)r, (unsigned long long)r0);
                            if (!is_nan_bits(rt, r))
                                continue;
                            nans++;
                            /* float8_e4m3fn has no infinity: an infinite result
                             * is NaN with its sign (docs/conversions.md) */
                            if (r != canonical(rt) && !(rt == MXP_E4M3 && r == 0xffu))
                                fail_msg("%s %s(a[%d], b[%d]) at %s, stride %d: NaN 0x%llx, want 0x%llx", op_name(u, op),
                                         mxp_dtype_name(dt), k / NV, k % NV, mxp_isa_name((mxp_isa)isa), stride,
                                         (unsigned long long)r, (unsigned long long)canonical(rt));
                        }
                    }
                }
            }
        }
    }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
    print_message("%d results, %d NaN\n", checked, nans);
    assert_true(nans > 1000);
}

/* The sign operations keep an input NaN's payload and act on its sign:
 * the same bits at every level. */
static void test_sign_operations_keep_the_payload(void **state)
{
    (void)state;
    const uint32_t nan32 = 0xffc01234u; /* -NaN with a payload */
    const uint16_t nanb = 0xffc5u, nanh = 0xfe05u;
    for (int isa = MXP_ISA_SCALAR; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        uint32_t o32[3];
        uint32_t in32[3] = { nan32, nan32, nan32 };
        assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 3, o32, MXP_F32, 4, in32, MXP_F32, 4, NULL), MXP_OK);
        assert_int_equal(o32[0], 0x7fc01234u);
        assert_int_equal(mxp_unary_strided(MXP_OP_ABS, 3, o32, MXP_F32, 4, in32, MXP_F32, 4, NULL), MXP_OK);
        assert_int_equal(o32[2], 0x7fc01234u);
        assert_int_equal(mxp_unary_strided(MXP_OP_POSITIVE, 3, o32, MXP_F32, 4, in32, MXP_F32, 4, NULL), MXP_OK);
        assert_int_equal(o32[1], nan32);
        const float one = 1.0f;
        assert_int_equal(mxp_binary_strided(MXP_OP_COPYSIGN, 3, o32, MXP_F32, 4, in32, MXP_F32, 4, &one, MXP_F32, 0,
                                            NULL),
                         MXP_OK);
        assert_int_equal(o32[0], 0x7fc01234u);
        uint16_t o16[3], inb[3] = { nanb, nanb, nanb }, inh[3] = { nanh, nanh, nanh };
        assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 3, o16, MXP_BF16, 2, inb, MXP_BF16, 2, NULL), MXP_OK);
        assert_int_equal(o16[1], 0x7fc5u);
        assert_int_equal(mxp_unary_strided(MXP_OP_ABS, 3, o16, MXP_F16, 2, inh, MXP_F16, 2, NULL), MXP_OK);
        assert_int_equal(o16[2], 0x7e05u);
        /* and an arithmetic operation on them gives the canonical NaN */
        assert_int_equal(mxp_binary_strided(MXP_OP_ADD, 3, o16, MXP_BF16, 2, inb, MXP_BF16, 2, inb, MXP_BF16, 2, NULL),
                         MXP_OK);
        assert_int_equal(o16[0], 0x7fc0u);
        assert_int_equal(mxp_binary_strided(MXP_OP_MULTIPLY, 3, o16, MXP_F16, 2, inh, MXP_F16, 2, inh, MXP_F16, 2, NULL),
                         MXP_OK);
        assert_int_equal(o16[2], 0x7e00u);
    }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
}

/* Negative, abs and copysign of every float dtype into itself act on the
 * sign bit alone, signalling NaNs included (widened to float32 they came
 * back quiet: ml_dtypes' testCopySign found it): every pattern of the
 * 8-bit and smaller types, a set of patterns of the wider ones, contiguous
 * and strided, at every level.  The fnuz float8s have no -0: their zero
 * and their one NaN (0x80) keep their sign bit; float8_e8m0fnu has none. */
static uint64_t sign_want(mxp_dtype dt, int op, uint64_t a, uint64_t b)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    const uint64_t s = (uint64_t)1 << (t->bits - 1);
    if ((dt == MXP_E4M3FNUZ || dt == MXP_E5M2FNUZ || dt == MXP_E4M3B11) && (a & ~s) == 0)
        return a; /* 0 and the NaN */
    return op == 0 ? a ^ s : op == 1 ? a & ~s : (a & ~s) | (b & s);
}

static void test_sign_operations_on_every_float_dtype_are_bit_operations(void **state)
{
    (void)state;
    enum { CAP = 256 };
    static const uint64_t wide[] = { 0x7d, 0x7e, 0x7c01, 0x7d01, 0x7f81, 0x7fa0, 0xff81, 0x7f800001u, 0xffa00000u,
                                     0x7ff0000000000001ull, 0xfff4000000000000ull, 0, 1, 0x3c00, 0x3f80, 0x80 };
    unsigned char a[CAP * 8 * 2], b[CAP * 8 * 2], o[CAP * 8 * 2];
    size_t checked = 0;
    for (int d = 1; d < MXP_DTYPE_COUNT; d++) {
        const mxp_dtype dt = (mxp_dtype)d;
        const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
        if (t->kind != MXP_KIND_FLOAT || dt == MXP_E8M0)
            continue;
        const size_t size = t->itemsize;
        const uint64_t width = t->bits < 64 ? ((uint64_t)1 << t->bits) - 1 : ~(uint64_t)0;
        size_t n = 0;
        if (t->bits <= 8)
            for (uint64_t v = 0; v <= width; v++, n++)
                memcpy(a + n * size, &v, size); /* little-endian: the low bytes */
        else
            for (size_t k = 0; k < sizeof wide / sizeof wide[0]; k++, n++) {
                const uint64_t v = wide[k] & width;
                memcpy(a + n * size, &v, size);
            }
        for (size_t i = 0; i < n; i++) /* the sign sources: both signs in turn */
            memcpy(b + i * size, a + ((i * 7 + 3) % n) * size, size);
        for (int isa = MXP_ISA_SCALAR; isa <= (int)mxp_isa_supported(); isa++) {
            assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
            for (int op = 0; op < 3; op++)
                for (int stride = 1; stride <= 2; stride++) {
                    const ptrdiff_t st = (ptrdiff_t)(size * (size_t)stride);
                    unsigned char sa[CAP * 8 * 2], sb[CAP * 8 * 2];
                    for (size_t i = 0; i < n; i++) {
                        memcpy(sa + (size_t)st * i, a + i * size, size);
                        memcpy(sb + (size_t)st * i, b + i * size, size);
                    }
                    mxp_status s = op == 0 ? mxp_unary_strided(MXP_OP_NEGATIVE, n, o, dt, st, sa, dt, st, NULL)
                                 : op == 1 ? mxp_unary_strided(MXP_OP_ABS, n, o, dt, st, sa, dt, st, NULL)
                                           : mxp_binary_strided(MXP_OP_COPYSIGN, n, o, dt, st, sa, dt, st, sb, dt, st,
                                                                NULL);
                    assert_int_equal(s, MXP_OK);
                    for (size_t i = 0; i < n; i++) {
                        uint64_t x = 0, y = 0, r = 0;
                        memcpy(&x, a + i * size, size);
                        memcpy(&y, b + i * size, size);
                        memcpy(&r, o + (size_t)st * i, size);
                        const uint64_t want = sign_want(dt, op, x, y);
                        if (r != want)
                            fail_msg("%s %s of 0x%llx (sign from 0x%llx) at %s, stride %d: 0x%llx, want 0x%llx",
                                     op == 0 ? "negative" : op == 1 ? "abs" : "copysign", t->name,
                                     (unsigned long long)x, (unsigned long long)y, mxp_isa_name((mxp_isa)isa), stride,
                                     (unsigned long long)r, (unsigned long long)want);
                        checked++;
                    }
                }
        }
    }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
    print_message("%zu results\n", checked);
    assert_true(checked > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nan_results_are_the_positive_quiet_nan_at_every_isa_level),
        cmocka_unit_test(test_sign_operations_keep_the_payload),
        cmocka_unit_test(test_sign_operations_on_every_float_dtype_are_bit_operations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
