/* mxp bench ops — elementwise add and a full sum in float32, float16 and
 * bfloat16, beside memcpy of the same bytes and NumPy's float32/float16 in
 * the same run (NumPy is timed by /usr/bin/python3, when it is there). */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, fdopen */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const numpy_script =
    "import sys, time\n"
    "import numpy as np\n"
    "n, reps = int(sys.argv[1]), int(sys.argv[2])\n"
    "rng = np.random.default_rng(1)\n"
    "for t in ('float32', 'float16'):\n"
    "    a = rng.standard_normal(n).astype(t); b = rng.standard_normal(n).astype(t); c = np.empty_like(a)\n"
    "    for op in ('add', 'sum'):\n"
    "        ts = []\n"
    "        for r in range(reps):\n"
    "            t0 = time.perf_counter()\n"
    "            np.add(a, b, out=c) if op == 'add' else a.sum()\n"
    "            ts.append(time.perf_counter() - t0)\n"
    "        print(t, op, sorted(ts)[len(ts) // 2])\n";

typedef struct numpy_times { double add[2], sum[2]; int ok; } numpy_times; /* [float32, float16] */

static void time_numpy(size_t n, int reps, numpy_times *t)
{
    memset(t, 0, sizeof *t);
    char path[] = "/tmp/mxp-bench-ops-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fputs(numpy_script, f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %zu %d 2>/dev/null", path, n, reps);
    FILE *p = popen(cmd, "r");
    char type[16], op[8];
    double s;
    while (p && fscanf(p, "%15s %7s %lf", type, op, &s) == 3) {
        int k = !strcmp(type, "float16");
        if (!strcmp(op, "add"))
            t->add[k] = s;
        else
            t->sum[k] = s;
        t->ok++;
    }
    if (p)
        pclose(p);
    remove(path);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct timing { double mxp, copy; } timing;

/* Alternates the operation and a memcpy of copy_bytes; medians. */
static mxp_status measure(int op, mxp_array *a, mxp_array *b, mxp_array *c, void *m1, void *m2, size_t copy_bytes,
                          int reps, timing *out)
{
    double tm[64], tc[64];
    for (int r = 0; r < reps; r++) {
        double t0 = cli_now();
        mxp_status st;
        if (op == 0) {
            st = mxp_binary_into(c, MXP_OP_ADD, a, b, NULL);
        } else { /* op 2: accumulated in the input's own 16-bit dtype (the emulation) */
            mxp_array *s = NULL;
            const mxp_reduce_opts lowp = { .acc_dtype = mxp_array_dtype(a) };
            st = mxp_reduce(&s, MXP_REDUCE_SUM, a, 0, NULL, op == 2 ? &lowp : NULL);
            mxp_array_free(s);
        }
        tm[r] = cli_now() - t0;
        if (st != MXP_OK)
            return st;
        t0 = cli_now();
        memcpy(m2, m1, copy_bytes);
        tc[r] = cli_now() - t0;
    }
    qsort(tm, (size_t)reps, sizeof tm[0], cmp_double);
    qsort(tc, (size_t)reps, sizeof tc[0], cmp_double);
    out->mxp = tm[reps / 2];
    out->copy = tc[reps / 2];
    return MXP_OK;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp bench ops [--n N] [--reps R] [--json]\n\n"
               "Times elementwise add (out = a + b) and a sum over all elements in float32,\n"
               "float16 and bfloat16 (N elements, default 16M; R runs, default 7, medians),\n"
               "beside memcpy of the same bytes and NumPy float32/float16 in the same run.\n"
               "GB/s counts bytes read + written (add: 3 arrays; sum: 1).  sum_lowp (float16,\n"
               "bfloat16): the sum with acc_dtype the input's own dtype, every step rounded to\n"
               "it (an emulation of a 16-bit accumulator, docs/ops.md; no NumPy column).\n\n"
               "  --json   one JSON object: n, reps, numpy (whether NumPy ran) and results,\n"
               "           one object per dtype and op: dtype, op, mxp_gbps, numpy_gbps,\n"
               "           memcpy_gbps, mxp_over_memcpy, mxp_over_numpy (null without NumPy)\n");
}

/* One row; ns: NumPy's median seconds, 0 if it did not run. */
static const char *op_name(int op)
{
    return op == 0 ? "add" : op == 1 ? "sum" : "sum_lowp";
}

static void print_row(bool json, mxp_dtype t, int op, size_t bytes, const timing *tm, double ns)
{
    const double g = (double)bytes / tm->mxp / 1e9, gc = (double)bytes / tm->copy / 1e9;
    const double gn = ns > 0 ? (double)bytes / ns / 1e9 : NAN, vs_numpy = ns > 0 ? ns / tm->mxp : NAN;
    if (json) {
        cli_json_object(NULL);
        cli_json_str("dtype", mxp_dtype_name(t));
        cli_json_str("op", op_name(op));
        cli_json_num("mxp_gbps", g);
        cli_json_num("numpy_gbps", gn);
        cli_json_num("memcpy_gbps", gc);
        cli_json_num("mxp_over_memcpy", g / gc);
        cli_json_num("mxp_over_numpy", vs_numpy);
        cli_json_close();
        return;
    }
    char npb[32] = "-", ratio[32] = "-";
    if (ns > 0) {
        snprintf(npb, sizeof npb, "%.2f", gn);
        snprintf(ratio, sizeof ratio, "%.1fx", vs_numpy);
    }
    printf("%-9s %-8s %9.2f %11s %11.2f %10.2f %9s\n", mxp_dtype_name(t), op_name(op), g, npb, gc, g / gc, ratio);
}

static mxp_status run_dtype(bool json, mxp_dtype t, size_t n, int reps, const numpy_times *np, void *m1, void *m2)
{
    const int64_t len = (int64_t)n;
    const int k = t == MXP_F32 ? 0 : t == MXP_F16 ? 1 : -1; /* NumPy's column */
    mxp_array *a = NULL, *b = NULL, *c = NULL;
    mxp_status st = mxp_array_random_normal(&a, t, 1, &len, 0, 1, 1);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&b, t, 1, &len, 0, 1, 2);
    if (st == MXP_OK)
        st = mxp_array_empty(&c, t, 1, &len);
    for (int op = 0; op < (t == MXP_F32 ? 2 : 3) && st == MXP_OK; op++) {
        const size_t bytes = (op == 0 ? 3 : 1) * n * mxp_dtype_itemsize(t);
        timing tm;
        st = measure(op, a, b, c, m1, m2, bytes / 2, reps, &tm);
        if (st == MXP_OK)
            print_row(json, t, op, bytes, &tm, k >= 0 && np->ok && op < 2 ? (op == 0 ? np->add[k] : np->sum[k]) : 0);
    }
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(c);
    return st;
}

int cli_bench_ops(int argc, char **argv)
{
    size_t n = 16u << 20;
    int reps = 7;
    bool json = false;
    const int parsed = cli_parse_n_reps("bench ops", argc, argv, &n, &reps, &json, usage);
    if (parsed >= 0)
        return parsed;
    numpy_times np;
    time_numpy(n, reps, &np);
    void *m1 = cli_alloc(n * 6), *m2 = cli_alloc(n * 6);
    if (!m1 || !m2) {
        free(m1);
        free(m2);
        return cli_mxp_error("bench ops", "allocating the memcpy buffers", MXP_ERR_NO_MEMORY);
    }
    memset(m1, 1, n * 6);
    memset(m2, 2, n * 6);
    if (json) {
        cli_json_begin("bench ops");
        cli_json_int("n", (long long)n);
        cli_json_int("reps", reps);
        cli_json_bool("numpy", np.ok > 0);
        cli_json_array("results");
    } else {
        printf("# n = %zu elements, median of %d runs; GB/s = (bytes read + written) / time\n", n, reps);
        printf("%-9s %-8s %9s %11s %11s %10s %9s\n", "dtype", "op", "mxp GB/s", "numpy GB/s", "memcpy GB/s",
               "mxp/memcpy", "mxp/numpy");
    }
    const mxp_dtype types[3] = { MXP_F32, MXP_F16, MXP_BF16 };
    int rc = CLI_OK;
    for (int t = 0; t < 3 && rc == CLI_OK; t++) {
        mxp_status st = run_dtype(json, types[t], n, reps, &np, m1, m2);
        if (st != MXP_OK)
            rc = cli_mxp_error("bench ops", NULL, st);
    }
    if (rc == CLI_OK && json)
        cli_json_end();
    else if (rc == CLI_OK && !np.ok)
        printf("(NumPy columns empty: /usr/bin/python3 with numpy was not available)\n");
    free(m1);
    free(m2);
    return rc;
}
