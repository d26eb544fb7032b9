/* The reference converter: decode any element to an exact value
 *     (-1)^sign * mant * 2^exp      (mant: up to 64 bits)
 * then round it once into the target format.  No floating-point arithmetic
 * is used, so the MXCSR rounding and FTZ/DAZ state cannot change a result. */
#include <string.h>

#include "convert/convert-ref.h"

enum { X_ZERO, X_FINITE, X_INF, X_NAN };

typedef struct xnum {
    int cls;
    int sign;
    int exp;
    uint64_t mant;
    uint64_t payload; /* NaN: the mantissa field left-aligned, quiet bit at bit 63 */
} xnum;

/* A binary floating-point format, IEEE-like unless has_inf is false (then,
 * as OCP E4M3, only S.1111.111 is NaN and S.1111.110 is finite). */
typedef struct fmt {
    int bits, ebits, mbits, bias;
    int has_inf;
} fmt;

static const fmt fmt_f16 = { 16, 5, 10, 15, 1 };
static const fmt fmt_bf16 = { 16, 8, 7, 127, 1 };
static const fmt fmt_f32 = { 32, 8, 23, 127, 1 };
static const fmt fmt_f64 = { 64, 11, 52, 1023, 1 };
static const fmt fmt_e4m3 = { 8, 4, 3, 7, 0 };
static const fmt fmt_e5m2 = { 8, 5, 2, 15, 1 };

static const fmt *float_fmt(mxp_dtype t)
{
    switch (t) {
    case MXP_F16: return &fmt_f16;
    case MXP_BF16: return &fmt_bf16;
    case MXP_F32: return &fmt_f32;
    case MXP_F64: return &fmt_f64;
    case MXP_E4M3: return &fmt_e4m3;
    case MXP_E5M2: return &fmt_e5m2;
    default: return NULL;
    }
}

static int top_bit(uint64_t x) { return 63 - __builtin_clzll(x); }

/* ---- decoding ---------------------------------------------------------- */

static uint64_t load_bits(const void *src, size_t i, size_t size)
{
    const unsigned char *p = (const unsigned char *)src + i * size;
    switch (size) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static void store_bits(void *dst, size_t i, size_t size, uint64_t v)
{
    unsigned char *p = (unsigned char *)dst + i * size;
    switch (size) {
    case 1: *p = (unsigned char)v; break;
    case 2: { uint16_t w = (uint16_t)v; memcpy(p, &w, 2); break; }
    case 4: { uint32_t w = (uint32_t)v; memcpy(p, &w, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

static xnum decode_float(const fmt *f, uint64_t bits)
{
    xnum x = { 0 };
    uint64_t mmask = (1ull << f->mbits) - 1;
    uint64_t eall = (1ull << f->ebits) - 1;
    uint64_t m = bits & mmask;
    uint64_t e = (bits >> f->mbits) & eall;
    x.sign = (int)((bits >> (f->bits - 1)) & 1);
    if (e == eall && (f->has_inf || m == mmask)) {
        if (f->has_inf && m == 0) {
            x.cls = X_INF;
        } else {
            x.cls = X_NAN;
            x.payload = m << (64 - f->mbits);
        }
    } else if (e == 0) {
        x.cls = m ? X_FINITE : X_ZERO;
        x.mant = m;
        x.exp = 1 - f->bias - f->mbits;
    } else {
        x.cls = X_FINITE;
        x.mant = m | (1ull << f->mbits);
        x.exp = (int)e - f->bias - f->mbits;
    }
    return x;
}

static xnum decode_int(uint64_t bits, int size, int is_signed)
{
    xnum x = { 0 };
    if (is_signed) {
        int shift = 64 - 8 * size;
        int64_t v = (int64_t)(bits << shift) >> shift; /* sign-extend */
        x.sign = v < 0;
        x.mant = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    } else {
        x.mant = bits;
    }
    x.cls = x.mant ? X_FINITE : X_ZERO;
    return x;
}

/* What the loop needs to know about a type, looked up once per call. */
typedef struct codec {
    const fmt *f;                /* float types */
    const mxp_dtype_traits *t;
    int is_bool;
    size_t size;
} codec;

static codec codec_for(mxp_dtype t)
{
    codec c = { float_fmt(t), mxp_dtype_get_traits(t), t == MXP_BOOL, mxp_dtype_itemsize(t) };
    return c;
}

static xnum decode(const codec *c, uint64_t bits)
{
    if (c->f)
        return decode_float(c->f, bits);
    if (c->is_bool) {
        xnum x = { 0 };
        x.cls = bits ? X_FINITE : X_ZERO;
        x.mant = bits ? 1 : 0;
        return x;
    }
    return decode_int(bits, (int)c->size, c->t->is_signed);
}

/* ---- rounding ------------------------------------------------------------ */

/* mant * 2^exp with d = -exp > 0 bits dropped: the kept integer, and whether
 * to add one to it, by the rounding mode. */
typedef struct rounded {
    uint64_t kept;
    int up;
    int inexact;
} rounded;

static rounded round_shift(uint64_t mant, int d, int sign, mxp_rounding mode, uint32_t rnd)
{
    rounded r = { 0, 0, 0 };
    int half, sticky;
    uint64_t frac64; /* discarded bits as a fraction of one ulp, 64-bit fixed point */
    if (d <= 0) {
        r.kept = mant << -d;
        return r;
    }
    if (d < 64) {
        r.kept = mant >> d;
        half = (int)((mant >> (d - 1)) & 1);
        sticky = (mant & ((1ull << (d - 1)) - 1)) != 0;
        frac64 = mant << (64 - d);
    } else if (d == 64) {
        half = (int)(mant >> 63);
        sticky = (mant << 1) != 0;
        frac64 = mant;
    } else {
        half = 0;
        sticky = mant != 0;
        frac64 = d - 64 < 64 ? mant >> (d - 64) : 0;
    }
    r.inexact = half | sticky;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: r.up = half && (sticky || (r.kept & 1)); break;
    case MXP_ROUND_NEAREST_AWAY: r.up = half; break;
    case MXP_ROUND_TOWARD_ZERO: r.up = 0; break;
    case MXP_ROUND_UP: r.up = r.inexact && !sign; break;
    case MXP_ROUND_DOWN: r.up = r.inexact && sign; break;
    default: r.up = rnd < (uint32_t)(frac64 >> 32); break;
    }
    return r;
}

/* Where an overflowing finite value goes: 1 = infinity, 0 = max finite. */
static int overflow_to_inf(mxp_rounding mode, int sign)
{
    switch (mode) {
    case MXP_ROUND_TOWARD_ZERO: return 0;
    case MXP_ROUND_UP: return !sign;
    case MXP_ROUND_DOWN: return sign;
    default: return 1;
    }
}

typedef struct encoder {
    mxp_rounding mode;
    mxp_overflow overflow;
    mxp_convert_flags *flags;
} encoder;

static uint64_t encode_float(const fmt *f, const xnum *x, const encoder *en, uint32_t rnd)
{
    const uint64_t sign_bit = (uint64_t)x->sign << (f->bits - 1);
    const uint64_t eall = (1ull << f->ebits) - 1;
    const uint64_t mmask = (1ull << f->mbits) - 1;
    const uint64_t max_field = f->has_inf ? ((eall - 1) << f->mbits) | mmask : (eall << f->mbits) | (mmask - 1);
    const uint64_t inf_field = eall << f->mbits;
    const uint64_t nan_field = f->has_inf ? inf_field | (1ull << (f->mbits - 1)) : (eall << f->mbits) | mmask;
    int to_inf;

    switch (x->cls) {
    case X_ZERO:
        return sign_bit;
    case X_NAN:
        if (!f->has_inf)
            return sign_bit | nan_field;
        return sign_bit | nan_field | (x->payload >> (64 - f->mbits));
    case X_INF:
        if (f->has_inf && en->overflow == MXP_OVERFLOW_INF)
            return sign_bit | inf_field;
        if (en->flags)
            en->flags->overflow++;
        return sign_bit | (en->overflow == MXP_OVERFLOW_SATURATE ? max_field : nan_field);
    default:
        break;
    }

    const int emin = 1 - f->bias;
    const int e = x->exp + top_bit(x->mant);
    int q = (e >= emin ? e : emin) - f->mbits; /* exponent of the target's ulp */
    rounded r = round_shift(x->mant, q - x->exp, x->sign, en->mode, rnd);
    uint64_t kept = r.kept + (uint64_t)r.up;
    if (kept >> (f->mbits + 1)) { /* rounding carried into a new binade */
        kept >>= 1;
        q++;
    }
    uint64_t field;
    if (kept >> f->mbits)
        field = ((uint64_t)(q + f->mbits + f->bias) << f->mbits) | (kept & mmask);
    else
        field = kept; /* subnormal or zero */

    if (field > max_field) {
        if (en->flags) {
            en->flags->overflow++;
            en->flags->inexact++;
        }
        if (en->overflow == MXP_OVERFLOW_SATURATE)
            return sign_bit | max_field;
        to_inf = overflow_to_inf(en->mode, x->sign);
        if (!to_inf)
            return sign_bit | max_field;
        return sign_bit | (f->has_inf ? inf_field : nan_field);
    }
    if (en->flags && r.inexact) {
        en->flags->inexact++;
        if (e < emin)
            en->flags->underflow++;
    }
    return sign_bit | field;
}

/* Float or integer value to an integer type: round by the mode, then
 * saturate.  NaN gives 0; NaN and out-of-range values count as invalid. */
static uint64_t encode_int(const mxp_dtype_traits *t, const xnum *x, const encoder *en, uint32_t rnd)
{
    const int bits = 8 * (int)t->itemsize;
    const uint64_t umax = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    const uint64_t pos_max = t->is_signed ? umax >> 1 : umax;     /* largest positive magnitude */
    const uint64_t neg_max = t->is_signed ? (umax >> 1) + 1 : 0;  /* largest negative magnitude */
    uint64_t mag;
    int invalid = 0, inexact = 0;

    if (x->cls == X_ZERO)
        return 0;
    if (x->cls == X_NAN) {
        if (en->flags)
            en->flags->invalid++;
        return 0;
    }
    if (x->cls == X_INF) {
        mag = UINT64_MAX;
        invalid = 1;
    } else if (x->exp >= 0) {
        if (top_bit(x->mant) + x->exp >= 64) { /* >= 2^64: beyond every type, even when UINT64_MAX is lim */
            mag = UINT64_MAX;
            invalid = 1;
        } else {
            mag = x->mant << x->exp;
        }
    } else {
        rounded r = round_shift(x->mant, -x->exp, x->sign, en->mode, rnd);
        mag = r.kept + (uint64_t)r.up;
        inexact = r.inexact;
    }
    uint64_t lim = x->sign ? neg_max : pos_max;
    if (mag > lim) {
        mag = lim;
        invalid = 1;
    }
    if (en->flags) {
        en->flags->invalid += (uint64_t)invalid;
        en->flags->inexact += (uint64_t)(inexact && !invalid);
    }
    uint64_t v = x->sign ? 0 - mag : mag;
    return bits == 64 ? v : v & umax;
}

static uint64_t encode(const codec *c, const xnum *x, const encoder *en, uint32_t rnd)
{
    if (c->f)
        return encode_float(c->f, x, en, rnd);
    if (c->is_bool)
        return x->cls != X_ZERO;
    return encode_int(c->t, x, en, rnd);
}

void mxp_convert_ref(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type,
                     size_t n, const mxp_cvt_params *p)
{
    const codec in = codec_for(src_type), out = codec_for(dst_type);
    const encoder en = { p->rounding, p->overflow, p->flags };
    const int stochastic = p->rounding == MXP_ROUND_STOCHASTIC;
    uint64_t key_block = ~0ull;
    mxp_sr_key key = { 0, 0 };
    for (size_t i = 0; i < n; i++) {
        uint32_t rnd = 0;
        if (stochastic) {
            uint64_t index = p->index0 + i;
            if (index >> 32 != key_block) {
                key_block = index >> 32;
                key = mxp_sr_key_for(p->seed, index);
            }
            rnd = mxp_sr_mix((uint32_t)index, key);
        }
        xnum x = decode(&in, load_bits(src, i, in.size));
        store_bits(dst, i, out.size, encode(&out, &x, &en, rnd));
    }
}

void mxp_lut8_ref(void *dst, const void *src, size_t n, const uint8_t *table)
{
    const uint8_t *s = src;
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = table[s[i]];
}

void mxp_lut16_ref(void *dst, const void *src, size_t n, const uint16_t *table)
{
    const uint8_t *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        memcpy(d + 2 * i, &table[s[i]], 2);
}

void mxp_lut64_ref(void *dst, const void *src, size_t n, const uint64_t *table)
{
    const uint8_t *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        memcpy(d + 8 * i, &table[s[i]], 8);
}
