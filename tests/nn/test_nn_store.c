/* The nn layer's own widening loads and rounding stores (float32,
 * bfloat16, float16 by plain C loops) give mxp_convert's bits: every
 * 16-bit pattern widened, and doubles at the rounding boundaries (ties,
 * overflow thresholds, subnormals, NaN payloads, signed zeros) and random
 * ones rounded, contiguous and strided. */
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

enum { N = 70000 };

static const mxp_dtype types[] = { MXP_F32, MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_F64, MXP_S8 };
#define NTYPES (int)(sizeof types / sizeof types[0])

static void test_loads_equal_convert(void **state)
{
    (void)state;
    static unsigned char src[N * 8];
    static double got[N], want[N];
    uint64_t rng = 99;
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)prng_next(&rng);
    for (int i = 0; i < 65536; i++) { /* every 16-bit pattern */
        src[2 * i] = (unsigned char)i;
        src[2 * i + 1] = (unsigned char)(i >> 8);
    }
    for (int k = 0; k < NTYPES; k++) {
        const mxp_dtype dt = types[k];
        const int64_t size = (int64_t)mxp_dtype_itemsize(dt), n = N / 2;
        for (int strided = 0; strided < 2; strided++) {
            const int64_t step = size * (strided ? 2 : 1);
            nn_load(got, (const char *)src, dt, step, n);
            assert_int_equal(mxp_convert_strided(want, MXP_F64, 8, src, dt, (ptrdiff_t)step, (size_t)n, NULL), MXP_OK);
            for (int64_t i = 0; i < n; i++)
                if (memcmp(&got[i], &want[i], 8) && !(isnan(got[i]) && isnan(want[i])))
                    fail_msg("%s load [%lld]: %a, want %a", mxp_dtype_name(dt), (long long)i, got[i], want[i]);
        }
    }
}

/* Doubles near every rounding boundary of dt: x = v and v +- a little for
 * v the midpoints of neighbouring values, plus specials. */
static int64_t boundary_values(double *x, mxp_dtype dt, uint64_t *rng)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    int64_t n = 0;
    const double specials[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, t->max, -t->max, t->min_normal,
                                t->min_subnormal, t->min_subnormal / 2, t->min_subnormal / 2 * 1.0000001,
                                t->max * (1 + t->eps / 4), t->max * (1 + t->eps / 2), 1e300, -1e300, 5e-324 };
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        x[n++] = specials[i];
    uint64_t payload = 0x7ff4000000000123ull; /* a signalling NaN with a payload */
    memcpy(&x[n++], &payload, 8);
    payload = 0xfff8000000abcdefull;
    memcpy(&x[n++], &payload, 8);
    while (n < N) {
        /* a random value of dt's range, and the midpoint to its neighbour */
        const double e = ldexp(1.0, (int)(prng_next(rng) % (uint64_t)(t->exp_bits ? (1 << t->exp_bits) : 64)) -
                                        (t->bias ? t->bias : 32) - t->mant_bits + 1);
        const double v = ldexp((double)(prng_next(rng) % (2ull << t->mant_bits)), 0) * e;
        const double mid = v + e / 2, s = (prng_next(rng) & 1) ? -1 : 1;
        x[n++] = s * mid;
        if (n < N)
            x[n++] = s * nextafter(mid, 0);
        if (n < N)
            x[n++] = s * nextafter(mid, INFINITY);
        if (n < N)
            x[n++] = s * (prng_uniform(rng) * 4 - 2) * ldexp(1.0, (int)(prng_next(rng) % 80) - 40);
    }
    return n;
}

static void test_stores_equal_convert(void **state)
{
    (void)state;
    static double x[N];
    static unsigned char got[N * 16], want[N * 16];
    uint64_t rng = 5;
    const mxp_fpenv env = mxp_fpenv_enter(); /* as the operations call it */
    for (int k = 0; k < NTYPES; k++) {
        const mxp_dtype dt = types[k];
        const int64_t size = (int64_t)mxp_dtype_itemsize(dt);
        const int64_t n = boundary_values(x, dt == MXP_S8 ? MXP_F32 : dt, &rng);
        for (int strided = 0; strided < 2; strided++) {
            const int64_t step = size * (strided ? 2 : 1);
            memset(got, 0x5a, sizeof got);
            memset(want, 0x5a, sizeof want);
            nn_store((char *)got, dt, step, x, n);
            assert_int_equal(mxp_convert_strided(want, dt, (ptrdiff_t)step, x, MXP_F64, 8, (size_t)n, NULL), MXP_OK);
            for (int64_t i = 0; i < n; i++)
                if (memcmp(got + i * step, want + i * step, (size_t)size))
                    fail_msg("%s store [%lld] of %a: bits differ", mxp_dtype_name(dt), (long long)i, x[i]);
            assert_memory_equal(got, want, (size_t)(n * step)); /* nothing written between */
        }
    }
    mxp_fpenv_leave(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_equal_convert),
        cmocka_unit_test(test_stores_equal_convert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
