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

static mxp_status split(digits *d, const mxp_array *xa, const mxp_array *ya, double test_share, uint64_t seed)
{
    const int64_t n = mxp_array_shape(xa)[0], f = mxp_array_shape(xa)[1];
    int64_t *order = malloc((size_t)n * sizeof *order);
    d->features = f;
    d->classes = 10;
    d->n_test = (int64_t)((double)n * test_share + 0.5);
    d->n_train = n - d->n_test;
    d->x_train = malloc((size_t)(d->n_train * f) * sizeof(float));
    d->x_test = malloc((size_t)(d->n_test * f + 1) * sizeof(float));
    d->y_train = malloc((size_t)d->n_train * sizeof(int32_t));
    d->y_test = malloc((size_t)(d->n_test + 1) * sizeof(int32_t));
    if (!order || !d->x_train || !d->x_test || !d->y_train || !d->y_test) {
        free(order);
        return MXP_ERR_NO_MEMORY;
    }
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t state = seed;
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)(next(&state) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    const uint8_t *x = mxp_array_data(xa), *y = mxp_array_data(ya);
    for (int64_t i = 0; i < d->n_train; i++)
        take(x, y, f, order[i], d->x_train + i * f, &d->y_train[i]);
    for (int64_t i = 0; i < d->n_test; i++)
        take(x, y, f, order[d->n_train + i], d->x_test + i * f, &d->y_test[i]);
    free(order);
    return MXP_OK;
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

/* Checks, splits and frees the pair (either may be NULL after a failed load). */
static mxp_status finish_load(digits *d, mxp_status st, mxp_array *xa, mxp_array *ya, const char *dir,
                              double test_share, uint64_t seed, char *err, size_t err_size)
{
    if (st == MXP_OK)
        st = check_pair(xa, ya, dir, err, err_size);
    if (st == MXP_OK && (st = split(d, xa, ya, test_share, seed)) != MXP_OK)
        snprintf(err, err_size, "out of memory");
    mxp_array_free(xa);
    mxp_array_free(ya);
    if (st != MXP_OK)
        digits_free(d);
    return st;
}

mxp_status digits_load(digits *d, const char *dir, double test_share, uint64_t seed, char *err, size_t err_size)
{
    memset(d, 0, sizeof *d);
    mxp_array *xa = NULL, *ya = NULL;
    mxp_status st = load(&xa, dir, "digits_x.npy", 2, err, err_size);
    if (st == MXP_OK)
        st = load(&ya, dir, "digits_y.npy", 1, err, err_size);
    return finish_load(d, st, xa, ya, dir, test_share, seed, err, err_size);
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
    return finish_load(d, st, xa, ya, "(buffer)", test_share, seed, err, err_size);
}

void digits_free(digits *d)
{
    free(d->x_train);
    free(d->x_test);
    free(d->y_train);
    free(d->y_test);
    memset(d, 0, sizeof *d);
}
