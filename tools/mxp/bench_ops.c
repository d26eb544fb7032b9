/* mxp bench ops — elementwise add and a full sum in float32, float16 and
 * bfloat16, beside memcpy of the same bytes and NumPy's float32/float16 in
 * the same run (NumPy is timed by /usr/bin/python3, when it is there). */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, fdopen */
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
        } else {
            mxp_array *s = NULL;
            st = mxp_reduce(&s, MXP_REDUCE_SUM, a, 0, NULL, NULL);
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
    fprintf(f, "usage: mxp bench ops [--n N] [--reps R]\n\n"
               "Times elementwise add (out = a + b) and a sum over all elements in float32,\n"
               "float16 and bfloat16 (N elements, default 16M; R runs, default 7, medians),\n"
               "beside memcpy of the same bytes and NumPy float32/float16 in the same run.\n"
               "GB/s counts bytes read + written (add: 3 arrays; sum: 1).\n");
}

int cli_bench_ops(int argc, char **argv)
{
    size_t n = 16u << 20;
    int reps = 7;
    const int parsed = cli_parse_n_reps("bench ops", argc, argv, &n, &reps, usage);
    if (parsed >= 0)
        return parsed;
    numpy_times np;
    time_numpy(n, reps, &np);
    void *m1 = cli_alloc(n * 6), *m2 = cli_alloc(n * 6);
    if (!m1 || !m2)
        return cli_mxp_error("allocating the memcpy buffers", MXP_ERR_NO_MEMORY);
    memset(m1, 1, n * 6);
    memset(m2, 2, n * 6);
    printf("# n = %zu elements, median of %d runs; GB/s = (bytes read + written) / time\n", n, reps);
    printf("%-9s %-4s %9s %11s %11s %10s %9s\n", "dtype", "op", "mxp GB/s", "numpy GB/s", "memcpy GB/s",
           "mxp/memcpy", "mxp/numpy");
    const mxp_dtype types[3] = { MXP_F32, MXP_F16, MXP_BF16 };
    const int64_t len = (int64_t)n;
    int rc = CLI_OK;
    for (int t = 0; t < 3 && rc == CLI_OK; t++) {
        mxp_array *a = NULL, *b = NULL, *c = NULL;
        mxp_status st = mxp_array_random_normal(&a, types[t], 1, &len, 0, 1, 1);
        if (st == MXP_OK)
            st = mxp_array_random_normal(&b, types[t], 1, &len, 0, 1, 2);
        if (st == MXP_OK)
            st = mxp_array_empty(&c, types[t], 1, &len);
        const size_t size = mxp_dtype_itemsize(types[t]);
        for (int op = 0; op < 2 && st == MXP_OK; op++) {
            size_t bytes = (op == 0 ? 3 : 1) * n * size;
            timing tm;
            st = measure(op, a, b, c, m1, m2, bytes / 2, reps, &tm);
            if (st != MXP_OK)
                break;
            double g = (double)bytes / tm.mxp / 1e9, gc = (double)bytes / tm.copy / 1e9;
            double ns = t < 2 && np.ok ? (op == 0 ? np.add[t] : np.sum[t]) : 0;
            char npb[32] = "-", ratio[32] = "-";
            if (ns > 0) {
                snprintf(npb, sizeof npb, "%.2f", (double)bytes / ns / 1e9);
                snprintf(ratio, sizeof ratio, "%.1fx", ns / tm.mxp);
            }
            printf("%-9s %-4s %9.2f %11s %11.2f %10.2f %9s\n", mxp_dtype_name(types[t]), op == 0 ? "add" : "sum", g,
                   npb, gc, g / gc, ratio);
        }
        if (st != MXP_OK)
            rc = cli_mxp_error("bench ops", st);
        mxp_array_free(a);
        mxp_array_free(b);
        mxp_array_free(c);
    }
    if (!np.ok)
        printf("(NumPy columns empty: /usr/bin/python3 with numpy was not available)\n");
    free(m1);
    free(m2);
    return rc;
}
