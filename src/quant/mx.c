/* OCP Microscaling (MX v1.0) block formats: quantize and dequantize.
 * The rules (scale, layout, NaN policy, rounding) are in docs/mx.md. */
#include <math.h>
#include <string.h>

#include "core/abi.h"
#include "mxp/mx.h"
#include "core/error.h"
#include "quant/quant-internal.h"
#include "kernels/cvt-kernel.h"
#include "core/fpenv.h"

enum { BLOCK = MXP_MX_BLOCK, E8M0_NAN = 0xFF, E8M0_BIAS = 127 };

static bool format_ok(mxp_mx_format f)
{
    return f >= MXP_MXFP8_E4M3 && f <= MXP_NVFP4;
}

static bool is_fp6(mxp_mx_format f) { return f == MXP_MXFP6_E2M3 || f == MXP_MXFP6_E3M2; }

/* Element bytes of one full block (NVFP4: of its 16). */
static size_t element_bytes(mxp_mx_format f)
{
    return f == MXP_MXFP4_E2M1 ? BLOCK / 2 : f == MXP_NVFP4 ? MXP_NVFP4_BLOCK / 2 : is_fp6(f) ? BLOCK * 3 / 4 : BLOCK;
}

/* Exponent of the element format's largest normal (emax_elem in the spec). */
static int element_emax(mxp_mx_format f)
{
    switch (f) {
    case MXP_MXFP8_E4M3: return 8;  /* 448 = 1.75 * 2^8 */
    case MXP_MXFP8_E5M2: return 15; /* 57344 = 1.75 * 2^15 */
    case MXP_MXFP4_E2M1: return 2;  /* 6 = 1.5 * 2^2 */
    case MXP_MXFP6_E2M3: return 2;  /* 7.5 = 1.875 * 2^2 */
    case MXP_MXFP6_E3M2: return 4;  /* 28 = 1.75 * 2^4 */
    default: return 0;              /* INT8: 1.984375 = 127 * 2^-6 */
    }
}

const char *mxp_mx_format_name(mxp_mx_format f)
{
    switch (f) {
    case MXP_MXFP8_E4M3: return "mxfp8_e4m3";
    case MXP_MXFP8_E5M2: return "mxfp8_e5m2";
    case MXP_MXFP4_E2M1: return "mxfp4_e2m1";
    case MXP_MXINT8: return "mxint8";
    case MXP_MXFP6_E2M3: return "mxfp6_e2m3";
    case MXP_MXFP6_E3M2: return "mxfp6_e3m2";
    case MXP_NVFP4: return "nvfp4";
    default: return "invalid";
    }
}

size_t mxp_mx_bytes(mxp_mx_format f, size_t n)
{
    if (!format_ok(f) || n == 0)
        return 0;
    const size_t bs = f == MXP_NVFP4 ? MXP_NVFP4_BLOCK : BLOCK, head = f == MXP_NVFP4 ? sizeof(float) : 0;
    size_t blocks = n / bs + (n % bs != 0);
    size_t per = 1 + element_bytes(f);
    if (blocks > (SIZE_MAX - head) / per)
        return 0;
    return head + blocks * per;
}

/* Whether to round the magnitude a (lo <= a < hi, neighbours on the element
 * grid) up to hi.  lo_even: lo's code is even (the tie-to-even choice).
 * Every difference below is exact in double (a has at most 24 significant
 * bits and lies within a factor 2 of lo, or lo is 0; hi - lo is a power of 2). */
static bool round_up(double a, double lo, double hi, bool lo_even, bool neg,
                     mxp_rounding r, uint64_t seed, uint64_t index)
{
    if (a == lo)
        return false;
    double mid = lo + (hi - lo) / 2;
    switch (r) {
    case MXP_ROUND_NEAREST_EVEN: return a > mid || (a == mid && !lo_even);
    case MXP_ROUND_NEAREST_AWAY: return a >= mid;
    case MXP_ROUND_TOWARD_ZERO: return false;
    case MXP_ROUND_UP: return !neg;
    case MXP_ROUND_DOWN: return neg;
    default: {
        double frac = (a - lo) / (hi - lo);
        uint64_t threshold = (uint64_t)ldexp(frac, 32); /* floor: frac >= 0 */
        return mxp_sr_random(seed, index) < threshold;
    }
    }
}

/* FP4 E2M1, one nibble:      bit  3    2 1    0
 *                                 S  | E E  | M
 * E = 0: (M / 2) (0 or 0.5, subnormal); E > 0: (1 + M/2) * 2^(E - 1).
 * Codes 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6; code | 8 is the negative (8 is -0).
 * No infinity, no NaN: magnitudes at or above 6 saturate to 6. */
static const double fp4_values[8] = { 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0 };

static uint8_t encode_fp4(double s, mxp_rounding r, uint64_t seed, uint64_t index)
{
    bool neg = signbit(s) != 0;
    double a = fabs(s);
    unsigned k = 7;
    if (a < 6.0) {
        k = 0;
        while (fp4_values[k + 1] <= a)
            k++;
        if (round_up(a, fp4_values[k], fp4_values[k + 1], (k & 1) == 0, neg, r, seed, index))
            k++;
    }
    return (uint8_t)((neg ? 8u : 0u) | k);
}

/* INT8, one byte:   bit 7 6 5 4 3 2 1 0   two's complement k,
 *                       [ k (signed)  ]   value k * 2^-6
 * The encoder keeps k in [-127, 127] (symmetric; -128 = 0x80 is never
 * produced), saturating magnitudes above 127/64. */
static uint8_t encode_int8(double s, mxp_rounding r, uint64_t seed, uint64_t index)
{
    bool neg = signbit(s) != 0;
    double a = fabs(s) * 64.0;
    int k = 127;
    if (a < 127.0) {
        double lo = floor(a);
        k = (int)lo;
        if (round_up(a, lo, lo + 1.0, (k & 1) == 0, neg, r, seed, index))
            k++;
    }
    return (uint8_t)(neg ? -k : k);
}

/* FP6: four 6-bit codes in three bytes, element i at bits [6i, 6i + 6) of
 * the little-endian bit string (docs/mx.md). */
static void pack_fp6(unsigned char *out, const uint8_t *codes, size_t m)
{
    for (size_t i = 0; i < m; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4 && i + k < m; k++)
            v |= (uint32_t)(codes[i + k] & 0x3f) << (6 * k);
        out[3 * (i / 4)] = (unsigned char)v;
        out[3 * (i / 4) + 1] = (unsigned char)(v >> 8);
        out[3 * (i / 4) + 2] = (unsigned char)(v >> 16);
    }
}

static void unpack_fp6(uint8_t *codes, const unsigned char *in, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        const unsigned char *g = in + 3 * (i / 4);
        uint32_t v = (uint32_t)g[0] | (uint32_t)g[1] << 8 | (uint32_t)g[2] << 16;
        codes[i] = (uint8_t)((v >> (6 * (i % 4))) & 0x3f);
    }
}

static mxp_dtype fp6_dtype(mxp_mx_format f) { return f == MXP_MXFP6_E2M3 ? MXP_E2M3 : MXP_E3M2; }

/* ---- NVFP4 ------------------------------------------------------------------
 * NVIDIA's two-level scaling: a float32 tensor decode scale g = amax / (6 *
 * 448) (amax over the tensor's finite values; 1 when they are all zero),
 * then per block of 16 an E4M3 scale s = e4m3(amax_block / 6 / g) (nearest
 * even, saturating) and elements e2m1(v / (s g)) by the rounding mode; the
 * value is e2m1 * s * g.  A block holding a NaN or an infinity gets the
 * E4M3 NaN scale 0x7F and zero elements. */
enum { NV_BLOCK = MXP_NVFP4_BLOCK, E4M3_NAN = 0x7F };

static mxp_status nv_quantize(unsigned char *out, const float *src, size_t n, const mxp_convert_opts *o)
{
    double amax = 0.0;
    for (size_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, (const unsigned char *)(const void *)src + i * sizeof v, sizeof v); /* any address */
        if (isfinite(v) && fabs((double)v) > amax)
            amax = fabs((double)v);
    }
    float g = amax > 0.0 ? (float)(amax / (6.0 * 448.0)) : 1.0f;
    if (g == 0.0f)
        g = 0x1p-149f; /* amax below 6 * 448 * 2^-150: the smallest float32 */
    memcpy(out, &g, sizeof g);
    out += sizeof g;
    const mxp_convert_opts sat = { .overflow = MXP_OVERFLOW_SATURATE };
    for (size_t b0 = 0; b0 < n; b0 += NV_BLOCK, out += 1 + NV_BLOCK / 2) {
        size_t m = n - b0 < NV_BLOCK ? n - b0 : NV_BLOCK;
        float v[NV_BLOCK];
        memcpy(v, (const unsigned char *)(const void *)src + b0 * sizeof(float), m * sizeof(float));
        unsigned char *elems = out + 1;
        memset(elems, 0, NV_BLOCK / 2);
        double bmax = 0.0;
        bool special = false;
        for (size_t i = 0; i < m; i++) {
            if (!isfinite(v[i]))
                special = true;
            else if (fabs((double)v[i]) > bmax)
                bmax = fabs((double)v[i]);
        }
        if (special) {
            out[0] = E4M3_NAN;
            continue;
        }
        const double want = bmax / 6.0 / (double)g;
        mxp_status st = mxp_convert(&out[0], MXP_E4M3, &want, MXP_F64, 1, &sat);
        double s = 0.0;
        if (st == MXP_OK)
            st = mxp_convert(&s, MXP_F64, &out[0], MXP_E4M3, 1, NULL);
        if (st != MXP_OK)
            return st;
        if (s == 0.0)
            continue; /* every element rounds to 0 at this scale */
        for (size_t i = 0; i < m; i++) {
            uint8_t c = encode_fp4((double)v[i] / (s * (double)g), o->rounding, o->seed, o->index_offset + b0 + i);
            elems[i / 2] |= (uint8_t)((i & 1) ? c << 4 : c);
        }
    }
    return MXP_OK;
}

static mxp_status mx_quantize(void *dst, mxp_mx_format f, const float *src, size_t n,
                              const mxp_convert_opts *opts)
{
    if (!format_ok(f))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_mx_quantize: %d is not an mxp_mx_format", (int)f);
    mxp_convert_opts o = { 0 };
    if (opts)
        o = *opts;
    if ((unsigned)o.rounding >= MXP_ROUNDING_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_mx_quantize: %d is not an mxp_rounding",
                         (int)o.rounding);
    if (n == 0)
        return MXP_OK;
    if (!dst || !src)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_mx_quantize: %s is NULL with n = %zu",
                         !dst ? "dst" : "src", n);
    if (mxp_mx_bytes(f, n) == 0 || n > SIZE_MAX / sizeof(float)) /* the packed side, and the float side */
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_mx_quantize: %zu elements do not fit size_t bytes", n);

    if (f == MXP_NVFP4)
        return nv_quantize(dst, src, n, &o);
    mxp_convert_opts fp8 = { .rounding = o.rounding, .overflow = MXP_OVERFLOW_SATURATE,
                             .seed = o.seed, .flags = NULL };
    mxp_dtype fp8_type = f == MXP_MXFP8_E4M3 ? MXP_E4M3 : MXP_E5M2;
    int emax = element_emax(f);
    size_t eb = element_bytes(f);
    unsigned char *out = dst;

    for (size_t b0 = 0; b0 < n; b0 += BLOCK, out += 1 + eb) {
        size_t m = n - b0 < BLOCK ? n - b0 : BLOCK;
        float v[BLOCK]; /* copied as bytes: src may lie at any address */
        memcpy(v, (const unsigned char *)(const void *)src + b0 * sizeof(float), m * sizeof(float));
        unsigned char *elems = out + 1;
        memset(elems, 0, eb); /* padding and NaN blocks: all-zero codes */

        double amax = 0.0;
        bool special = false;
        for (size_t i = 0; i < m; i++) {
            if (!isfinite(v[i]))
                special = true;
            else if (fabs((double)v[i]) > amax)
                amax = fabs((double)v[i]);
        }
        if (special) {
            out[0] = E8M0_NAN;
            continue;
        }
        int shared = -E8M0_BIAS; /* all zeros: the smallest scale, 2^-127 */
        if (amax > 0.0) {
            int e;
            frexp(amax, &e);           /* amax = m * 2^e, m in [0.5, 1) */
            shared = (e - 1) - emax;   /* floor(log2(amax)) - emax_elem */
            if (shared < -E8M0_BIAS)
                shared = -E8M0_BIAS;
            if (shared > E8M0_BIAS)    /* unreachable for finite float32 */
                shared = E8M0_BIAS;
        }
        out[0] = (unsigned char)(shared + E8M0_BIAS);

        /* V_i / X, exact in double (X is a power of two, float32 * 2^k). */
        double scaled[BLOCK];
        for (size_t i = 0; i < m; i++)
            scaled[i] = ldexp((double)v[i], -shared);
        uint64_t index0 = o.index_offset + b0;

        switch (f) {
        case MXP_MXFP8_E4M3:
        case MXP_MXFP8_E5M2: {
            fp8.index_offset = index0;
            mxp_status st = mxp_convert(elems, fp8_type, scaled, MXP_F64, m, &fp8);
            if (st != MXP_OK)
                return st;
            break;
        }
        case MXP_MXFP4_E2M1:
            for (size_t i = 0; i < m; i++) {
                uint8_t c = encode_fp4(scaled[i], o.rounding, o.seed, index0 + i);
                elems[i / 2] |= (uint8_t)((i & 1) ? c << 4 : c); /* 2i low, 2i+1 high */
            }
            break;
        case MXP_MXFP6_E2M3:
        case MXP_MXFP6_E3M2: {
            uint8_t codes[BLOCK];
            fp8.index_offset = index0;
            mxp_status st = mxp_convert(codes, fp6_dtype(f), scaled, MXP_F64, m, &fp8);
            if (st != MXP_OK)
                return st;
            pack_fp6(elems, codes, m);
            break;
        }
        default:
            for (size_t i = 0; i < m; i++)
                elems[i] = encode_int8(scaled[i], o.rounding, o.seed, index0 + i);
            break;
        }
    }
    return MXP_OK;
}

mxp_status mxp_mx_quantize(void *dst, mxp_mx_format f, const float *src, size_t n,
                           const mxp_convert_opts *opts)
{
    MXP_ABI_IN(opts, convert_opts, "mxp_mx_quantize");
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = mx_quantize(dst, f, src, n, opts);
    mxp_fpenv_leave(env);
    return st;
}

/* n elements from the blocks at in, under the tensor scale g. */
static mxp_status nv_blocks(float *dst, float g, const unsigned char *in, size_t n)
{
    for (size_t b0 = 0; b0 < n; b0 += NV_BLOCK, in += 1 + NV_BLOCK / 2) {
        size_t m = n - b0 < NV_BLOCK ? n - b0 : NV_BLOCK;
        float out[NV_BLOCK];
        double s = 0.0;
        mxp_status st = mxp_convert(&s, MXP_F64, in, MXP_E4M3, 1, NULL);
        if (st != MXP_OK)
            return st;
        for (size_t i = 0; i < m; i++) {
            unsigned c = (i & 1) ? in[1 + i / 2] >> 4 : in[1 + i / 2] & 0xFu;
            double p = (c & 8) ? -fp4_values[c & 7] : fp4_values[c & 7];
            out[i] = (float)(p * s * (double)g); /* exact in double (<= 30 bits); one rounding */
        }
        memcpy((unsigned char *)(void *)dst + b0 * sizeof(float), out, m * sizeof(float));
    }
    return MXP_OK;
}

static mxp_status mx_blocks(float *dst, const void *src, mxp_mx_format f, size_t first, size_t n);

static mxp_status mx_dequantize(float *dst, const void *src, mxp_mx_format f, size_t n)
{
    if (!format_ok(f))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_mx_dequantize: %d is not an mxp_mx_format", (int)f);
    if (n == 0)
        return MXP_OK;
    if (!dst || !src)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_mx_dequantize: %s is NULL with n = %zu",
                         !dst ? "dst" : "src", n);
    if (mxp_mx_bytes(f, n) == 0 || n > SIZE_MAX / sizeof(float))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_mx_dequantize: %zu elements do not fit size_t bytes", n);

    return mx_blocks(dst, src, f, 0, n);
}

/* Elements [first, first + n) of a tensor at src (first a multiple of the
 * format's block): the blocks from their offset, and NVFP4's tensor scale
 * from the front. */
static mxp_status mx_blocks(float *dst, const void *src, mxp_mx_format f, size_t first, size_t n)
{
    const unsigned char *in = (const unsigned char *)src + (first ? mxp_mx_bytes(f, first) : 0);
    if (f == MXP_NVFP4) {
        float g;
        memcpy(&g, src, sizeof g);
        return nv_blocks(dst, g, first ? in : in + sizeof g, n);
    }
    size_t eb = element_bytes(f);
    for (size_t b0 = 0; b0 < n; b0 += BLOCK, in += 1 + eb) {
        size_t m = n - b0 < BLOCK ? n - b0 : BLOCK;
        const unsigned char *elems = in + 1;
        unsigned char *to = (unsigned char *)(void *)dst + b0 * sizeof(float); /* any address: written as bytes */
        float out[BLOCK];
        if (in[0] == E8M0_NAN) {
            for (size_t i = 0; i < m; i++)
                out[i] = NAN;
            memcpy(to, out, m * sizeof(float));
            continue;
        }
        double x = ldexp(1.0, (int)in[0] - E8M0_BIAS);
        double p[BLOCK];
        switch (f) {
        case MXP_MXFP8_E4M3:
        case MXP_MXFP8_E5M2: {
            mxp_status st = mxp_convert(p, MXP_F64, elems, f == MXP_MXFP8_E4M3 ? MXP_E4M3 : MXP_E5M2,
                                        m, NULL);
            if (st != MXP_OK)
                return st;
            break;
        }
        case MXP_MXFP4_E2M1:
            for (size_t i = 0; i < m; i++) {
                unsigned c = (i & 1) ? elems[i / 2] >> 4 : elems[i / 2] & 0xFu;
                p[i] = (c & 8) ? -fp4_values[c & 7] : fp4_values[c & 7];
            }
            break;
        case MXP_MXFP6_E2M3:
        case MXP_MXFP6_E3M2: {
            uint8_t codes[BLOCK];
            unpack_fp6(codes, elems, m);
            mxp_status st = mxp_convert(p, MXP_F64, codes, fp6_dtype(f), m, NULL);
            if (st != MXP_OK)
                return st;
            break;
        }
        default:
            for (size_t i = 0; i < m; i++)
                p[i] = (double)(int8_t)elems[i] / 64.0;
            break;
        }
        /* p * x is exact in double; one rounding to float32. */
        for (size_t i = 0; i < m; i++)
            out[i] = (float)(p[i] * x);
        memcpy(to, out, m * sizeof(float));
    }
    return MXP_OK;
}

mxp_status mxp_mx_dequantize(float *dst, const void *src, mxp_mx_format f, size_t n)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = mx_dequantize(dst, src, f, n);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_mx_dequantize_part(float *dst, const void *src, mxp_mx_format f, size_t first, size_t n)
{
    return n ? mx_blocks(dst, src, f, first, n) : MXP_OK;
}
