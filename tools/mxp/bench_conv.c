/* mxp bench nn, second part: conv2d on ResNet-style shapes (GFLOP/s, both
 * layouts; python/benchmarks/goals.py holds them against torch), and
 * pooling and batch norm beside memcpy of their traffic (goal 0.8x). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct conv_row {
    const char *name;
    mxp_dtype dt;
    int64_t n, c, h, o, k, s, p, groups;
} conv_row;

static const conv_row convs[] = {
    { "1x64x56x56 3x3 64", MXP_F32, 1, 64, 56, 64, 3, 1, 1, 1 },
    { "1x256x14x14 3x3 256", MXP_F32, 1, 256, 14, 256, 3, 1, 1, 1 },
    { "1x3x224x224 7x7 s2 64", MXP_F32, 1, 3, 224, 64, 7, 2, 3, 1 },
    { "1x64x56x56 1x1 256", MXP_F32, 1, 64, 56, 256, 1, 1, 0, 1 },
    { "1x128x56x56 dw3x3", MXP_F32, 1, 128, 56, 128, 3, 1, 1, 128 },
    { "8x64x56x56 3x3 64", MXP_F32, 8, 64, 56, 64, 3, 1, 1, 1 },
    { "8x256x14x14 3x3 256", MXP_F32, 8, 256, 14, 256, 3, 1, 1, 1 },
    { "1x64x56x56 3x3 64", MXP_BF16, 1, 64, 56, 64, 3, 1, 1, 1 },
};
enum { NCONV = sizeof convs / sizeof convs[0] };

static int cmp_double(const void *p, const void *q)
{
    const double x = *(const double *)p, y = *(const double *)q;
    return x < y ? -1 : x > y;
}

typedef mxp_status run_fn(const void *ctx);

/* The median of reps runs of fn (after one warm run). */
static mxp_status median(run_fn *fn, const void *ctx, int reps, double *t)
{
    double ts[64];
    mxp_status st = fn(ctx);
    for (int r = 0; r < reps && st == MXP_OK; r++) {
        const double t0 = cli_now();
        st = fn(ctx);
        ts[r] = cli_now() - t0;
    }
    qsort(ts, (size_t)reps, sizeof ts[0], cmp_double);
    *t = ts[reps / 2];
    return st;
}

typedef struct conv_ctx {
    mxp_array *x, *w, *y;
    mxp_conv_opts o;
} conv_ctx;

static mxp_status run_conv(const void *p)
{
    const conv_ctx *c = p;
    return mxp_conv2d_into(c->y, c->x, c->w, NULL, &c->o);
}

static mxp_status bench_conv(const conv_row *r, bool nhwc, int reps, double *gflops)
{
    conv_ctx c = { .o = { .layout = nhwc ? MXP_NHWC : MXP_NCHW, .stride = { r->s, r->s },
                          .padding = { r->p, r->p }, .groups = r->groups } };
    const int64_t cg = r->c / r->groups, oh = (r->h + 2 * r->p - r->k) / r->s + 1;
    const int64_t xs[4] = { r->n, nhwc ? r->h : r->c, r->h, nhwc ? r->c : r->h };
    const int64_t ws[4] = { r->o, nhwc ? r->k : cg, r->k, nhwc ? cg : r->k };
    mxp_status st = mxp_array_random_normal(&c.x, r->dt, 4, xs, 0, 1, 1);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&c.w, r->dt, 4, ws, 0, 0.1, 2);
    if (st == MXP_OK)
        st = mxp_conv2d(&c.y, c.x, c.w, NULL, &c.o, 0);
    double t = 1;
    if (st == MXP_OK)
        st = median(run_conv, &c, reps, &t);
    *gflops = 2.0 * (double)(r->n * r->o * oh * oh * cg * r->k * r->k) / t / 1e9;
    mxp_array_free(c.x);
    mxp_array_free(c.w);
    mxp_array_free(c.y);
    return st;
}

/* ---- pooling and batch norm -------------------------------------------------- */

enum { OP_MAXPOOL, OP_AVGPOOL, OP_GLOBAL, OP_BN_TRAIN, OP_BN_INFER, NPOOL };
static const char *const pool_names[NPOOL] = { "max_pool 3x3 s2", "avg_pool 2x2 s2", "global avg_pool",
                                               "batch_norm train", "batch_norm infer" };

typedef struct pool_ctx {
    int op;
    mxp_array *x, *y, *rm, *rv, *w;
    mxp_pool_opts o;
} pool_ctx;

static mxp_status run_pool(const void *p)
{
    const pool_ctx *c = p;
    switch (c->op) {
    case OP_MAXPOOL: return mxp_max_pool2d_into(c->y, c->x, &c->o);
    case OP_AVGPOOL:
    case OP_GLOBAL: return mxp_avg_pool2d_into(c->y, c->x, &c->o);
    default:
        return mxp_batch_norm_into(c->y, c->x, 1, c->rm, c->rv, c->w, c->w, c->op == OP_BN_TRAIN, 0.1, 1e-5);
    }
}

static mxp_status run_memcpy(const void *p)
{
    void *const *b = p;
    memcpy(b[0], b[1], (size_t)b[2]);
    return MXP_OK;
}

/* GB/s of op on 8 x 64 x 56 x 56 float32 (NCHW) and of memcpy of the same traffic. */
static mxp_status bench_pool(int op, int reps, double *gbps, double *copy_gbps)
{
    pool_ctx c = { .op = op };
    const int64_t xs[4] = { 8, 64, 56, 56 }, c64 = 64;
    if (op == OP_MAXPOOL)
        c.o = (mxp_pool_opts){ .kernel = { 3, 3 }, .stride = { 2, 2 }, .padding = { 1, 1 } };
    else if (op == OP_AVGPOOL)
        c.o = (mxp_pool_opts){ .kernel = { 2, 2 } };
    mxp_status st = mxp_array_random_normal(&c.x, MXP_F32, 4, xs, 0, 1, 1);
    if (st == MXP_OK)
        st = mxp_array_zeros(&c.rm, MXP_F32, 1, &c64);
    if (st == MXP_OK)
        st = mxp_array_ones(&c.rv, MXP_F32, 1, &c64);
    if (st == MXP_OK)
        st = mxp_array_ones(&c.w, MXP_F32, 1, &c64);
    if (st == MXP_OK)
        st = op >= OP_BN_TRAIN ? mxp_array_empty(&c.y, MXP_F32, 4, xs) : mxp_avg_pool2d(&c.y, c.x, &c.o, 0);
    double t = 1, tc = 1;
    const size_t bytes = st == MXP_OK ? (size_t)(mxp_array_size(c.x) + mxp_array_size(c.y)) * 4 : 0;
    void *m1 = cli_alloc(bytes / 2 + 1), *m2 = cli_alloc(bytes / 2 + 1);
    if (st == MXP_OK && (!m1 || !m2))
        st = MXP_ERR_NO_MEMORY;
    if (st == MXP_OK) {
        memset(m1, 1, bytes / 2);
        memset(m2, 2, bytes / 2);
        st = median(run_pool, &c, reps, &t);
    }
    void *const args[3] = { m2, m1, (void *)(bytes / 2) };
    if (st == MXP_OK)
        st = median(run_memcpy, args, reps, &tc);
    *gbps = (double)bytes / t / 1e9;
    *copy_gbps = (double)bytes / tc / 1e9;
    free(m1);
    free(m2);
    mxp_array *all[5] = { c.x, c.y, c.rm, c.rv, c.w };
    for (int i = 0; i < 5; i++)
        mxp_array_free(all[i]);
    return st;
}

mxp_status cli_bench_nn_conv(int reps, bool json)
{
    if (json)
        cli_json_array("conv2d");
    else
        printf("\n# conv2d, median of %d runs, one call each (mxp's threads: MXP_NUM_THREADS); GFLOP/s counts the\n"
               "# direct products, 2 N O C KH KW OH OW: float32 3x3 stride 1 runs Winograd F(2x2, 3x3), 2.25x fewer\n"
               "%-9s %-22s %6s %8s\n",
               reps, "dtype", "shape (NxCxHxW kxk O)", "layout", "GFLOP/s");
    mxp_status st = MXP_OK;
    for (int i = 0; i < NCONV && st == MXP_OK; i++)
        for (int nhwc = 0; nhwc < 2 && st == MXP_OK; nhwc++) {
            double g = 0;
            st = bench_conv(&convs[i], nhwc, reps, &g);
            if (st != MXP_OK)
                break;
            if (json) {
                cli_json_object(NULL);
                cli_json_str("dtype", mxp_dtype_name(convs[i].dt));
                cli_json_str("shape", convs[i].name);
                cli_json_str("layout", nhwc ? "NHWC" : "NCHW");
                cli_json_num("gflops", g);
                cli_json_close();
            } else {
                printf("%-9s %-22s %6s %8.1f\n", mxp_dtype_name(convs[i].dt), convs[i].name, nhwc ? "NHWC" : "NCHW",
                       g);
            }
        }
    if (json) {
        cli_json_close();
        cli_json_array("pool_bn");
    } else {
        printf("\n# pooling, batch norm: float32 8x64x56x56 NCHW; GB/s = (bytes read + written) / time; goal 0.8x "
               "memcpy\n%-18s %9s %11s %10s %s\n", "op", "mxp GB/s", "memcpy GB/s", "mxp/memcpy", "goal");
    }
    for (int op = 0; op < NPOOL && st == MXP_OK; op++) {
        double g = 0, gc = 1;
        st = bench_pool(op, reps, &g, &gc);
        if (st != MXP_OK)
            break;
        if (json) {
            cli_json_object(NULL);
            cli_json_str("op", pool_names[op]);
            cli_json_num("mxp_gbps", g);
            cli_json_num("memcpy_gbps", gc);
            cli_json_num("mxp_over_memcpy", g / gc);
            cli_json_bool("holds", g / gc >= 0.8);
            cli_json_close();
        } else {
            printf("%-18s %9.2f %11.2f %10.2f %s\n", pool_names[op], g, gc, g / gc,
                   g / gc >= 0.8 ? "holds" : "falls short");
        }
    }
    if (json)
        cli_json_close();
    return st;
}
