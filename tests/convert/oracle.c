/* MPFR oracle.  The source value is decoded here with ldexp (not with mxp's
 * decoder), rounded by MPFR, and encoded back to bits here. */
#include <math.h>
#include <string.h>

#include <stdint.h>
#define MPFR_USE_INTMAX_T 1
#include <mpfr.h>

#include "convert/oracle.h"

/* style: 'I' IEEE (infinities, NaNs at the all-ones exponent), 'N' no
 * infinity and S.1..1.1..1 NaN (e4m3fn), 'U' fnuz (no infinity, no -0,
 * 0x80 NaN), 'F' finite (float6/float4: no infinity, no NaN), 'S' the MX
 * scale e8m0 (unsigned 2^(e-127), 0xff NaN, no zero).  Written from the
 * specifications (IEEE 754, OCP OFP8 and MX v1.0, ml_dtypes' docs). */
typedef struct ofmt { int bits, ebits, mbits, bias; char style; double max; } ofmt;

static bool float_format(mxp_dtype t, ofmt *f)
{
    switch (t) {
    case MXP_F16: *f = (ofmt){ 16, 5, 10, 15, 'I', 65504.0 }; return true;
    case MXP_BF16: *f = (ofmt){ 16, 8, 7, 127, 'I', 0x1.fep127 }; return true;
    case MXP_F32: *f = (ofmt){ 32, 8, 23, 127, 'I', 0x1.fffffep127 }; return true;
    case MXP_F64: *f = (ofmt){ 64, 11, 52, 1023, 'I', 0x1.fffffffffffffp1023 }; return true;
    case MXP_E4M3: *f = (ofmt){ 8, 4, 3, 7, 'N', 448.0 }; return true;
    case MXP_E5M2: *f = (ofmt){ 8, 5, 2, 15, 'I', 57344.0 }; return true;
    case MXP_E3M4: *f = (ofmt){ 8, 3, 4, 3, 'I', 15.5 }; return true;
    case MXP_E4M3IEEE: *f = (ofmt){ 8, 4, 3, 7, 'I', 240.0 }; return true;
    case MXP_E4M3B11: *f = (ofmt){ 8, 4, 3, 11, 'U', 30.0 }; return true;
    case MXP_E4M3FNUZ: *f = (ofmt){ 8, 4, 3, 8, 'U', 240.0 }; return true;
    case MXP_E5M2FNUZ: *f = (ofmt){ 8, 5, 2, 16, 'U', 57344.0 }; return true;
    case MXP_E8M0: *f = (ofmt){ 8, 8, 0, 127, 'S', 0x1p127 }; return true;
    case MXP_E2M3: *f = (ofmt){ 6, 2, 3, 1, 'F', 7.5 }; return true;
    case MXP_E3M2: *f = (ofmt){ 6, 3, 2, 3, 'F', 28.0 }; return true;
    case MXP_E2M1: *f = (ofmt){ 4, 2, 1, 1, 'F', 6.0 }; return true;
    default: return false;
    }
}

uint64_t test_load_bits(const void *buf, size_t i, size_t itemsize)
{
    uint64_t v = 0;
    memcpy(&v, (const unsigned char *)buf + i * itemsize, itemsize); /* little-endian */
    return v;
}

/* Source element -> MPFR value (exact), or NaN/inf. */
static void decode_source(mpfr_t x, mxp_dtype t, uint64_t bits)
{
    ofmt f;
    if (float_format(t, &f)) {
        if (f.bits < 64)
            bits &= (1ull << f.bits) - 1; /* sub-byte formats ignore the bits above */
        if (f.style == 'S') {
            if (bits == 0xff)
                mpfr_set_nan(x);
            else
                mpfr_set_ui_2exp(x, 1, (mpfr_exp_t)bits - 127, MPFR_RNDN);
            return;
        }
        int sign = (int)(bits >> (f.bits - 1)) & 1;
        uint64_t m = bits & ((1ull << f.mbits) - 1);
        int e = (int)((bits >> f.mbits) & ((1u << f.ebits) - 1));
        int eall = (1 << f.ebits) - 1;
        bool special = f.style == 'I' ? e == eall : f.style == 'N' ? e == eall && m == (1ull << f.mbits) - 1
                                                  : f.style == 'U' && bits == 1ull << (f.bits - 1);
        if (special) {
            if (f.style == 'I' && m == 0)
                mpfr_set_inf(x, sign ? -1 : 1);
            else {
                mpfr_set_nan(x);
                if (sign)
                    mpfr_setsign(x, x, 1, MPFR_RNDN);
            }
            return;
        }
        double v = e == 0 ? ldexp((double)m, 1 - f.bias - f.mbits)
                          : ldexp((double)(m + (1ull << f.mbits)), e - f.bias - f.mbits);
        mpfr_set_d(x, sign ? -v : v, MPFR_RNDN); /* exact: every value fits a double */
        if (v == 0 && sign)
            mpfr_setsign(x, x, 1, MPFR_RNDN);
        return;
    }
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    if (tr->bits < 8) { /* sub-byte integers: the low bits, sign-extended */
        bits &= (1ull << tr->bits) - 1;
        if (tr->is_signed && (bits >> (tr->bits - 1)))
            mpfr_set_si(x, (long)bits - (1L << tr->bits), MPFR_RNDN);
        else
            mpfr_set_ui(x, (unsigned long)bits, MPFR_RNDN);
        return;
    }
    switch (t) {
    case MXP_BOOL: mpfr_set_ui(x, bits != 0, MPFR_RNDN); return;
    case MXP_S8: mpfr_set_si(x, (int8_t)bits, MPFR_RNDN); return;
    case MXP_S16: mpfr_set_si(x, (int16_t)bits, MPFR_RNDN); return;
    case MXP_S32: mpfr_set_si(x, (int32_t)bits, MPFR_RNDN); return;
    case MXP_S64: mpfr_set_sj(x, (intmax_t)(int64_t)bits, MPFR_RNDN); return;
    default: mpfr_set_uj(x, (uintmax_t)bits, MPFR_RNDN); return; /* unsigned: zero-extended */
    }
}

static mpfr_rnd_t mpfr_mode(mxp_rounding mode)
{
    switch (mode) {
    case MXP_ROUND_TOWARD_ZERO: return MPFR_RNDZ;
    case MXP_ROUND_UP: return MPFR_RNDU;
    case MXP_ROUND_DOWN: return MPFR_RNDD;
    default: return MPFR_RNDN;
    }
}

/* Rounds x to the format's precision and subnormal grid (exponent range
 * unbounded above; overflow is decided by the caller). */
static void round_to_format(mpfr_t r, const mpfr_t x, const ofmt *f, mpfr_rnd_t rnd)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    int p = f->mbits + 1;
    mpfr_set_prec(r, p);
    int t = mpfr_set(r, x, rnd);
    mpfr_set_emin((1 - f->bias) - p + 2);
    mpfr_set_emax(4096);
    t = mpfr_check_range(r, t, rnd);
    mpfr_subnormalize(r, t, rnd);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
}

static uint64_t encode_double(double v, const ofmt *f)
{
    if (f->style == 'S')
        return (uint64_t)(ilogb(v) + 127);
    uint64_t sign = signbit(v) ? 1ull << (f->bits - 1) : 0;
    double a = fabs(v);
    if (a == 0)
        return sign;
    if (isinf(a))
        return sign | ((1ull << f->ebits) - 1) << f->mbits;
    int emin = 1 - f->bias;
    int e = ilogb(a);
    if (e < emin)
        return sign | (uint64_t)ldexp(a, f->mbits - emin);
    uint64_t frac = (uint64_t)ldexp(a, f->mbits - e) - (1ull << f->mbits);
    return sign | ((uint64_t)(e + f->bias) << f->mbits) | frac;
}

static uint64_t max_bits(const ofmt *f)
{
    uint64_t eall = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
    switch (f->style) {
    case 'I': return ((eall - 1) << f->mbits) | mmask;
    case 'N': return (eall << f->mbits) | (mmask - 1);
    case 'S': return 0xfe;
    default: return (eall << f->mbits) | mmask;
    }
}

/* The result for a NaN (or, in e8m0, a value it cannot hold). */
static oracle_result nan_result(const ofmt *f, int sign)
{
    oracle_result res = { 0, false, 0 };
    switch (f->style) {
    case 'I':
    case 'N': res.is_nan = true; res.nan_sign = sign; break;
    case 'U': res.bits = 1ull << (f->bits - 1); break;
    case 'S': res.bits = 0xff; break;
    default: res.bits = (uint64_t)!sign << (f->bits - 1); break; /* ml_dtypes: the zero of the other sign */
    }
    return res;
}

static oracle_result to_float(const mpfr_t x, const ofmt *f, mxp_rounding mode, mxp_overflow ov)
{
    oracle_result res = { 0, false, 0 };
    int sign = mpfr_signbit(x) != 0;
    uint64_t sign_bit = f->style == 'S' ? 0 : (uint64_t)sign << (f->bits - 1);
    if (mpfr_nan_p(x) || (f->style == 'S' && (sign || mpfr_zero_p(x))))
        return nan_result(f, sign);
    if (mpfr_inf_p(x)) {
        if (f->style == 'I' && ov == MXP_OVERFLOW_INF)
            res.bits = encode_double(sign ? -INFINITY : INFINITY, f);
        else if (ov == MXP_OVERFLOW_SATURATE || f->style == 'F')
            res.bits = sign_bit | max_bits(f);
        else
            res = nan_result(f, sign);
        return res;
    }
    if (f->style == 'S' && mpfr_cmp_d(x, 0x1p-127) < 0) {
        res.bits = 0; /* no zero: 2^-127 is the nearest value in every mode */
        return res;
    }
    mpfr_t r, z, a, mid;
    mpfr_inits2(64, r, z, a, (mpfr_ptr)0);
    mpfr_init2(mid, 256);
    if (f->style == 'S') {
        /* Powers of two: below and above x; a tie (1.5 * 2^k) goes up in
         * both nearest modes, as both neighbours have significand 1. */
        mpfr_set_prec(z, 1);
        mpfr_set_prec(a, 1);
        mpfr_set(z, x, MPFR_RNDZ);
        mpfr_set(a, x, MPFR_RNDA);
        mpfr_add(mid, z, a, MPFR_RNDN);
        mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
        mpfr_set_prec(r, 1);
        if (mode == MXP_ROUND_NEAREST_EVEN || mode == MXP_ROUND_NEAREST_AWAY)
            mpfr_set(r, mpfr_cmp(x, mid) >= 0 ? a : z, MPFR_RNDN);
        else
            mpfr_set(r, mode == MXP_ROUND_UP ? a : z, MPFR_RNDN); /* x > 0 */
    } else if (mode == MXP_ROUND_NEAREST_AWAY) {
        /* Ties away: the neighbour toward zero and away from zero, and
         * whichever is nearer, the away one on a tie. */
        round_to_format(z, x, f, MPFR_RNDZ);
        round_to_format(a, x, f, MPFR_RNDA);
        mpfr_add(mid, z, a, MPFR_RNDN); /* exact at 256 bits */
        mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
        mpfr_set_prec(r, f->mbits + 1);
        int c = mpfr_cmpabs(x, mid);
        mpfr_set(r, c >= 0 ? a : z, MPFR_RNDN);
    } else {
        round_to_format(r, x, f, mpfr_mode(mode));
    }
    double v = mpfr_get_d(r, MPFR_RNDN); /* exact */
    if (fabs(v) > f->max) {
        int to_inf;
        switch (mode) {
        case MXP_ROUND_TOWARD_ZERO: to_inf = 0; break;
        case MXP_ROUND_UP: to_inf = !sign; break;
        case MXP_ROUND_DOWN: to_inf = sign; break;
        default: to_inf = 1; break;
        }
        if (ov == MXP_OVERFLOW_SATURATE || !to_inf || f->style == 'F')
            res.bits = sign_bit | max_bits(f);
        else if (f->style == 'I')
            res.bits = encode_double(sign ? -INFINITY : INFINITY, f);
        else
            res = nan_result(f, sign);
    } else {
        if (v == 0)
            v = sign && f->style != 'U' ? -0.0 : 0.0; /* the sign of zero follows the input; fnuz has no -0 */
        res.bits = encode_double(v, f);
    }
    mpfr_clears(r, z, a, mid, (mpfr_ptr)0);
    return res;
}

static oracle_result to_int(const mpfr_t x, mxp_dtype t, mxp_rounding mode)
{
    oracle_result res = { 0, false, 0 };
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    if (t == MXP_BOOL) {
        res.bits = !mpfr_zero_p(x);
        return res;
    }
    if (mpfr_nan_p(x))
        return res; /* NaN -> 0 */
    mpfr_t r;
    mpfr_init2(r, 128);
    if (mode == MXP_ROUND_NEAREST_AWAY)
        mpfr_round(r, x);
    else
        mpfr_rint(r, x, mpfr_mode(mode));
    int bits = tr->bits;
    if (tr->is_signed) {
        intmax_t lo = -(intmax_t)(((uintmax_t)1 << (bits - 1)) - 1) - 1;
        intmax_t hi = (intmax_t)(((uintmax_t)1 << (bits - 1)) - 1);
        intmax_t v;
        if (mpfr_cmp_si(r, (long)lo) < 0)
            v = lo;
        else if (mpfr_cmp_si(r, (long)hi) > 0)
            v = hi;
        else
            v = mpfr_get_sj(r, MPFR_RNDN);
        res.bits = (uint64_t)v & (bits == 64 ? UINT64_MAX : (1ull << bits) - 1);
    } else {
        uintmax_t hi = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
        if (mpfr_sgn(r) < 0)
            res.bits = 0;
        else if (mpfr_cmp_ui(r, (unsigned long)hi) > 0)
            res.bits = hi;
        else
            res.bits = mpfr_get_uj(r, MPFR_RNDN);
    }
    mpfr_clear(r);
    return res;
}

oracle_result oracle_convert(mxp_dtype dst_type, mxp_dtype src_type, uint64_t src_bits,
                             mxp_rounding mode, mxp_overflow overflow)
{
    mpfr_t x;
    mpfr_init2(x, 128);
    decode_source(x, src_type, src_bits);
    ofmt f;
    oracle_result r = float_format(dst_type, &f) ? to_float(x, &f, mode, overflow)
                                                 : to_int(x, dst_type, mode);
    mpfr_clear(x);
    return r;
}

bool oracle_matches(const oracle_result *want, uint64_t got, mxp_dtype dst_type)
{
    ofmt f;
    if (!want->is_nan)
        return got == want->bits;
    if (!float_format(dst_type, &f))
        return false;
    uint64_t eall = (1ull << f.ebits) - 1, m = got & ((1ull << f.mbits) - 1);
    uint64_t e = (got >> f.mbits) & eall;
    int sign = (int)(got >> (f.bits - 1)) & 1;
    bool nan = e == eall && (f.style == 'I' ? m != 0 : m == (1ull << f.mbits) - 1);
    return nan && sign == want->nan_sign;
}
