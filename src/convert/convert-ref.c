/* The reference converter: decode any element to an exact value
 *     (-1)^sign * mant * 2^exp      (mant: up to 64 bits)
 * then round it once into the target format.  No floating-point arithmetic
 * is used, so the MXCSR rounding and FTZ/DAZ state cannot change a result. */
#include <string.h>

#include "convert/convert-ref.h"
#include "kernels/x16-lut-kernels.h"
#include "core/dtype-internal.h"
#include "core/element-bits.h"

enum { X_ZERO, X_FINITE, X_INF, X_NAN };

typedef struct xnum {
    int cls;
    int sign;
    int exp;
    uint64_t mant;
    uint64_t payload; /* NaN: the mantissa field left-aligned, quiet bit at bit 63 */
} xnum;

/* A binary floating-point format: its field widths and how it spends its
 * special encodings (core/dtype-internal.h: IEEE, fn, fnuz, finite, e8m0). */
typedef struct fmt {
    int bits, ebits, mbits, bias;
    mxp_float_style style;
} fmt;

static fmt float_fmt(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    fmt f = { 0, 0, 0, 0, MXP_FLOAT_IEEE };
    if (tr && tr->kind == MXP_KIND_FLOAT) {
        f.bits = tr->bits;
        f.ebits = tr->exp_bits;
        f.mbits = tr->mant_bits;
        f.bias = tr->bias;
        f.style = mxp_float_style_of(t);
    }
    return f;
}

static int top_bit(uint64_t x) { return 63 - __builtin_clzll(x); }

/* ---- decoding ---------------------------------------------------------- */

static uint64_t load_bits(const void *src, size_t i, size_t size)
{
    return mxp_element_bits((const unsigned char *)src + i * size, size);
}

static void store_bits(void *dst, size_t i, size_t size, uint64_t v)
{
    mxp_element_set_bits((unsigned char *)dst + i * size, size, v);
}

static xnum decode_float(const fmt *f, uint64_t bits)
{
    xnum x = { 0 };
    const uint64_t mmask = (1ull << f->mbits) - 1;
    const uint64_t eall = (1ull << f->ebits) - 1;
    const int has_inf = f->style == MXP_FLOAT_IEEE;
    bits &= f->bits == 64 ? ~0ull : (1ull << f->bits) - 1; /* sub-byte: the bits above are ignored */
    uint64_t m = bits & mmask;
    uint64_t e = (bits >> f->mbits) & eall;
    if (f->style == MXP_FLOAT_E8M0) {
        x.cls = e == eall ? X_NAN : X_FINITE;
        x.mant = 1;
        x.exp = (int)e - f->bias;
        return x;
    }
    x.sign = (int)((bits >> (f->bits - 1)) & 1);
    if (f->style == MXP_FLOAT_FNUZ && x.sign && e == 0 && m == 0) {
        x.cls = X_NAN; /* the negative-zero encoding; its sign stays, as in ml_dtypes */
    } else if (e == eall && (has_inf || (f->style == MXP_FLOAT_FN && m == mmask))) {
        if (has_inf && m == 0) {
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

static xnum decode_int(uint64_t bits, int nbits, int is_signed)
{
    xnum x = { 0 };
    if (nbits < 64)
        bits &= (1ull << nbits) - 1; /* sub-byte: the bits above are ignored */
    if (is_signed) {
        int shift = 64 - nbits;
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
    fmt f;                       /* float types: f.bits != 0 */
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
    if (c->f.bits)
        return decode_float(&c->f, bits);
    if (c->is_bool) {
        xnum x = { 0 };
        x.cls = bits ? X_FINITE : X_ZERO;
        x.mant = bits ? 1 : 0;
        return x;
    }
    return decode_int(bits, c->t->bits, c->t->is_signed);
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

/* The NaN a result gets.  Formats without NaN (float6, float4) give the
 * negative-zero encoding, as ml_dtypes does; the caller counts it invalid. */
static uint64_t nan_code(const fmt *f, const xnum *x)
{
    const uint64_t eall = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
    const uint64_t sign_bit = (uint64_t)x->sign << (f->bits - 1);
    switch (f->style) {
    case MXP_FLOAT_IEEE: {
        uint64_t payload = x->cls == X_NAN ? x->payload >> (64 - f->mbits) : 0;
        return sign_bit | (eall << f->mbits) | (1ull << (f->mbits - 1)) | payload;
    }
    case MXP_FLOAT_FN: return sign_bit | (eall << f->mbits) | mmask;
    case MXP_FLOAT_E8M0: return eall;
    case MXP_FLOAT_FNUZ: return 1ull << (f->bits - 1);
    default: return (uint64_t)!x->sign << (f->bits - 1); /* ml_dtypes: the zero of the other sign */
    }
}

static uint64_t max_field_of(const fmt *f)
{
    const uint64_t eall = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
    switch (f->style) {
    case MXP_FLOAT_IEEE: return ((eall - 1) << f->mbits) | mmask;
    case MXP_FLOAT_FN: return (eall << f->mbits) | (mmask - 1);
    case MXP_FLOAT_E8M0: return eall - 1;
    default: return (eall << f->mbits) | mmask;
    }
}

static void count_invalid(const encoder *en)
{
    if (en->flags)
        en->flags->invalid++;
}

/* Zeros, NaNs, infinities and (e8m0) negative values. */
static uint64_t encode_special(const fmt *f, const xnum *x, const encoder *en)
{
    const uint64_t sign_bit = (uint64_t)x->sign << (f->bits - 1);
    const int e8m0 = f->style == MXP_FLOAT_E8M0;
    if (x->cls == X_ZERO && !e8m0)
        return f->style == MXP_FLOAT_FNUZ ? 0 : sign_bit;
    if (x->cls == X_NAN || x->cls == X_ZERO || (e8m0 && x->sign)) {
        if (f->style == MXP_FLOAT_FINITE || e8m0)
            count_invalid(en);
        return nan_code(f, x);
    }
    /* X_INF */
    if (f->style == MXP_FLOAT_IEEE && en->overflow == MXP_OVERFLOW_INF)
        return sign_bit | ((1ull << f->ebits) - 1) << f->mbits;
    if (en->flags)
        en->flags->overflow++;
    if (en->overflow == MXP_OVERFLOW_SATURATE || f->style == MXP_FLOAT_FINITE)
        return (e8m0 ? 0 : sign_bit) | max_field_of(f);
    return nan_code(f, x);
}

static uint64_t encode_float(const fmt *f, const xnum *x, const encoder *en, uint32_t rnd)
{
    if (x->cls != X_FINITE || (f->style == MXP_FLOAT_E8M0 && x->sign))
        return encode_special(f, x, en);

    const int e8m0 = f->style == MXP_FLOAT_E8M0;
    const uint64_t sign_bit = (uint64_t)x->sign << (f->bits - 1);
    const uint64_t mmask = (1ull << f->mbits) - 1;
    const uint64_t max_field = max_field_of(f);
    const int emin = e8m0 ? -f->bias : 1 - f->bias; /* e8m0: no subnormals */
    const int e = x->exp + top_bit(x->mant);
    int q = (e >= emin ? e : emin) - f->mbits; /* exponent of the target's ulp */
    rounded r = round_shift(x->mant, q - x->exp, x->sign, en->mode, rnd);
    uint64_t kept = r.kept + (uint64_t)r.up;
    if (kept >> (f->mbits + 1)) { /* rounding carried into a new binade */
        kept >>= 1;
        q++;
    }
    if (e8m0 && kept == 0)
        kept = 1; /* no zero: below 2^-127 is 2^-127 in every mode */
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
        if (en->overflow == MXP_OVERFLOW_SATURATE || f->style == MXP_FLOAT_FINITE ||
            !overflow_to_inf(en->mode, x->sign))
            return sign_bit | max_field;
        if (f->style == MXP_FLOAT_IEEE)
            return sign_bit | ((1ull << f->ebits) - 1) << f->mbits;
        return nan_code(f, x);
    }
    if (en->flags && (r.inexact || (e8m0 && e < emin))) {
        en->flags->inexact++;
        if (e < emin)
            en->flags->underflow++;
    }
    if (field == 0 && f->style == MXP_FLOAT_FNUZ)
        return 0; /* no negative zero */
    return sign_bit | field;
}

/* Float or integer value to an integer type: round by the mode, then
 * saturate.  NaN gives 0; NaN and out-of-range values count as invalid. */
static uint64_t encode_int(const mxp_dtype_traits *t, const xnum *x, const encoder *en, uint32_t rnd)
{
    const int bits = t->bits;
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
    if (c->f.bits)
        return encode_float(&c->f, x, en, rnd);
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

void mxp_lut32_ref(void *dst, const void *src, size_t n, const uint32_t *table)
{
    const uint8_t *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        memcpy(d + 4 * i, &table[s[i]], 4);
}

void mxp_lut64_ref(void *dst, const void *src, size_t n, const uint64_t *table)
{
    const uint8_t *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        memcpy(d + 8 * i, &table[s[i]], 8);
}

/* One 16-bit pattern's result by the tables, or -1 where they leave it. */
static int x16_lut_one(const mxp_x16_lut_tables *t, unsigned h)
{
    unsigned x, y;
    if (t->f16) {
        x = (h >> 8) & 0x7f;
        y = ((h >> 3) & 0x7f) | ((h & 7) != 0);
    } else {
        const unsigned e = (h >> 7) & 0xff;
        x = e > t->elow ? e - t->elow : 0;
        x = x < 127 ? x : 127;
        y = h & 0x7f;
    }
    if (t->f16 ? x >> 2 == 31 : x == 127) /* infinities, NaNs; bfloat16: E >= elow + 127 */
        return -1;
    const unsigned idx = t->row[x] | t->key[y];
    const int normal = t->f16 ? 2 * x >= t->xnorm : x >= t->xnorm;
    unsigned r = normal ? (uint8_t)(t->row[x] + t->inc[y]) : t->cls[idx];
    r = r < t->ovf ? r : t->ovf;
    if (t->kind == MXP_X16_LUT_SIGNED)
        r = h & 0x8000 ? (0u - r) & t->int_mask : (r < t->int_max ? r : t->int_max);
    else if (t->kind == MXP_X16_LUT_UNSIGNED)
        r = h & 0x8000 ? 0 : r;
    else if ((h & 0x8000) && !(t->fnuz && !(r & 0x7f)))
        r += t->sign_bit;
    return (int)(uint8_t)r;
}

void mxp_x16_lut_x8_ref(void *dst, const void *src, size_t n, const mxp_x16_lut_tables *t)
{
    const uint16_t *s = src;
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++) {
        const int r = x16_lut_one(t, s[i]);
        if (r < 0)
            t->rest(d + i, s + i, 1, &t->p);
        else
            d[i] = (uint8_t)r;
    }
}

void mxp_x32_lut_x8_ref(void *dst, const void *src, size_t n, const mxp_x16_lut_tables *t)
{
    const float *s = src;
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, s + i, 4);
        const int r = x16_lut_one(t, (b >> 16) | ((b & 0xffff) != 0)); /* rounded to odd */
        if (r < 0)
            t->rest(d + i, s + i, 1, &t->p);
        else
            d[i] = (uint8_t)r;
    }
}
