/* Precision verification of plugin operators: each kernel signature
 * against a float64 reference rounded once to the kernel's output dtype,
 * distances in units in the last place of that dtype. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/rng.h"
#include "plugin/plugin-internal.h"

enum { DEFAULT_SAMPLES = 1000000, EXHAUSTIVE_MAX = 1 << 24, ROW = 256, RUNS = 3 };

/* ---- distances -------------------------------------------------------- */

static uint64_t raw_bits(const void *p, size_t i, size_t size)
{
    const unsigned char *b = (const unsigned char *)p + i * size;
    uint64_t v = 0;
    memcpy(&v, b, size); /* little-endian hosts: the low bytes */
    return v;
}

/* A float's position on the line of representable values: consecutive
 * values differ by 1, -0 and +0 share 0. */
static int64_t float_key(uint64_t bits, const mxp_dtype_traits *t)
{
    if (!t->is_signed)
        return (int64_t)bits;
    const uint64_t sign = 1ull << (t->bits - 1);
    const int64_t mag = (int64_t)(bits & (sign - 1));
    return (bits & sign) ? -mag : mag;
}

static int bin_of(double d)
{
    if (d <= 2)
        return (int)d;
    int b = 3;
    for (double hi = 4; d > hi && b < MXP_OP_CHECK_BINS - 1; hi *= 2)
        b++;
    return b;
}

mxp_status mxp_op_check_compare(const void *got, const void *want, mxp_dtype t, size_t n, mxp_op_check_report *report)
{
    MXP_ABI_OUT(report, op_check_report, "mxp_op_check_compare");
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    if (!tr)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "mxp_op_check_compare: %d is not a dtype", (int)t);
    if (n && (!got || !want))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_check_compare: got or want is NULL");
    mxp_op_check_report r = { 0 };
    enum { CHUNK = 4096 };
    double g[CHUNK], w[CHUNK], sum = 0;
    uint64_t finite = 0;
    for (size_t s = 0; s < n; s += CHUNK) {
        const size_t m = n - s < CHUNK ? n - s : CHUNK;
        mxp_convert(g, MXP_F64, (const char *)got + s * tr->itemsize, t, m, NULL);
        mxp_convert(w, MXP_F64, (const char *)want + s * tr->itemsize, t, m, NULL);
        for (size_t i = 0; i < m; i++) {
            double d;
            if (isnan(g[i]) || isnan(w[i])) {
                r.nan_mismatch += isnan(g[i]) != isnan(w[i]);
                continue;
            }
            if (isinf(g[i]) || isinf(w[i])) {
                r.inf_mismatch += g[i] != w[i];
                continue;
            }
            if (tr->kind == MXP_KIND_FLOAT)
                d = fabs((double)(float_key(raw_bits(got, s + i, tr->itemsize), tr) -
                                  float_key(raw_bits(want, s + i, tr->itemsize), tr)));
            else
                d = fabs(g[i] - w[i]);
            r.histogram[bin_of(d)]++;
            sum += d;
            finite++;
            if (d > r.max_ulp || (finite == 1 && d == 0)) {
                r.max_ulp = d;
                r.worst_index = s + i;
                r.worst_got = g[i];
                r.worst_want = w[i];
            }
        }
    }
    r.count = n;
    r.mean_ulp = finite ? sum / (double)finite : 0;
    mxp_abi_out(report, &r, report_abi_n_, &mxp_abi_op_check_report);
    return MXP_OK;
}

/* ---- inputs ----------------------------------------------------------- */

static const double edges[] = { 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 0.1, -0.1, 10.0, -10.0,
                                1e-3, -1e-3, 100.0, -100.0, 1e30, -1e30, 1e-30, -1e-30, INFINITY, -INFINITY, NAN };
enum { N_EDGES = sizeof edges / sizeof edges[0] };

/* An ordinary random value: sign * 2^u, u uniform in [-lo_exp, hi_exp]. */
static double ordinary(uint64_t r, double lo_exp, double hi_exp)
{
    double u = (double)(r >> 11) * 0x1p-53;
    double v = exp2(-lo_exp + u * (lo_exp + hi_exp));
    return (r & 1) ? -v : v;
}

/* Element i of input `which` for a random (non-exhaustive) sample: edge
 * combinations first, then half random bit patterns, half ordinary values. */
static void random_input(void *dst, mxp_dtype t, size_t n, int which, int n_in, uint64_t seed, bool raw_ok)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    size_t combos = 1;
    for (int i = 0; i < n_in && combos <= n / 4; i++)
        combos *= N_EDGES;
    combos = combos <= n / 4 ? combos : 0;
    size_t stride = 1;
    for (int i = 0; i < which; i++)
        stride *= N_EDGES;
    double v[1024];
    for (size_t s = 0; s < n; s += 1024) {
        const size_t m = n - s < 1024 ? n - s : 1024;
        for (size_t i = 0; i < m; i++) {
            const size_t at = s + i;
            const uint64_t r = mxp_splitmix64(seed ^ mxp_splitmix64(((uint64_t)which << 56) ^ at));
            if (at < combos)
                v[i] = edges[(at / stride) % N_EDGES];
            else if (raw_ok && tr->kind == MXP_KIND_FLOAT && (r >> 63))
                v[i] = NAN; /* marked: filled with raw bits below */
            else
                v[i] = ordinary(r, 10, 10);
        }
        mxp_convert_opts sat = { .overflow = MXP_OVERFLOW_SATURATE };
        char *d = (char *)dst + s * tr->itemsize;
        mxp_convert(d, t, v, MXP_F64, m, tr->kind == MXP_KIND_FLOAT ? NULL : &sat);
        for (size_t i = 0; raw_ok && tr->kind == MXP_KIND_FLOAT && i < m; i++) {
            const size_t at = s + i;
            const uint64_t r = mxp_splitmix64(seed ^ mxp_splitmix64(((uint64_t)which << 56) ^ at));
            if (at >= combos && (r >> 63)) {
                uint64_t bits = mxp_splitmix64(r) & (tr->bits == 64 ? ~0ull : (1ull << tr->bits) - 1);
                memcpy(d + i * tr->itemsize, &bits, tr->itemsize);
            }
        }
    }
}

/* Every combination of every input's patterns: input i's pattern is digit
 * i of the index in base 2^bits(i) (floats: raw codes; integers: values). */
static void exhaustive_input(void *dst, mxp_dtype t, size_t n, int which, const mxp_dtype *types)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    uint64_t div = 1;
    for (int i = 0; i < which; i++)
        div <<= mxp_dtype_get_traits(types[i])->bits;
    const uint64_t count = 1ull << tr->bits;
    for (size_t i = 0; i < n; i++) {
        uint64_t code = (i / div) % count;
        char *d = (char *)dst + i * tr->itemsize;
        if (tr->kind == MXP_KIND_FLOAT) {
            memcpy(d, &code, tr->itemsize);
        } else {
            double v = tr->is_signed ? (double)code - (double)(count / 2) : (double)code;
            mxp_convert(d, t, &v, MXP_F64, 1, NULL);
        }
    }
}

/* ---- one signature ---------------------------------------------------- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double median3(double *t)
{
    double a = t[0], b = t[1], c = t[2];
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* The reference: the plugin's float64 kernel, or a built-in function of
 * mxp's elementwise operations (named). */
typedef struct reference {
    const mxp_op_entry *e;
    int unary, binary; /* the built-in's op, or -1 */
} reference;

static mxp_status pick_reference(const mxp_op_entry *e, const char *name, reference *ref)
{
    *ref = (reference){ .e = e, .unary = -1, .binary = -1 };
    if (!name) {
        if (!e->reference.elementwise)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                             "operator '%s' has no float64 reference: name a built-in function to compare with",
                             e->name);
        return MXP_OK;
    }
    if (e->kind != MXP_OP_ELEMENTWISE || e->n_inputs > 2)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s' is not elementwise with 1 or 2 inputs: only its "
                                                   "plugin's reference can check it, not the built-in '%s'", e->name, name);
    for (int op = 0; e->n_inputs == 1 && op < MXP_UNARY_OP_COUNT; op++)
        if (!strcmp(mxp_unary_op_name((mxp_unary_op)op), name))
            ref->unary = op;
    for (int op = 0; e->n_inputs == 2 && op < MXP_BINARY_OP_COUNT; op++)
        if (!strcmp(mxp_binary_op_name((mxp_binary_op)op), name))
            ref->binary = op;
    if (ref->unary < 0 && ref->binary < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "'%s' is not a built-in %s function (mxp_%s_op_name)", name,
                         e->n_inputs == 1 ? "unary" : "binary", e->n_inputs == 1 ? "unary" : "binary");
    return MXP_OK;
}

/* Runs the reference on the float64 inputs x (shapes as the kernel's
 * inputs) into a new float64 array *want. */
static mxp_status run_reference(const reference *ref, mxp_array *const *x, int axis_rows, mxp_array **want)
{
    const mxp_op_entry *e = ref->e;
    if (ref->unary >= 0)
        return mxp_unary(want, (mxp_unary_op)ref->unary, x[0], NULL);
    if (ref->binary >= 0)
        return mxp_binary(want, (mxp_binary_op)ref->binary, x[0], x[1], NULL);
    const size_t n = (size_t)mxp_array_size(x[0]);
    mxp_status st;
    if (e->kind == MXP_OP_ELEMENTWISE) {
        if ((st = mxp_array_new_owner(want, MXP_F64, x[0]->ndim, x[0]->shape)) != MXP_OK)
            return st;
        const void *p[MXP_OP_MAX_INPUTS];
        for (int i = 0; i < e->n_inputs; i++)
            p[i] = x[i]->data;
        e->reference.elementwise((*want)->data, p, n, e->ctx);
        return MXP_OK;
    }
    if (e->kind == MXP_OP_REDUCTION) {
        int64_t rows = (int64_t)n / axis_rows;
        if ((st = mxp_array_new_owner(want, MXP_F64, 1, &rows)) != MXP_OK)
            return st;
        e->reference.reduce((*want)->data, x[0]->data, (size_t)rows, (size_t)axis_rows, e->ctx);
        return MXP_OK;
    }
    mxp_op_tensor t[MXP_OP_MAX_INPUTS];
    for (int i = 0; i < e->n_inputs; i++)
        t[i] = (mxp_op_tensor){ .data = NULL, .dtype = MXP_F64, .ndim = x[i]->ndim, .shape = x[i]->shape };
    int ndim;
    int64_t shape[MXP_MAXDIMS];
    if (e->shape(&ndim, shape, t, e->n_inputs, e->ctx) != 0 || ndim < 0 || ndim > MXP_MAXDIMS)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s': its shape function refused float64 inputs", e->name);
    if ((st = mxp_array_new_owner(want, MXP_F64, ndim, shape)) != MXP_OK)
        return st;
    for (int i = 0; i < e->n_inputs; i++)
        t[i].data = x[i]->data;
    mxp_op_tensor o = { .data = (*want)->data, .dtype = MXP_F64, .ndim = ndim, .shape = (*want)->shape };
    mxp_plugin_error_clear();
    if (e->reference.general(&o, t, e->n_inputs, e->ctx) != 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s': its reference failed: %s", e->name,
                         mxp_plugin_error());
    return MXP_OK;
}

/* The inputs' shapes: general operators' check_shapes; reductions rows of
 * ROW; elementwise one axis of n. */
static int input_shapes(const mxp_op_entry *e, size_t n, int64_t shapes[][MXP_MAXDIMS], int *ndims)
{
    if (e->kind == MXP_OP_GENERAL) {
        const char *s = e->check_shapes;
        for (int i = 0; i < e->n_inputs; i++) {
            ndims[i] = 0;
            for (;;) {
                char *end;
                shapes[i][ndims[i]++] = strtoll(s, &end, 10);
                s = end;
                if (*s != 'x')
                    break;
                s++;
            }
            s += *s == ',';
        }
        return 0;
    }
    ndims[0] = e->kind == MXP_OP_REDUCTION ? 2 : 1;
    shapes[0][0] = e->kind == MXP_OP_REDUCTION ? (int64_t)(n / ROW) : (int64_t)n;
    shapes[0][1] = ROW;
    for (int i = 1; i < e->n_inputs; i++) {
        ndims[i] = ndims[0];
        memcpy(shapes[i], shapes[0], sizeof shapes[0]);
    }
    return 0;
}

static mxp_status check_one(const mxp_op_entry *e, const mxp_op_kernel_entry *k, const reference *ref,
                            const mxp_op_check_opts *o, mxp_op_check_report *rep)
{
    uint64_t patterns = 1;
    bool small = e->kind == MXP_OP_ELEMENTWISE;
    for (int i = 0; i < e->n_inputs && small; i++) {
        const int bits = mxp_dtype_get_traits(k->in[i])->bits;
        small = bits <= 16 && (patterns <<= bits) <= EXHAUSTIVE_MAX;
    }
    size_t n = small ? (size_t)patterns : (size_t)(o->samples ? o->samples : DEFAULT_SAMPLES);
    if (e->kind == MXP_OP_REDUCTION)
        n = n / ROW ? n / ROW * ROW : ROW;
    int64_t shapes[MXP_OP_MAX_INPUTS][MXP_MAXDIMS];
    int ndims[MXP_OP_MAX_INPUTS];
    input_shapes(e, n, shapes, ndims);
    mxp_array *in[MXP_OP_MAX_INPUTS] = { 0 }, *x[MXP_OP_MAX_INPUTS] = { 0 }, *got = NULL, *want64 = NULL,
              *want = NULL;
    mxp_status st = MXP_OK;
    for (int i = 0; i < e->n_inputs && st == MXP_OK; i++) {
        if ((st = mxp_array_new_owner(&in[i], k->in[i], ndims[i], shapes[i])) != MXP_OK)
            break;
        const size_t m = (size_t)mxp_array_size(in[i]);
        if (small)
            exhaustive_input(in[i]->data, k->in[i], m, i, k->in);
        else
            random_input(in[i]->data, k->in[i], m, i, e->n_inputs, o->seed, e->kind == MXP_OP_ELEMENTWISE);
        st = mxp_array_astype(&x[i], in[i], MXP_F64, NULL);
    }
    double tk[RUNS], tr[RUNS];
    mxp_op_call_opts call = { .signature = k->signature };
    for (int r = 0; r < RUNS && st == MXP_OK; r++) {
        mxp_array_free(got);
        double t0 = now_ns();
        st = mxp_op_call(&got, e->name, (const mxp_array *const *)in, e->n_inputs, &call);
        tk[r] = now_ns() - t0;
    }
    for (int r = 0; r < RUNS && st == MXP_OK; r++) {
        mxp_array_free(want64);
        double t0 = now_ns();
        st = run_reference(ref, x, ROW, &want64);
        tr[r] = now_ns() - t0;
    }
    if (st == MXP_OK && mxp_array_size(want64) != mxp_array_size(got))
        st = mxp_error(MXP_ERR_SHAPE, "operator '%s': the reference gave %lld elements, the kernel %lld", e->name,
                       (long long)mxp_array_size(want64), (long long)mxp_array_size(got));
    if (st == MXP_OK)
        st = mxp_array_astype(&want, want64, k->out, NULL);
    if (st == MXP_OK)
        st = mxp_op_check_compare(got->data, want->data, k->out, (size_t)mxp_array_size(got), rep);
    if (st == MXP_OK) {
        snprintf(rep->signature, sizeof rep->signature, "%s", k->signature);
        rep->isa = k->isa;
        rep->exhaustive = small;
        const size_t m = (size_t)mxp_array_size(in[0]);
        rep->kernel_ns = median3(tk) / (double)m;
        rep->reference_ns = median3(tr) / (double)m;
        for (int i = 0; i < e->n_inputs && e->kind == MXP_OP_ELEMENTWISE; i++)
            rep->worst_in[i] = ((const double *)x[i]->data)[rep->worst_index];
    }
    for (int i = 0; i < e->n_inputs; i++)
        mxp_array_free(in[i]), mxp_array_free(x[i]);
    mxp_array_free(got);
    mxp_array_free(want64);
    mxp_array_free(want);
    return st;
}

mxp_status mxp_op_check(const char *name, const mxp_op_check_opts *opts, mxp_op_check_report *reports, int cap,
                        int *n_reports)
{
    MXP_ABI_IN(opts, op_check_opts, "mxp_op_check");
    if (!n_reports || (cap > 0 && !reports) || cap < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_check: n_reports is NULL, or reports is NULL with cap %d",
                         cap);
    MXP_ABI_OUT_ARRAY(reports, (size_t)cap, op_check_report, "mxp_op_check");
    *n_reports = 0;
    const mxp_op_check_opts o = opts ? *opts : (mxp_op_check_opts){ 0 };
    const mxp_op_entry *e;
    mxp_status st = mxp_op_find(name, &e);
    reference ref;
    if (st == MXP_OK)
        st = pick_reference(e, o.reference, &ref);
    if (st == MXP_OK && e->kind == MXP_OP_GENERAL && !e->check_shapes[0])
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s' declares no check_shapes: mxp cannot make its inputs",
                       e->name);
    char want_sig[96] = "";
    if (st == MXP_OK && o.signature) {
        mxp_dtype in[MXP_OP_MAX_INPUTS], out;
        st = mxp_op_parse_signature(o.signature, e->n_inputs, in, &out, want_sig, sizeof want_sig, e->name);
    }
    for (int i = 0; st == MXP_OK && i < e->n_kernels; i++) {
        const mxp_op_kernel_entry *k = &e->kernels[i];
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= !strcmp(e->kernels[j].signature, k->signature);
        if (seen || (want_sig[0] && strcmp(want_sig, k->signature)))
            continue;
        const mxp_op_kernel_entry *best;
        if (mxp_op_pick_kernel(e, k->in, e->n_inputs, k->signature, &best) != MXP_OK ||
            strcmp(best->signature, k->signature))
            continue; /* no kernel of this signature runs at this ISA level */
        if (*n_reports == cap)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_check: operator '%s' has more signatures than cap %d",
                             e->name, cap);
        mxp_op_check_report full = { 0 };
        st = check_one(e, best, &ref, &o, &full);
        if (st == MXP_OK) {
            mxp_abi_out((char *)reports + (size_t)*n_reports * reports_abi_stride_, &full, reports_abi_n_,
                        &mxp_abi_op_check_report);
            (*n_reports)++;
        }
    }
    if (st == MXP_OK && *n_reports == 0)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s': no kernel %s runs at ISA level %s", name,
                       o.signature ? o.signature : "of it", mxp_isa_name(mxp_get_isa()));
    return st;
}
