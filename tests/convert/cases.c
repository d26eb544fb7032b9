#include <string.h>

#include "convert/cases.h"

uint64_t cases_rand64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct sink { uint64_t *out; size_t n, cap; } sink;

static void put(sink *s, uint64_t v)
{
    if (s->n < s->cap)
        s->out[s->n++] = v;
}

static void put_signed(sink *s, uint64_t v, int bits)
{
    put(s, v);
    put(s, v | 1ull << (bits - 1));
}

void cases_store(void *buf, mxp_dtype src, const uint64_t *bits, size_t n)
{
    size_t size = mxp_dtype_itemsize(src);
    for (size_t i = 0; i < n; i++)
        memcpy((unsigned char *)buf + i * size, &bits[i], size); /* little-endian */
}

/* The discarded-bit patterns that decide every rounding mode when d bits are
 * dropped, combined with kept parts whose last bit is 0, 1, or all ones. */
static void rounding_patterns(sink *s, int d, int kept_bits, uint64_t (*make)(uint64_t sig, void *ctx),
                              void *ctx)
{
    if (kept_bits < 1)
        return;
    uint64_t kept_variants[3] = { 1ull << (kept_bits - 1), (1ull << (kept_bits - 1)) | 1,
                                  kept_bits >= 64 ? UINT64_MAX : (1ull << kept_bits) - 1 };
    for (int kv = 0; kv < 3; kv++) {
        if (d <= 0) {
            put(s, make(kept_variants[kv] << -d, ctx));
            continue;
        }
        uint64_t half = 1ull << (d - 1);
        uint64_t all = d >= 64 ? UINT64_MAX : (1ull << d) - 1;
        /* and, where 30 bits or more are dropped, a tie or nothing plus one
           bit at 2^29 or midway above it: a float64 into float32's
           subnormals loses more bits than its low 29, which a rounding to
           odd by the low 29 alone would not see */
        const int mid = d > 30 ? (29 + d - 1) / 2 : 0;
        uint64_t disc[9] = { 0, 1, half - 1, half, half + 1, all, d > 30 ? half | 1ull << 29 : 0,
                             d > 30 ? half | 1ull << mid : 0, d > 30 ? 1ull << 29 : 0 };
        for (int i = 0; i < (d > 30 ? 9 : 6); i++)
            if (d + kept_bits <= 64)
                put(s, make((kept_variants[kv] << d) | disc[i], ctx));
    }
}

typedef struct fctx { int bits, ebits, mbits, bias, e, sign; } fctx;

static uint64_t make_float(uint64_t sig, void *p)
{
    const fctx *c = p;
    uint64_t field = ((uint64_t)(c->e + c->bias) << c->mbits) | (sig & ((1ull << c->mbits) - 1));
    return field | (uint64_t)c->sign << (c->bits - 1);
}

static int target_precision(mxp_dtype dst, int *emin, int *emax)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dst);
    if (t->kind == MXP_KIND_FLOAT) {
        *emin = 1 - t->bias;
        *emax = (1 << t->exp_bits) - 1 - t->bias;
        return t->mant_bits;
    }
    *emin = 0; /* integers: the quantum is 1 */
    *emax = t->bits;
    return -1;
}

static void float_source_cases(sink *s, const mxp_dtype_traits *st, mxp_dtype dst)
{
    fctx c = { st->bits, st->exp_bits, st->mant_bits, st->bias, 0, 0 };
    int src_emin = 1 - st->bias, src_emax = (1 << st->exp_bits) - 2 - st->bias;
    int temin, temax, tm = target_precision(dst, &temin, &temax);
    int lo = tm >= 0 ? temin - tm - 3 : -3, hi = temax + 2;
    for (int e = lo; e <= hi; e++) {
        if (e < src_emin || e > src_emax)
            continue;
        c.e = e;
        int q = tm >= 0 ? (e > temin ? e : temin) - tm : 0; /* target ulp exponent */
        int d = q - (e - st->mant_bits);                    /* discarded bits */
        int kept = st->mant_bits + 1 - (d > 0 ? d : 0);
        for (c.sign = 0; c.sign < 2; c.sign++) {
            if (kept >= 1)
                rounding_patterns(s, d, kept, make_float, &c);
            else {
                put(s, make_float(0, &c));
                put(s, make_float(1, &c));
                put(s, make_float((1ull << st->mant_bits) - 1, &c));
            }
        }
    }
    /* Every exponent of the source, including subnormals, infinities and NaNs. */
    uint64_t eall = (1ull << st->exp_bits) - 1, mmask = (1ull << st->mant_bits) - 1;
    uint64_t mants[6] = { 0, 1, 2, mmask, mmask - 1, 1ull << (st->mant_bits - 1) };
    for (uint64_t e = 0; e <= eall; e++)
        for (int i = 0; i < 6; i++)
            put_signed(s, (e << st->mant_bits) | mants[i], st->bits);
    put_signed(s, (eall << st->mant_bits) | 0x5, st->bits); /* signalling NaN with payload */
}

static void int_source_cases(sink *s, const mxp_dtype_traits *st, mxp_dtype dst)
{
    int bits = st->bits;
    uint64_t mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    int temin, temax, tm = target_precision(dst, &temin, &temax);
    (void)temin;
    (void)temax;
    int maxk = st->is_signed ? bits - 1 : bits;
    for (int k = 0; k < maxk; k++) {
        int d = tm >= 0 ? k - tm : 0;
        int kept = k + 1 - (d > 0 ? d : 0);
        uint64_t tmp[64];
        sink t = { tmp, 0, 64 };
        if (d > 0) {
            uint64_t half = 1ull << (d - 1), all = (1ull << d) - 1;
            uint64_t disc[6] = { 0, 1, half - 1, half, half + 1, all };
            uint64_t kv[3] = { 1ull << (kept - 1), (1ull << (kept - 1)) | 1, (1ull << kept) - 1 };
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 6; b++)
                    put(&t, (kv[a] << d) | disc[b]);
        } else {
            put(&t, 1ull << k);
            put(&t, (1ull << k) | 1);
            put(&t, (k == 63 ? UINT64_MAX : (1ull << (k + 1)) - 1));
        }
        for (size_t i = 0; i < t.n; i++) {
            put(s, tmp[i] & mask);
            if (st->is_signed)
                put(s, (0 - tmp[i]) & mask);
        }
    }
    uint64_t extremes[] = { 0, 1, mask, mask >> 1, (mask >> 1) + 1, (mask >> 1) - 1, 127, 128, 255, 256,
                            32767, 32768, 65535, 65536, 0x7fffffff, 0x80000000u, 0xffffffffu };
    for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++) {
        put(s, extremes[i] & mask);
        put(s, (0 - extremes[i]) & mask);
    }
}

size_t cases_build(mxp_dtype src, mxp_dtype dst, uint64_t *out, size_t cap, uint64_t seed,
                   size_t n_random)
{
    sink s = { out, 0, cap };
    const mxp_dtype_traits *st = mxp_dtype_get_traits(src);
    if (st->bits <= 16) {
        for (uint64_t v = 0; v < (1ull << st->bits); v++)
            put(&s, v);
        return s.n;
    }
    if (st->kind == MXP_KIND_FLOAT)
        float_source_cases(&s, st, dst);
    else
        int_source_cases(&s, st, dst);
    uint64_t state = seed, mask = st->bits == 64 ? UINT64_MAX : (1ull << st->bits) - 1;
    for (size_t i = 0; i < n_random; i++)
        put(&s, cases_rand64(&state) & mask);
    return s.n;
}
