/* mxp train: the digits data set (data/digits/, see its README) — loading,
 * checking, scaling to [0, 1] and a seeded train/test split. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

#ifndef MXP_DIGITS_SOURCE_DIR
#define MXP_DIGITS_SOURCE_DIR ""
#endif
#ifndef MXP_DIGITS_INSTALL_DIR
#define MXP_DIGITS_INSTALL_DIR ""
#endif

static int has_files(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/digits_x.npy", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fclose(f);
    return 1;
}

const char *digits_find_dir(void)
{
    static const char *const dirs[] = { "data/digits", MXP_DIGITS_SOURCE_DIR, MXP_DIGITS_INSTALL_DIR };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (dirs[i][0] && has_files(dirs[i]))
            return dirs[i];
    }
    return NULL;
}

static uint64_t next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- numpy.random.default_rng(seed).permutation(n), bit for bit ----------
 * NumPy's Generator: PCG64 (a 128-bit LCG with the XSL-RR output) seeded
 * through SeedSequence, and Generator.shuffle's Fisher-Yates whose bounded
 * draws take the low bits under a mask, rejecting values above the bound
 * (32-bit draws from halves of the 64-bit outputs, low half first).  Only
 * for the CNN's split: mxp.models.cnn.split() is this with seed 2026. */

typedef struct u128 {
    uint64_t hi, lo;
} u128;

static uint64_t mul_hi64(uint64_t a, uint64_t b)
{
    const uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    const uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    const uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* a * b + c modulo 2^128 */
static u128 mul_add128(u128 a, u128 b, u128 c)
{
    u128 r = { mul_hi64(a.lo, b.lo) + a.lo * b.hi + a.hi * b.lo, a.lo * b.lo };
    r.lo += c.lo;
    r.hi += c.hi + (r.lo < c.lo);
    return r;
}

typedef struct pcg64 {
    u128 state, inc;
    uint32_t half;
    bool has_half;
} pcg64;

static const u128 pcg_mult = { 2549297995355413924ull, 4865540595714422341ull };

static uint64_t pcg_next64(pcg64 *g)
{
    g->state = mul_add128(g->state, pcg_mult, g->inc);
    const uint64_t x = g->state.hi ^ g->state.lo;
    const unsigned rot = (unsigned)(g->state.hi >> 58);
    return (x >> rot) | (x << ((64u - rot) & 63u));
}

static uint32_t pcg_next32(pcg64 *g)
{
    if (g->has_half) {
        g->has_half = false;
        return g->half;
    }
    const uint64_t v = pcg_next64(g);
    g->half = (uint32_t)(v >> 32);
    g->has_half = true;
    return (uint32_t)v;
}

static uint32_t hashmix(uint32_t v, uint32_t *hash)
{
    v ^= *hash;
    *hash *= 0x931e8875u;
    v *= *hash;
    return v ^ (v >> 16);
}

/* SeedSequence(seed).generate_state(4, uint64) into PCG64's seed: a pool of
 * four 32-bit words hashed from the entropy, then hashed out again. */
static void pcg_seed(pcg64 *g, uint32_t seed)
{
    uint32_t pool[4], hash = 0x43b0d7e5u, w[8];
    for (int i = 0; i < 4; i++)
        pool[i] = hashmix(i == 0 ? seed : 0, &hash);
    for (int src = 0; src < 4; src++) {
        for (int dst = 0; dst < 4; dst++) {
            if (src != dst) {
                const uint32_t r = 0xca01f9ddu * pool[dst] - 0x4973f715u * hashmix(pool[src], &hash);
                pool[dst] = r ^ (r >> 16);
            }
        }
    }
    uint32_t hb = 0x8b51f9ddu;
    for (int i = 0; i < 8; i++) {
        uint32_t v = pool[i % 4] ^ hb;
        hb *= 0x58f38dedu;
        v *= hb;
        w[i] = v ^ (v >> 16);
    }
    uint64_t u[4];
    for (int i = 0; i < 4; i++)
        u[i] = (uint64_t)w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
    /* pcg64_set_seed: state 0, inc = 2 seq + 1, step, state += initstate, step */
    const u128 zero = { 0, 0 }, one = { 0, 1 };
    memset(g, 0, sizeof *g);
    g->inc = (u128){ u[2] << 1 | u[3] >> 63, u[3] << 1 | 1u };
    g->state = mul_add128(zero, pcg_mult, g->inc);
    g->state = mul_add128(g->state, one, (u128){ u[0], u[1] });
    g->state = mul_add128(g->state, pcg_mult, g->inc);
}

/* random_interval: a uniform integer in [0, max] for max < 2^32 (NumPy
 * takes 64-bit draws above, for permutations of 2^32 rows and more). */
static uint32_t pcg_interval(pcg64 *g, uint32_t max)
{
    uint32_t mask = max, v;
    for (unsigned sh = 1; sh < 32; sh <<= 1)
        mask |= mask >> sh;
    while ((v = pcg_next32(g) & mask) > max) {
    }
    return v;
}

void numpy_permutation(int64_t *order, int64_t n, uint32_t seed)
{
    pcg64 g;
    pcg_seed(&g, seed);
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = (int64_t)pcg_interval(&g, (uint32_t)i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* name holds a C-ordered uint8 array of ndim dimensions. */
static mxp_status check_array(const mxp_array *a, const char *name, int ndim, char *err, size_t err_size)
{
    if (mxp_array_dtype(a) == MXP_U8 && mxp_array_ndim(a) == ndim && (mxp_array_flags(a) & MXP_ARRAY_C_CONTIGUOUS))
        return MXP_OK;
    char shape[96] = "(";
    size_t len = 1;
    for (int i = 0; i < mxp_array_ndim(a) && len < sizeof shape - 24; i++)
        len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld", i ? ", " : "",
                                (long long)mxp_array_shape(a)[i]);
    snprintf(shape + len, sizeof shape - len, "%s)", mxp_array_ndim(a) == 1 ? "," : "");
    snprintf(err, err_size, "%s holds %s %s%s; expected a C-ordered uint8 array of %d dimension%s", name,
             mxp_dtype_name(mxp_array_dtype(a)), shape,
             mxp_array_ndim(a) == ndim && mxp_array_dtype(a) == MXP_U8 ? " in Fortran order" : "", ndim,
             ndim == 1 ? "" : "s");
    return MXP_ERR_FORMAT;
}

static mxp_status load(mxp_array **out, const char *dir, const char *file, int ndim, char *err, size_t err_size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    mxp_status st = mxp_npy_load(out, path);
    if (st != MXP_OK) {
        snprintf(err, err_size, "%s: %s", path, mxp_last_error());
        return st;
    }
    if ((st = check_array(*out, path, ndim, err, err_size)) != MXP_OK) {
        mxp_array_free(*out);
        *out = NULL;
    }
    return st;
}

/* Copies row src of x (uint8) into dst scaled by 1/16, and its label. */
static void take(const uint8_t *x, const uint8_t *y, int64_t f, int64_t src, float *dst, int32_t *label)
{
    for (int64_t j = 0; j < f; j++)
        dst[j] = (float)x[src * f + j] / 16.0f;
    *label = y[src];
}

/* The rows train[0..n_train) and test[0..n_test) of the pair into d. */
static mxp_status take_rows(digits *d, const mxp_array *xa, const mxp_array *ya, const int64_t *train,
                            const int64_t *test)
{
    const int64_t f = mxp_array_shape(xa)[1];
    d->features = f;
    d->classes = 10;
    d->x_train = malloc((size_t)(d->n_train * f) * sizeof(float));
    d->x_test = malloc((size_t)(d->n_test * f + 1) * sizeof(float));
    d->y_train = malloc((size_t)d->n_train * sizeof(int32_t));
    d->y_test = malloc((size_t)(d->n_test + 1) * sizeof(int32_t));
    d->test_rows = malloc((size_t)(d->n_test + 1) * sizeof(int64_t));
    if (!d->x_train || !d->x_test || !d->y_train || !d->y_test || !d->test_rows)
        return MXP_ERR_NO_MEMORY;
    const uint8_t *x = mxp_array_data(xa), *y = mxp_array_data(ya);
    for (int64_t i = 0; i < d->n_train; i++)
        take(x, y, f, train[i], d->x_train + i * f, &d->y_train[i]);
    for (int64_t i = 0; i < d->n_test; i++) {
        take(x, y, f, test[i], d->x_test + i * f, &d->y_test[i]);
        d->test_rows[i] = test[i];
    }
    return MXP_OK;
}

/* The MLP's split: a Fisher-Yates shuffle with seed, the last test_share of it held out. */
static mxp_status split(digits *d, const mxp_array *xa, const mxp_array *ya, double test_share, uint64_t seed)
{
    const int64_t n = mxp_array_shape(xa)[0];
    int64_t *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return MXP_ERR_NO_MEMORY;
    d->n_test = (int64_t)((double)n * test_share + 0.5);
    d->n_train = n - d->n_test;
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t state = seed;
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)(next(&state) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    const mxp_status st = take_rows(d, xa, ya, order, order + d->n_train);
    free(order);
    return st;
}

/* The CNN's split, mxp.models.cnn.split()'s rule: the first share of
 * NumPy's permutation held out, the rest for training in its order. */
static mxp_status split_numpy(digits *d, const mxp_array *xa, const mxp_array *ya)
{
    const int64_t n = mxp_array_shape(xa)[0];
    int64_t *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return MXP_ERR_NO_MEMORY;
    numpy_permutation(order, n, CNN_SPLIT_SEED);
    d->n_test = (n * CNN_HELD_OUT + CNN_DIGITS / 2) / CNN_DIGITS;
    d->n_train = n - d->n_test;
    const mxp_status st = take_rows(d, xa, ya, order + d->n_test, order);
    free(order);
    return st;
}

/* The rules of train.h on the two arrays; dir names them in messages. */
static mxp_status check_pair(const mxp_array *xa, const mxp_array *ya, const char *dir, char *err, size_t err_size)
{
    const int64_t n = mxp_array_shape(xa)[0], f = mxp_array_shape(xa)[1], ny = mxp_array_shape(ya)[0];
    if (f < 1 || f > DIGITS_MAX_FEATURES) {
        snprintf(err, err_size, "%s/digits_x.npy has %lld columns; an image needs 1..%d values (the digits have 64)",
                 dir, (long long)f, DIGITS_MAX_FEATURES);
        return MXP_ERR_FORMAT;
    }
    if (n < DIGITS_MIN_ROWS) {
        snprintf(err, err_size, "%s/digits_x.npy has %lld rows; mxp train needs at least %d (a fifth are held out "
                 "for testing)", dir, (long long)n, DIGITS_MIN_ROWS);
        return MXP_ERR_FORMAT;
    }
    if (ny != n) {
        snprintf(err, err_size, "%s: digits_x.npy has %lld rows but digits_y.npy %lld labels; they must agree", dir,
                 (long long)n, (long long)ny);
        return MXP_ERR_FORMAT;
    }
    const uint8_t *y = mxp_array_data(ya), *x = mxp_array_data(xa);
    for (int64_t i = 0; i < n; i++) {
        if (y[i] > 9) {
            snprintf(err, err_size, "%s/digits_y.npy: label %u in row %lld; labels must be 0..9", dir, y[i],
                     (long long)i);
            return MXP_ERR_FORMAT;
        }
    }
    for (int64_t i = 0; i < n * f; i++) {
        if (x[i] > 16) {
            snprintf(err, err_size, "%s/digits_x.npy: %u in row %lld, column %lld; gray levels must be 0..16", dir,
                     x[i], (long long)(i / f), (long long)(i % f));
            return MXP_ERR_FORMAT;
        }
    }
    return MXP_OK;
}

/* Checks, splits (numpy_split: the CNN's split, else the MLP's) and frees the
 * pair (either may be NULL after a failed load). */
static mxp_status finish_load(digits *d, mxp_status st, mxp_array *xa, mxp_array *ya, const char *dir, bool numpy_split,
                              double test_share, uint64_t seed, char *err, size_t err_size)
{
    if (st == MXP_OK)
        st = check_pair(xa, ya, dir, err, err_size);
    if (st == MXP_OK && numpy_split && mxp_array_shape(xa)[1] != CNN_PIXELS) {
        snprintf(err, err_size, "%s/digits_x.npy has %lld columns; the CNN reads 8x8 images (%d columns)", dir,
                 (long long)mxp_array_shape(xa)[1], CNN_PIXELS);
        st = MXP_ERR_FORMAT;
    }
    if (st == MXP_OK && (st = numpy_split ? split_numpy(d, xa, ya) : split(d, xa, ya, test_share, seed)) != MXP_OK)
        snprintf(err, err_size, "out of memory");
    mxp_array_free(xa);
    mxp_array_free(ya);
    if (st != MXP_OK)
        digits_free(d);
    return st;
}

static mxp_status load_dir(digits *d, const char *dir, bool numpy_split, double test_share, uint64_t seed, char *err,
                           size_t err_size)
{
    memset(d, 0, sizeof *d);
    mxp_array *xa = NULL, *ya = NULL;
    mxp_status st = load(&xa, dir, "digits_x.npy", 2, err, err_size);
    if (st == MXP_OK)
        st = load(&ya, dir, "digits_y.npy", 1, err, err_size);
    return finish_load(d, st, xa, ya, dir, numpy_split, test_share, seed, err, err_size);
}

mxp_status digits_load(digits *d, const char *dir, double test_share, uint64_t seed, char *err, size_t err_size)
{
    return load_dir(d, dir, false, test_share, seed, err, err_size);
}

mxp_status digits_load_cnn(digits *d, const char *dir, char *err, size_t err_size)
{
    return load_dir(d, dir, true, 0.0, 0, err, err_size);
}

mxp_status digits_load_buffers(digits *d, const void *x, size_t x_size, const void *y, size_t y_size,
                               double test_share, uint64_t seed, char *err, size_t err_size)
{
    memset(d, 0, sizeof *d);
    mxp_array *xa = NULL, *ya = NULL;
    mxp_status st = mxp_npy_load_buffer(&xa, x, x_size);
    if (st != MXP_OK)
        snprintf(err, err_size, "(buffer)/digits_x.npy: %s", mxp_last_error());
    else
        st = check_array(xa, "(buffer)/digits_x.npy", 2, err, err_size);
    if (st == MXP_OK && (st = mxp_npy_load_buffer(&ya, y, y_size)) != MXP_OK)
        snprintf(err, err_size, "(buffer)/digits_y.npy: %s", mxp_last_error());
    else if (st == MXP_OK)
        st = check_array(ya, "(buffer)/digits_y.npy", 1, err, err_size);
    return finish_load(d, st, xa, ya, "(buffer)", false, test_share, seed, err, err_size);
}

void digits_free(digits *d)
{
    free(d->x_train);
    free(d->x_test);
    free(d->y_train);
    free(d->y_test);
    free(d->test_rows);
    memset(d, 0, sizeof *d);
}
