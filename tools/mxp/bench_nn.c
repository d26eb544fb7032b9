/* mxp bench nn — softmax, log_softmax, layer norm, RMS norm, L2
 * normalization and an embedding gather on rows of d elements, in float32
 * and bfloat16, beside memcpy of the same bytes: the operations' goal is
 * 0.8x memcpy of their traffic (issue 26), held or not per row.  Then
 * bench_conv.c's convolution, pooling and batch norm rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OP_SOFTMAX, OP_LOG_SOFTMAX, OP_LAYER_NORM, OP_RMS_NORM, OP_L2, OP_TAKE, OPS };
static const char *const op_names[OPS] = { "softmax", "log_softmax", "layer_norm", "rms_norm", "l2_normalize",
                                           "take" };
static const double goal = 0.8; /* of memcpy's GB/s */

typedef struct arrays {
    mxp_array *x, *y, *w, *b, *table, *idx;
} arrays;

static mxp_status run_op(int op, const arrays *a)
{
    switch (op) {
    case OP_SOFTMAX: return mxp_softmax_into(a->y, a->x, -1, NULL);
    case OP_LOG_SOFTMAX: return mxp_log_softmax_into(a->y, a->x, -1, NULL);
    case OP_LAYER_NORM: return mxp_layer_norm_into(a->y, a->x, 1, a->w, a->b, 1e-5);
    case OP_RMS_NORM: return mxp_rms_norm_into(a->y, a->x, 1, a->w, 1e-6);
    case OP_L2: return mxp_l2_normalize_into(a->y, a->x, -1, 1e-12);
    default: return mxp_take_into(a->y, a->table, a->idx, 0);
    }
}

static int cmp_double(const void *p, const void *q)
{
    const double x = *(const double *)p, y = *(const double *)q;
    return x < y ? -1 : x > y;
}

/* Medians of reps alternating runs of the operation and a memcpy of
 * copy_bytes (half the operation's traffic: both move the same total). */
static mxp_status measure(int op, const arrays *a, void *m1, void *m2, size_t copy_bytes, int reps, double *t_op,
                          double *t_copy)
{
    double tm[64], tc[64];
    mxp_status st = run_op(op, a); /* warm: pages, tables */
    for (int r = 0; r < reps && st == MXP_OK; r++) {
        double t0 = cli_now();
        st = run_op(op, a);
        tm[r] = cli_now() - t0;
        t0 = cli_now();
        memcpy(m2, m1, copy_bytes);
        tc[r] = cli_now() - t0;
    }
    if (st != MXP_OK)
        return st;
    qsort(tm, (size_t)reps, sizeof tm[0], cmp_double);
    qsort(tc, (size_t)reps, sizeof tc[0], cmp_double);
    *t_op = tm[reps / 2];
    *t_copy = tc[reps / 2];
    return MXP_OK;
}

static mxp_status make_arrays(arrays *a, mxp_dtype t, int64_t rows, int64_t d)
{
    memset(a, 0, sizeof *a);
    const int64_t shape[2] = { rows, d }, vocab[2] = { 30522, d };
    mxp_status st = mxp_array_random_normal(&a->x, t, 2, shape, 0, 3, 1);
    if (st == MXP_OK)
        st = mxp_array_empty(&a->y, t, 2, shape);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&a->w, t, 1, &d, 1, 0.1, 2);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&a->b, t, 1, &d, 0, 0.1, 3);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&a->table, t, 2, vocab, 0, 1, 4);
    if (st == MXP_OK) /* token ids: uniform over the vocabulary */
        st = mxp_array_random_uniform(&a->idx, MXP_S64, 1, &rows, 0, 30521, 5);
    return st;
}

static void free_arrays(arrays *a)
{
    mxp_array *all[6] = { a->x, a->y, a->w, a->b, a->table, a->idx };
    for (int i = 0; i < 6; i++)
        mxp_array_free(all[i]);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp bench nn [--n N] [--d D] [--reps R] [--json]\n\n"
               "Times the operations of mxp/nn.h on N elements (default 4M) in rows of D\n"
               "(default 384, MiniLM's width) in float32 and bfloat16, R runs (default 7,\n"
               "medians), each into an existing array, beside memcpy of the same bytes:\n"
               "  softmax, log_softmax, l2_normalize   along the rows\n"
               "  layer_norm, rms_norm                 over the rows, with weight (and bias)\n"
               "  take                                 N/D rows of a 30522 x D table\n"
               "GB/s counts bytes read + written (2 arrays); the goal is %.1fx memcpy.\n"
               "Then conv2d on ResNet-style shapes in both layouts (GFLOP/s), and max/avg\n"
               "pooling and batch norm on 8x64x56x56 float32 beside memcpy (the same goal).\n\n"
               "  --json   one JSON object: n, d, reps, goal and results, one object per\n"
               "           dtype and op: dtype, op, mxp_gbps, memcpy_gbps, mxp_over_memcpy, holds;\n"
               "           conv2d (dtype, shape, layout, gflops) and pool_bn (op and the above)\n",
               goal);
}

/* --d D, taken out of argv before the common options are parsed. */
static int take_d(int *argc, char **argv, int64_t *d)
{
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--d"))
            continue;
        char *end = NULL;
        const long long v = i + 1 < *argc ? strtoll(argv[i + 1], &end, 10) : 0;
        if (!end || *end || v < 1 || v > (1 << 24))
            return cli_usage_error("bench nn", "--d takes a row length from 1 to 16777216");
        *d = v;
        memmove(argv + i, argv + i + 2, (size_t)(*argc - i - 2) * sizeof *argv);
        *argc -= 2;
        return -1;
    }
    return -1;
}

int cli_bench_nn(int argc, char **argv)
{
    size_t n = 4u << 20;
    int64_t d = 384;
    int reps = 7;
    bool json = false;
    int parsed = take_d(&argc, argv, &d);
    if (parsed >= 0)
        return parsed;
    parsed = cli_parse_n_reps("bench nn", argc, argv, &n, &reps, &json, usage);
    if (parsed >= 0)
        return parsed;
    const int64_t rows = (int64_t)n / d > 0 ? (int64_t)n / d : 1;
    n = (size_t)(rows * d);
    void *m1 = cli_alloc(n * 4), *m2 = cli_alloc(n * 4);
    if (!m1 || !m2) {
        free(m1);
        free(m2);
        return cli_mxp_error("bench nn", "allocating the memcpy buffers", MXP_ERR_NO_MEMORY);
    }
    memset(m1, 1, n * 4);
    memset(m2, 2, n * 4);
    if (json) {
        cli_json_begin("bench nn");
        cli_json_int("n", (long long)n);
        cli_json_int("d", (long long)d);
        cli_json_int("reps", reps);
        cli_json_num("goal", goal);
        cli_json_array("results");
    } else {
        printf("# %lld rows of %lld, median of %d runs; GB/s = (bytes read + written) / time; goal %.1fx memcpy\n",
               (long long)rows, (long long)d, reps, goal);
        printf("%-9s %-13s %9s %11s %10s %s\n", "dtype", "op", "mxp GB/s", "memcpy GB/s", "mxp/memcpy", "goal");
    }
    const mxp_dtype types[2] = { MXP_F32, MXP_BF16 };
    mxp_status st = MXP_OK;
    for (int k = 0; k < 2 && st == MXP_OK; k++) {
        arrays a;
        st = make_arrays(&a, types[k], rows, (int64_t)d);
        const size_t bytes = 2 * n * mxp_dtype_itemsize(types[k]);
        for (int op = 0; op < OPS && st == MXP_OK; op++) {
            double t_op, t_copy;
            st = measure(op, &a, m1, m2, bytes / 2, reps, &t_op, &t_copy);
            if (st != MXP_OK)
                break;
            const double g = (double)bytes / t_op / 1e9, gc = (double)bytes / t_copy / 1e9;
            if (json) {
                cli_json_object(NULL);
                cli_json_str("dtype", mxp_dtype_name(types[k]));
                cli_json_str("op", op_names[op]);
                cli_json_num("mxp_gbps", g);
                cli_json_num("memcpy_gbps", gc);
                cli_json_num("mxp_over_memcpy", g / gc);
                cli_json_bool("holds", g / gc >= goal);
                cli_json_close();
            } else {
                printf("%-9s %-13s %9.2f %11.2f %10.2f %s\n", mxp_dtype_name(types[k]), op_names[op], g, gc, g / gc,
                       g / gc >= goal ? "holds" : "falls short");
            }
        }
        free_arrays(&a);
    }
    if (st == MXP_OK && json)
        cli_json_close(); /* results */
    if (st == MXP_OK)
        st = cli_bench_nn_conv(reps, json);
    free(m1);
    free(m2);
    if (st != MXP_OK)
        return cli_mxp_error("bench nn", NULL, st);
    if (json)
        cli_json_end();
    return CLI_OK;
}
