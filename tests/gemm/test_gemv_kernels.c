/* Every GEMV kernel of src/kernels/gemv-list.inc that this CPU runs,
 * against its twin: float32 x and y with float32, bfloat16, float16,
 * float8_e4m3fn and float8_e5m2 B, float64, and int16 x by int8 B; every n and k from 0 to 40 and a few
 * hundred, B's rows a few elements longer than needed and B starting an
 * element off alignment.  B not transposed, each y[j] is the twin's chain
 * of fused multiply-adds in k order: bit for bit.  B transposed, the
 * kernels add partial sums: within 2 k u sum |x b| of the twin (u the unit
 * roundoff).  The integer kernel's sums are exact modulo 2^32 either way. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/gemv-kernels.h"
#include "mxp/cpu.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

static const struct {
    const char *name;
    mxp_f32_gemv_fn fn, twin;
    mxp_isa isa;
} f32s[] = {
#define MXP_F32_GEMV(f, isa, twin) { #f, f, twin, isa },
#define MXP_F64_GEMV(...)
#define MXP_S16S8_GEMV(...)
#include "kernels/gemv-list.inc"
#undef MXP_F32_GEMV
#undef MXP_F64_GEMV
    { NULL, NULL, NULL, MXP_ISA_SCALAR },
};

static const struct {
    const char *name;
    mxp_f64_gemv_fn fn, twin;
    mxp_isa isa;
} f64s[] = {
#define MXP_F32_GEMV(...)
#define MXP_F64_GEMV(f, isa, twin) { #f, f, twin, isa },
#include "kernels/gemv-list.inc"
#undef MXP_F32_GEMV
#undef MXP_F64_GEMV
#undef MXP_S16S8_GEMV
    { NULL, NULL, NULL, MXP_ISA_SCALAR },
};

static const struct {
    const char *name;
    mxp_s16s8_gemv_fn fn, twin;
    mxp_isa isa;
} s16s8s[] = {
#define MXP_F32_GEMV(...)
#define MXP_F64_GEMV(...)
#define MXP_S16S8_GEMV(f, isa, twin) { #f, f, twin, isa },
#include "kernels/gemv-list.inc"
#undef MXP_F32_GEMV
#undef MXP_F64_GEMV
#undef MXP_S16S8_GEMV
    { NULL, NULL, NULL, MXP_ISA_SCALAR },
};

static uint64_t rng = 0x6a09e667f3bcc908u;

static double random_pm1(void)
{
    return prng_uniform(&rng) * 2 - 1;
}

/* k x n of B (or n x k transposed) stored with rows ld elements apart. */
static const size_t sizes[] = { 0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 65, 300 };

/* |got - want| <= 2 k u sum_p |x_p b_pj| (both sums of k products). */
static void expect_close(const char *name, int trans, size_t k, size_t j, double got, double want, double abs_sum,
                         double u)
{
    if (!(fabs(got - want) <= 2.0 * (double)k * u * abs_sum))
        fail_msg("%s, trans %d, k %zu: y[%zu] = %a, the twin's %a", name, trans, k, j, got, want);
}

/* float8_e4m3fn bits as the kind reads them: the value times 2^-8 (finite here). */
static double e4m3_read(uint8_t b)
{
    const int e = (b >> 3) & 0xf, m = b & 7;
    const double mag = e ? ldexp(m | 8, e - 18) : ldexp(m, -17);
    return b & 0x80 ? -mag : mag;
}

/* float32 B of kind: its element (p, j) as stored, widened. */
static double b_value(int kind, const uint16_t *h, const float *f, size_t at)
{
    if (kind == MXP_GEMV_F32)
        return f[at];
    const uint8_t *bytes = (const uint8_t *)(const void *)f;
    if (kind == MXP_GEMV_E4M3)
        return e4m3_read(bytes[at]);
    if (kind == MXP_GEMV_E5M2) {
        const int e = bytes[at] >> 2 & 0x1f, m = bytes[at] & 3; /* finite here */
        const double mag = e ? ldexp(m | 4, e - 17) : ldexp(m, -16);
        return bytes[at] & 0x80 ? -mag : mag;
    }
    uint32_t u = (uint32_t)h[at] << 16;
    float v;
    if (kind == MXP_GEMV_BF16) {
        memcpy(&v, &u, 4);
        return v;
    }
    const int e = (h[at] >> 10) & 0x1f, m = h[at] & 0x3ff; /* float16: finite here */
    const double mag = e ? ldexp(m | 0x400, e - 25) : ldexp(m, -24);
    return h[at] & 0x8000 ? -mag : mag;
}

/* run(line, trans, k, n) over both forms and every pair of sizes. */
static void each_size(const void *line, void (*run)(const void *line, int trans, size_t k, size_t n))
{
    for (int trans = 0; trans < 2; trans++)
        for (size_t ik = 0; ik < NELEMS(sizes); ik++)
            for (size_t in = 0; in < NELEMS(sizes); in++)
                run(line, trans, sizes[ik], sizes[in]);
}

typedef struct f32_case {
    size_t e;
    int kind;
} f32_case;

static void run_f32(const void *line, int trans, size_t k, size_t n)
{
    const f32_case *fc = line;
    const size_t e = fc->e;
    const int kind = fc->kind;
    const int f8 = kind == MXP_GEMV_E4M3 || kind == MXP_GEMV_E5M2;
    const size_t rows = trans ? n : k, cols = trans ? k : n, ld = cols + 3, es = kind == MXP_GEMV_F32 ? 4 : f8 ? 1 : 2;
    float *x = malloc((k + 1) * 4), *y = malloc((n + 1) * 4), *yt = malloc((n + 1) * 4);
    unsigned char *b = malloc((rows * ld + 1) * es);
    assert_true(x && y && yt && b);
    for (size_t p = 0; p < k; p++)
        x[p] = (float)random_pm1();
    for (size_t i = 0; i < rows * ld + 1; i++) {
        const float v = (float)random_pm1();
        uint32_t u;
        memcpy(&u, &v, 4);
        if (kind == MXP_GEMV_F32) {
            memcpy(b + i * 4, &v, 4);
        } else if (f8) { /* any finite pattern: subnormals, zeros of both signs, the largest */
            uint8_t byte;
            do
                byte = (uint8_t)prng_next(&rng);
            while (kind == MXP_GEMV_E4M3 ? (byte & 0x7f) == 0x7f : (byte & 0x7c) == 0x7c);
            b[i] = byte;
        } else /* bfloat16 bits, or float16 ones of magnitude below 2 */
            *(uint16_t *)(void *)(b + i * 2) = (uint16_t)(kind == MXP_GEMV_BF16 ? u >> 16 : (prng_next(&rng) & 0xbfff));
    }
    const unsigned char *b0 = b + es; /* an element off alignment */
    f32s[e].fn(trans, kind, k, n, x, b0, ld * es, y);
    f32s[e].twin(trans, kind, k, n, x, b0, ld * es, yt);
    for (size_t j = 0; j < n; j++) {
        if (!trans) {
            if (memcmp(&y[j], &yt[j], 4))
                fail_msg("%s, kind %d: k %zu n %zu: y[%zu] = %a, the twin's %a", f32s[e].name, kind, k, n, j,
                         (double)y[j], (double)yt[j]);
            continue;
        }
        double abs_sum = 0;
        for (size_t p = 0; p < k; p++)
            abs_sum += fabs(x[p] * b_value(kind, (const uint16_t *)(const void *)b0, (const float *)(const void *)b0,
                                           j * ld + p));
        expect_close(f32s[e].name, trans, k, j, y[j], yt[j], abs_sum, 0x1p-24);
    }
    free(x);
    free(y);
    free(yt);
    free(b);
}

static void test_f32_gemv_kernels_equal_their_twin(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t e = 0; f32s[e].fn; e++)
        if (f32s[e].isa <= mxp_isa_supported()) {
            for (int kind = MXP_GEMV_F32; kind < MXP_GEMV_KINDS; kind++)
                each_size(&(const f32_case){ e, kind }, run_f32);
            ran++;
        }
    if (!ran)
        skip();
}

/* Every float8 pattern read exactly by every float32 kernel and twin, in
 * the vector loops and the tails: k = 1, x = 2^8 (float8_e4m3fn's
 * contract) or 1, B one row of the 256 patterns (or 256 rows of one, its
 * transpose): y[j] is +0 plus the value itself -- an independent decoding
 * of the fields here; NaNs (S.1111.111; e5m2's exponent 31 with a significand)
 * give NaN, e5m2's infinities infinities. */
static void test_f32_gemv_kernels_read_every_float8_pattern(void **state)
{
    (void)state;
    uint8_t b[256];
    float y[256];
    for (int i = 0; i < 256; i++)
        b[i] = (uint8_t)i;
    for (size_t e = 0; f32s[e].fn; e++)
        for (int kind = MXP_GEMV_E4M3; kind <= MXP_GEMV_E5M2; kind++)
            for (int twin = 0; twin < 2; twin++)
                for (int trans = 0; trans < 2; trans++) {
                    if (!twin && f32s[e].isa > mxp_isa_supported())
                        continue;
                    const float x = kind == MXP_GEMV_E4M3 ? 256.0f : 1.0f;
                    (twin ? f32s[e].twin : f32s[e].fn)(trans, kind, 1, 256, &x, b, trans ? 1 : 256, y);
                    for (int i = 0; i < 256; i++) {
                        const int mag = i & 0x7f;
                        double want;
                        if (kind == MXP_GEMV_E4M3) {
                            want = mag == 0x7f ? NAN : 256.0 * e4m3_read((uint8_t)i);
                        } else {
                            const int ex = mag >> 2, m = mag & 3;
                            want = ex == 31 ? (m ? NAN : INFINITY) : ex ? ldexp(m | 4, ex - 17) : ldexp(m, -16);
                            want = i & 0x80 ? -want : want;
                        }
                        want += 0.0; /* y = +0 + x b: a -0 pattern gives +0 */
                        const int same = isnan(want) ? isnan(y[i])
                                                     : (double)y[i] == want && !signbit(y[i]) == !signbit(want);
                        if (!same)
                            fail_msg("%s%s, kind %d, trans %d: pattern 0x%02x read as %a, not %a", f32s[e].name,
                                     twin ? "'s twin" : "", kind, trans, i, (double)y[i], want);
                    }
                }
}

static void run_f64(const void *line, int trans, size_t k, size_t n)
{
    const size_t e = *(const size_t *)line;
    const size_t rows = trans ? n : k, cols = trans ? k : n, ld = cols + 3;
    double *x = malloc((k + 1) * 8), *y = malloc((n + 1) * 8), *yt = malloc((n + 1) * 8);
    double *b = malloc((rows * ld + 1) * 8);
    assert_true(x && y && yt && b);
    for (size_t p = 0; p < k; p++)
        x[p] = random_pm1();
    for (size_t i = 0; i < rows * ld + 1; i++)
        b[i] = random_pm1();
    f64s[e].fn(trans, k, n, x, b + 1, ld, y);
    f64s[e].twin(trans, k, n, x, b + 1, ld, yt);
    for (size_t j = 0; j < n; j++) {
        if (!trans) {
            if (memcmp(&y[j], &yt[j], 8))
                fail_msg("%s: k %zu n %zu: y[%zu] = %a, the twin's %a", f64s[e].name, k, n, j, y[j], yt[j]);
            continue;
        }
        double abs_sum = 0;
        for (size_t p = 0; p < k; p++)
            abs_sum += fabs(x[p] * b[1 + j * ld + p]);
        expect_close(f64s[e].name, trans, k, j, y[j], yt[j], abs_sum, 0x1p-53);
    }
    free(x);
    free(y);
    free(yt);
    free(b);
}

static void test_f64_gemv_kernels_equal_their_twin(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t e = 0; f64s[e].fn; e++)
        if (f64s[e].isa <= mxp_isa_supported()) {
            each_size(&e, run_f64);
            ran++;
        }
    if (!ran)
        skip();
}

static void run_s16s8(const void *line, int trans, size_t k, size_t n)
{
    const size_t e = *(const size_t *)line;
    const size_t rows = trans ? n : k, cols = trans ? k : n, ld = cols + 3, n32 = (n + 31) / 32 * 32;
    int16_t *x = malloc((k + 1) * 2);
    int32_t *y = malloc((n32 + 1) * 4), *yt = malloc((n + 1) * 4);
    int8_t *b = malloc(rows * ld + 1);
    assert_true(x && y && yt && b);
    for (size_t p = 0; p < k; p++) /* uint8 or int8 minus a zero point */
        x[p] = (int16_t)((int)(prng_next(&rng) % 511) - 255 - (p % 2 ? 128 : 0));
    for (size_t i = 0; i < rows * ld + 1; i++)
        b[i] = (int8_t)prng_next(&rng);
    s16s8s[e].fn(trans, k, n, x, b + 1, ld, y);
    s16s8s[e].twin(trans, k, n, x, b + 1, ld, yt);
    for (size_t j = 0; j < n; j++)
        if (y[j] != yt[j])
            fail_msg("%s, trans %d: k %zu n %zu: y[%zu] = %d, the twin's %d", s16s8s[e].name, trans, k, n, j, y[j],
                     yt[j]);
    free(x);
    free(y);
    free(yt);
    free(b);
}

static void test_s16s8_gemv_kernels_equal_their_twin(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t e = 0; s16s8s[e].fn; e++)
        if (s16s8s[e].isa <= mxp_isa_supported()) {
            each_size(&e, run_s16s8);
            ran++;
        }
    if (!ran)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_gemv_kernels_equal_their_twin),
        cmocka_unit_test(test_f32_gemv_kernels_read_every_float8_pattern),
        cmocka_unit_test(test_f64_gemv_kernels_equal_their_twin),
        cmocka_unit_test(test_s16s8_gemv_kernels_equal_their_twin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
