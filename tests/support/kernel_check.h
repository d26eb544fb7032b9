/* What the kernel-list tests share: the values that break kernels
 * (NaNs of both signs and with payloads, infinities, signed zeros,
 * subnormals, the extremes), inputs that mix them with random bit patterns
 * and ordinary numbers, and distances in ulps.  Each list's test walks its
 * rows (src/kernels/<dtype>-<op>-list.inc) and runs every row the machine
 * runs against its twin on these, at every length to KC_TAIL and at
 * unaligned starts. */
#ifndef MXP_TESTS_SUPPORT_KERNEL_CHECK_H
#define MXP_TESTS_SUPPORT_KERNEL_CHECK_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/dispatch.h"
#include "support/prng.h"

enum {
    KC_TAIL = 70, /* every length 0..KC_TAIL: each kernel's vector loop, its unrolled step and its tail */
    KC_OFFSETS = 4 /* element offsets of the starts: unaligned for every vector width */
};

static const uint32_t kc_f32_specials[] = {
    0x7fc00000u, 0xffc00000u, 0x7fc12345u, 0x7f800001u, 0xff812345u, /* NaNs: quiet, negative, payloads, signalling */
    0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u,              /* infinities, zeros */
    0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,              /* subnormals */
    0x00800000u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu,              /* FLT_MIN, FLT_MAX */
    0x3f800000u, 0xbf800000u, 0x3f000000u, 0x4b000000u, 0x33800000u, /* 1, -1, 1/2, 2^23, 2^-24 */
    0x42b17218u, 0xc2cff1b5u, 0x5f000000u, 0xdf000000u,              /* exp's edges, huge */
};

static const uint64_t kc_f64_specials[] = {
    0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff8000000012345ull, 0x7ff0000000000001ull, /* NaNs */
    0x7ff0000000000000ull, 0xfff0000000000000ull, 0x0000000000000000ull, 0x8000000000000000ull, /* inf, 0 */
    0x0000000000000001ull, 0x800fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull, /* tiny, huge */
    0x3ff0000000000000ull, 0xbff0000000000000ull, 0x3fe0000000000000ull, 0x4330000000000000ull,
};

static inline float kc_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static inline uint32_t kc_f32_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static inline double kc_f64(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}

static inline uint64_t kc_f64_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* n float32: a special value every 5th element (at every lane position
 * over a long array), a random bit pattern every 7th, else values of
 * magnitude 2^-20 .. 2^20 of both signs. */
static inline void kc_fill_f32(float *x, size_t n, uint64_t *rng)
{
    const size_t ns = sizeof kc_f32_specials / sizeof kc_f32_specials[0];
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = prng_next(rng);
        if (r % 5 == 0)
            x[i] = kc_f32(kc_f32_specials[(r >> 8) % ns]);
        else if (r % 7 == 0)
            x[i] = kc_f32((uint32_t)(r >> 32));
        else
            x[i] = (float)ldexp(prng_uniform(rng) * 2 - 1, (int)((r >> 16) % 41) - 20);
    }
}

/* The same for float64, random bit patterns of float64. */
static inline void kc_fill_f64(double *x, size_t n, uint64_t *rng)
{
    const size_t ns = sizeof kc_f64_specials / sizeof kc_f64_specials[0];
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = prng_next(rng);
        if (r % 5 == 0)
            x[i] = kc_f64(kc_f64_specials[(r >> 8) % ns]);
        else if (r % 7 == 0)
            x[i] = kc_f64(prng_next(rng));
        else
            x[i] = ldexp(prng_uniform(rng) * 2 - 1, (int)((r >> 16) % 41) - 20);
    }
}

/* n 16-bit patterns: every pattern of the top byte paired with random low
 * bytes, so NaNs, infinities, zeros and subnormals of float16 and bfloat16
 * all occur. */
static inline void kc_fill_u16(uint16_t *x, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (uint16_t)((prng_next(rng) >> 40) & 0xffff);
}

/* |a - b| in float32 ulps, counting across zero (+0 and -0 are 0 apart);
 * UINT32_MAX when one is a NaN and the other is not. */
static inline uint32_t kc_f32_ulps(float a, float b)
{
    if (a != a || b != b)
        return (a != a) == (b != b) ? 0 : UINT32_MAX;
    const uint32_t ua = kc_f32_bits(a), ub = kc_f32_bits(b);
    const int64_t ia = ua >> 31 ? -(int64_t)(ua & 0x7fffffffu) : (int64_t)ua;
    const int64_t ib = ub >> 31 ? -(int64_t)(ub & 0x7fffffffu) : (int64_t)ub;
    const int64_t d = ia > ib ? ia - ib : ib - ia;
    return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

/* Whether a dispatch table (rows[0..n)) holds exactly the rows of its list
 * as the test expanded it (names: the functions, NULL-terminated), in the
 * list's order.  The tests that expand a list see the library's build
 * options (MXP_HAVE_X86_KERNELS, MXP_HAVE_SLEEF: tests/CMakeLists.txt). */
static inline int kc_table_is_list(const mxp_kernel *rows, size_t n, const char *const *names)
{
    size_t k = 0;
    for (; names[k]; k++)
        if (k >= n || strcmp(rows[k].name, names[k]) != 0)
            return 0;
    return k == n;
}

/* The rows of a list (rows[0..n)) this machine runs, twins included, into
 * out (at most cap); how many. */
static inline size_t kc_runnable(const mxp_kernel *rows, size_t n, const mxp_kernel **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++)
        if (mxp_kernel_runs(&rows[i], mxp_isa_supported()))
            out[k++] = &rows[i];
    return k;
}

#endif
