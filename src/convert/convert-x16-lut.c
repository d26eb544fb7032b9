/* Byte-lane tables for mxp_convert (bfloat16/float16/float32 -> the 8-bit
 * formats): building them from the reference converter, caching them, and
 * choosing the kernel (src/kernels/x16-lut, x32-lut). */
#include <stdatomic.h>
#include <string.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "kernels/x16-lut-kernels.h"
#include "mxp/dtype.h"

/* The tables are ~400 reference
 * conversions (4.6 us on a Zen 4), built once a process for each pair,
 * mode and overflow policy by the first conversion of X16_LUT_BUILD
 * elements or more (the one-pass kernels of cvt-h16-avx512.h, ~2 ns per 32
 * elements slower, would have done it in as much time more), and from then
 * on serve arrays from X16_LUT_MIN elements.  Where the CPU lacks
 * AVX512_VBMI the one-pass kernels do all the work (they are also `rest`). */
enum { X16_LUT_MIN = 2048, X16_LUT_BUILD = 65536 };

bool mxp_cvt_x16_lut_tables(mxp_x16_lut_tables *t, mxp_dtype dst_type, mxp_dtype src_type, const mxp_cvt_params *p,
                           mxp_cvt_fn rest)
{
    if ((src_type != MXP_BF16 && src_type != MXP_F16) || !rest || p->flags ||
        (p->rounding != MXP_ROUND_NEAREST_EVEN && p->rounding != MXP_ROUND_NEAREST_AWAY &&
         p->rounding != MXP_ROUND_TOWARD_ZERO))
        return false;
    switch (dst_type) {
    case MXP_E4M3: /* float8_e4m3fn and float8_e5m2 too: their one-pass kernels were 1.5-1.9x slower */
    case MXP_E5M2: /* (float16 -> float8_e5m2 keeps its own: n0 < m + 2 below) */
    case MXP_E3M4: /* 4 significand bits: 192 class entries, the kernels' wide class table */
    case MXP_E4M3IEEE:
    case MXP_E4M3B11:
    case MXP_E4M3FNUZ:
    case MXP_E5M2FNUZ:
    case MXP_E2M3:
    case MXP_E3M2:
    case MXP_E2M1:
    case MXP_S4: /* the integers as formats of p = 3, 3, 1, 1 significand bits (x16-lut-kernels.h) */
    case MXP_U4:
    case MXP_S2:
    case MXP_U2: break;
    default: return false;
    }
    const mxp_dtype_traits *d = mxp_dtype_get_traits(dst_type);
    const int f16 = src_type == MXP_F16, is_int = d->kind != MXP_KIND_FLOAT;
    const int lim = is_int ? (d->kind == MXP_KIND_INT ? 1 << (d->bits - 1) : (1 << d->bits) - 1) : 0;
    const int m = is_int ? (lim >= 8 ? 3 : 1) : d->mant_bits;
    /* n0: the source's biased exponent of the target's smallest normal (an
     * integer's: 2^m).  Rows: X = 0 rounds to zero (E <= elow, below half the
     * smallest subnormal: float16's own subnormals among them), X = 1 .. m + 1
     * the subnormal binades up from the one that rounds to 0 or the smallest,
     * X >= m + 2 the normal range and above. */
    const int n0 = (f16 ? 15 : 127) + (is_int ? m : 1 - d->bias);
    /* float16 -> e5m2fnuz (n0 = 0): the target's smallest normal binade is
     * float16's subnormal top, and every float16 subnormal rounds at one
     * place (the target's 2^-17): one class, keyed by Y's top 4 bits and a
     * sticky bit; float16's normals are the target's. */
    const int low = f16 && !is_int && n0 == 0;
    const int km = low ? 4 : m, kb = km + 1, nc = low ? 1 : m + 2, nn = low ? 1 : n0;
    if (m < 1 || m > 4 || (!low && n0 < m + 2))
        return false;
    memset(t, 0, sizeof *t);
    t->elow = (uint8_t)(low ? 0 : n0 - m - 2);
    t->xnorm = (uint8_t)(f16 ? nn * 8 : m + 2);
    t->sign_bit = (uint8_t)(1u << (d->bits - 1));
    t->fnuz = dst_type == MXP_E4M3B11 || dst_type == MXP_E4M3FNUZ || dst_type == MXP_E5M2FNUZ;
    t->kind = !is_int ? MXP_X16_LUT_FLOAT : d->kind == MXP_KIND_INT ? MXP_X16_LUT_SIGNED : MXP_X16_LUT_UNSIGNED;
    t->int_mask = (uint8_t)((1u << d->bits) - 1);
    t->int_max = (uint8_t)(d->kind == MXP_KIND_INT ? lim - 1 : lim);
    t->f16 = f16;
    t->rest = rest;
    t->p = *p;
    /* a magnitude from E and Y (float16: Y's last bit stands for the sticky bits) */
#define X16_LUT_REP(e, y) \
    (uint16_t)(f16 ? (unsigned)(e) << 10 | (unsigned)(y) << 3 : (unsigned)(e) << 7 | (unsigned)(y))
    enum { REPS = 512, MAX = REPS - 1 };
    uint16_t rep[REPS] = { 0 };
    uint8_t res[REPS];
    for (int x = 0; x < 128; x++) /* the rows' bases (float16: with significand bits 9, 8) */
        rep[x] = f16 ? X16_LUT_REP((x >> 2) < 30 ? x >> 2 : 30, (x & 3) << 5)
                     : X16_LUT_REP(x + t->elow < 254 ? x + t->elow : 254, 0);
    for (int y = 0; y < 128; y++) /* the significands in the smallest normal binade */
        rep[128 + y] = X16_LUT_REP(nn, y);
    for (int x = 0; x < nc; x++) /* the classes: top km bits of Y, then the sticky bit */
        for (int k = 0; k < 1 << kb; k++)
            rep[256 + (x << kb | k)] = X16_LUT_REP(x + t->elow, (k >> 1) << (7 - km) | (k & 1));
    rep[MAX] = f16 ? 0x7bff : 0x7f7f; /* the largest finite source: the overflow result */
    const uint16_t neg = t->kind == MXP_X16_LUT_SIGNED ? 0x8000 : 0; /* signed: magnitudes from the negative side */
    for (int i = 0; i < REPS; i++)
        rep[i] |= neg;
    mxp_cvt_params q = *p;
    mxp_convert_ref(res, dst_type, rep, src_type, REPS, &q);
#undef X16_LUT_REP
    if (neg)
        for (int i = 0; i < REPS; i++)
            res[i] = (uint8_t)((0u - res[i]) & t->int_mask);
    t->ovf = res[MAX];
    t->wide = nc << kb > 128;
    for (int x = 0; x < 128; x++) {
        /* the row's E and its class below the normal range: X = E - elow there */
        const int e = f16 ? x >> 2 : x + t->elow, c = e - t->elow > 0 ? e - t->elow : 0;
        if (f16 ? e == 31 : x == 127) /* infinities, NaNs (bfloat16: and E >= elow + 127): rest's */
            t->row[x] = 0;
        else if (e >= nn)
            t->row[x] = res[x];
        else
            t->row[x] = (uint8_t)(c << kb);
    }
    for (int y = 0; y < 128; y++) { /* float16's rows hold significand bits 9, 8: Y adds the rest */
        t->inc[y] = (uint8_t)(res[128 + y] - res[128 + (f16 ? y & 0x60 : 0)]);
        t->key[y] = (uint8_t)((y >> (7 - km)) << 1 | ((y & ((1 << (7 - km)) - 1)) != 0));
    }
    memcpy(t->cls, res + 256, (size_t)nc << kb);
    return true;
}

/* The cache of built tables: [source][target][mode][policy], each
 * published once (state 0: none, 1: being written, 2: ready). */
static const mxp_dtype x16_lut_targets[] = { MXP_E4M3, MXP_E5M2, MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ,
                                             MXP_E5M2FNUZ, MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_S4, MXP_U4, MXP_S2, MXP_U2 };
enum { X16_LUT_NT = sizeof x16_lut_targets / sizeof x16_lut_targets[0] };
static mxp_x16_lut_tables x16_lut_cache[2][X16_LUT_NT][3][2];
static atomic_uchar x16_lut_state[2][X16_LUT_NT][3][2];

/* t for dst_type <- src_type (bfloat16 or float16: the tables' source) in
 * p's mode, rest doing what they leave, from the cache or built (and
 * cached) for n >= X16_LUT_BUILD; false where the tables do not serve. */
bool mxp_cvt_x16_lut_get(mxp_x16_lut_tables *t, mxp_dtype dst_type, mxp_dtype src_type, const mxp_cvt_params *p,
                       mxp_cvt_fn rest, size_t n)
{
    int d = 0;
    while (d < X16_LUT_NT && x16_lut_targets[d] != dst_type)
        d++;
    const int m = p->rounding == MXP_ROUND_NEAREST_EVEN   ? 0
                  : p->rounding == MXP_ROUND_NEAREST_AWAY ? 1
                  : p->rounding == MXP_ROUND_TOWARD_ZERO  ? 2
                                                          : -1;
    if (d == X16_LUT_NT || m < 0 || (src_type != MXP_BF16 && src_type != MXP_F16) || p->flags || n < X16_LUT_MIN)
        return false;
    const int s = src_type == MXP_F16, o = p->overflow == MXP_OVERFLOW_SATURATE;
    atomic_uchar *state = &x16_lut_state[s][d][m][o];
    if (atomic_load_explicit(state, memory_order_acquire) == 2) {
        *t = x16_lut_cache[s][d][m][o];
        t->rest = rest;
        t->p = *p;
        return true;
    }
    if (n < X16_LUT_BUILD || !mxp_cvt_x16_lut_tables(t, dst_type, src_type, p, rest))
        return false;
    unsigned char none = 0;
    if (atomic_compare_exchange_strong(state, &none, 1)) {
        x16_lut_cache[s][d][m][o] = *t;
        atomic_store_explicit(state, 2, memory_order_release);
    }
    return true;
}

/* The byte-lane kernel for src_type -> dst_type and the source its tables
 * are built for, or NULL: float32 takes the bfloat16 tables after rounding
 * to odd, for the float targets (its kernels into the small integers,
 * vcvtps2dq, are faster). */
mxp_cvt_x16_lut_fn mxp_cvt_x16_lut_kernel(mxp_dtype dst_type, mxp_dtype src_type, mxp_dtype *table_src,
                                          const char **name)
{
    if (src_type == MXP_F32 && mxp_dtype_get_traits(dst_type)->kind == MXP_KIND_FLOAT) {
        *table_src = MXP_BF16;
        return mxp_cvt_find_x16_lut(mxp_get_isa(), 32, name);
    }
    if (src_type != MXP_BF16 && src_type != MXP_F16)
        return NULL;
    *table_src = src_type;
    return mxp_cvt_find_x16_lut(mxp_get_isa(), 16, name);
}
