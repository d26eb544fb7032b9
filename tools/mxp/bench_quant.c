/* mxp bench quant — per-tensor int8 quantization of float32 with
 * mxp_quantize, beside memcpy of the same bytes and PyTorch's
 * torch.quantize_per_tensor in the same run (timed by /usr/bin/python3,
 * when torch is installed); then a quantized linear layer, mxp_qlinear,
 * beside the float32 GEMM of the same shape and PyTorch's dynamic
 * quantized Linear. */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, fdopen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const torch_script =
    "import sys, time\n"
    "try:\n"
    "    import torch\n"
    "except Exception:\n"
    "    print('notorch'); sys.exit(0)\n"
    "n, reps = int(sys.argv[1]), int(sys.argv[2])\n"
    "lm, ln, lk = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])\n"
    "torch.manual_seed(1)\n"
    "x = torch.randn(n, dtype=torch.float32)\n"
    "s = float(x.abs().max()) / 127\n"
    "ts = []\n"
    "for r in range(reps):\n"
    "    t0 = time.perf_counter()\n"
    "    q = torch.quantize_per_tensor(x, s, 0, torch.qint8)\n"
    "    ts.append(time.perf_counter() - t0)\n"
    "tq = sorted(ts)[len(ts) // 2]\n"
    "lin = torch.ao.nn.quantized.dynamic.Linear(lk, ln, dtype=torch.qint8)\n"
    "xl = torch.randn(lm, lk)\n"
    "lin(xl)\n"
    "ts = []\n"
    "for r in range(reps):\n"
    "    t0 = time.perf_counter()\n"
    "    y = lin(xl)\n"
    "    ts.append(time.perf_counter() - t0)\n"
    "print('torch', tq, torch.__version__, sorted(ts)[len(ts) // 2], torch.get_num_threads())\n";

/* The linear layer's shape: x [m, k], W [n, k]. */
typedef struct lin_shape {
    size_t m, n, k;
} lin_shape;

/* Median seconds of torch.quantize_per_tensor; 0 without torch (or python),
 * -1 when python ran but torch is not importable.  *linear: the median
 * seconds of torch's dynamic quantized Linear of shape L (0: not timed). */
static double time_torch(size_t n, int reps, const lin_shape *L, double *linear, int *threads, char *version,
                         size_t vsize)
{
    *linear = 0;
    *threads = 0;
    char path[] = "/tmp/mxp-bench-quant-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        remove(path);
        return 0;
    }
    fputs(torch_script, f);
    fclose(f);
    char cmd[384];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %zu %d %zu %zu %zu 2>/dev/null", path, n, reps, L->m, L->n, L->k);
    FILE *p = popen(cmd, "r");
    double s = 0;
    char word[16], ver[64];
    if (p) {
        int got = fscanf(p, "%15s", word);
        if (got == 1 && !strcmp(word, "notorch"))
            s = -1;
        else if (got == 1 && !strcmp(word, "torch") && fscanf(p, "%lf %63s", &s, ver) == 2) {
            snprintf(version, vsize, "%s", ver);
            if (fscanf(p, "%lf %d", linear, threads) != 2)
                *linear = 0;
        }
        else
            s = 0;
        pclose(p);
    }
    remove(path);
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp bench quant [--n N] [--reps R] [--linear MxNxK] [--json]\n\n"
               "Times per-tensor int8 quantization of N float32 values (symmetric min/max\n"
               "qparams computed once; default 16M; R runs, default 7, medians; threads as\n"
               "MXP_NUM_THREADS / mxp_set_num_threads): mxp_quantize_into (an output array\n"
               "allocated once) and mxp_quantize (a new output array per call: its fresh\n"
               "pages are part of the time; once with mxp's huge pages as set, default on\n"
               "for arrays of 4 MiB and more, once with them off, \"4k\"), alternating with\n"
               "memcpy moving as many bytes\n"
               "(read 4N + write N, into a buffer written before), and\n"
               "torch.quantize_per_tensor through /usr/bin/python3 when PyTorch is\n"
               "installed (make bench installs it).  GB/s = 5N bytes / time.\n\n"
               "Then a quantized linear layer y = x W^T + bias, x [M, K] float32, W [N, K]\n"
               "(default 128x1024x1024): mxp_qlinear (x quantized to uint8 from its min/max\n"
               "every call, W int8 per output channel once and kept packed (mxp_qtensor_prepack,\n"
               "as torch's layer prepacks its weight), exact int32 sums, float32 out),\n"
               "mxp_qlinear_reduce_range (x to 7 bits, codes [0, 127], as torch quantizes it)\n"
               "beside the float32 mxp_gemm of the same shape with the bias in its epilogue,\n"
               "each timed as torch's layer is (one call untimed, then R calls in a row;\n"
               "the two qlinear calls alternate, the weights the same),\n"
               "and torch.ao.nn.quantized.dynamic.Linear (with PyTorch's own thread count,\n"
               "shown; compare at MXP_NUM_THREADS=1 where PyTorch runs one thread).\n"
               "GOPS = 2MNK / time; PSNR of mxp_qlinear against the float32 layer.\n\n"
               "  --linear MxNxK  the layer's shape\n"
               "  --json   one JSON object: n, reps, threads, scale, calibration_ms, torch\n"
               "           (its version, or null), results, one object per operation:\n"
               "           operation, ms, gbps, vs_memcpy; and linear: shape [M, N, K],\n"
               "           psnr_db, torch_threads, rows (operation, ms, gops, vs_f32_gemm)\n");
}

typedef struct quant_times {
    double into, fresh, fresh_4k, copy, torch; /* median seconds; torch <= 0: not timed */
    double calibration, scale;
    lin_shape lin;
    double qlinear, f32_gemm, torch_linear; /* median seconds; torch_linear <= 0: not timed */
    double qlinear7;                        /* mxp_qlinear_reduce_range: x to 7 bits, as torch */
    double psnr_db;                         /* mxp_qlinear against the float32 layer */
    int torch_threads;                      /* torch.get_num_threads() */
} quant_times;

static void print_row(bool json, const char *label, double seconds, double bytes, double copy_s)
{
    if (json) {
        cli_json_object(NULL);
        cli_json_str("operation", label);
        cli_json_num("ms", seconds * 1e3);
        cli_json_num("gbps", bytes / seconds / 1e9);
        cli_json_num("vs_memcpy", copy_s / seconds);
        cli_json_close();
    } else {
        printf("%-30.30s %10.3f %9.2f %10.2f\n", label, seconds * 1e3, bytes / seconds / 1e9, copy_s / seconds);
    }
}

static void print_linear_row(bool json, const char *label, double seconds, double ops, double gemm_s)
{
    if (json) {
        cli_json_object(NULL);
        cli_json_str("operation", label);
        cli_json_num("ms", seconds * 1e3);
        cli_json_num("gops", ops / seconds / 1e9);
        cli_json_num("vs_f32_gemm", gemm_s / seconds);
        cli_json_close();
    } else {
        printf("%-40.40s %10.3f %9.1f %12.2f\n", label, seconds * 1e3, ops / seconds / 1e9, gemm_s / seconds);
    }
}

static void print_linear(bool json, const quant_times *t, const char *torch_version)
{
    const lin_shape *L = &t->lin;
    const double ops = 2.0 * (double)L->m * (double)L->n * (double)L->k;
    char label[128];
    snprintf(label, sizeof label, "torch dynamic qLinear %.20s, %d thr", torch_version, t->torch_threads);
    if (json) {
        cli_json_object("linear");
        cli_json_array("shape");
        cli_json_int(NULL, (long long)L->m);
        cli_json_int(NULL, (long long)L->n);
        cli_json_int(NULL, (long long)L->k);
        cli_json_close();
        cli_json_num("psnr_db", t->psnr_db);
        if (t->torch_linear > 0)
            cli_json_int("torch_threads", t->torch_threads);
        else
            cli_json_null("torch_threads");
        cli_json_array("rows");
    } else {
        printf("\n# linear layer y = x W^T + bias, x [%zu, %zu] float32, W [%zu, %zu]; median of the runs;\n"
               "# mxp_qlinear: x to uint8 each call, W int8 per output channel, PSNR %.1f dB vs float32\n",
               L->m, L->k, L->n, L->k, t->psnr_db);
        printf("%-40s %10s %9s %12s\n", "operation", "ms", "GOPS", "vs f32 GEMM");
    }
    print_linear_row(json, "mxp_qlinear (int8, dynamic)", t->qlinear, ops, t->f32_gemm);
    print_linear_row(json, "mxp_qlinear_reduce_range (x 7-bit)", t->qlinear7, ops, t->f32_gemm);
    print_linear_row(json, "mxp_gemm float32 + bias", t->f32_gemm, ops, t->f32_gemm);
    if (t->torch_linear > 0)
        print_linear_row(json, label, t->torch_linear, ops, t->f32_gemm);
    if (json) {
        cli_json_close();
        cli_json_close();
    } else if (t->torch_linear > 0) {
        printf("mxp_qlinear is %.2fx the float32 GEMM's speed and %.2fx PyTorch's dynamic quantized Linear\n"
               "(torch quantizes x to 7 bits, codes [0, 127]; mxp_qlinear_reduce_range does the same: %.2fx)\n",
               t->f32_gemm / t->qlinear, t->torch_linear / t->qlinear, t->torch_linear / t->qlinear7);
    }
}

static void print_results(bool json, size_t n, int reps, const quant_times *t, const char *torch_version)
{
    const double bytes = 5.0 * (double)n;
    const int threads = mxp_get_num_threads();
    char label[128];
    snprintf(label, sizeof label, "torch.quantize_per_tensor %.63s", torch_version);
    if (json) {
        cli_json_begin("bench quant");
        cli_json_int("n", (long long)n);
        cli_json_int("reps", reps);
        cli_json_int("threads", threads);
        cli_json_num("scale", t->scale);
        cli_json_num("calibration_ms", t->calibration * 1e3);
        cli_json_str("torch", t->torch > 0 ? torch_version : NULL);
        cli_json_array("results");
    } else {
        printf("# n = %zu float32 -> int8 per tensor (scale %.4g), median of %d runs, %d thread%s;\n"
               "# GB/s = (4n read + n written) / time; calibration (min/max, once): %.2f ms\n",
               n, t->scale, reps, threads, threads == 1 ? "" : "s", t->calibration * 1e3);
        printf("%-30s %10s %9s %10s\n", "operation", "ms", "GB/s", "vs memcpy");
    }
    print_row(json, "mxp_quantize_into", t->into, bytes, t->copy);
    print_row(json, mxp_hugepages_enabled() ? "mxp_quantize (new output)" : "mxp_quantize (new, hp off)", t->fresh,
              bytes, t->copy);
    print_row(json, "mxp_quantize (new output, 4k)", t->fresh_4k, bytes, t->copy);
    print_row(json, "memcpy (same bytes)", t->copy, bytes, t->copy);
    if (t->torch > 0)
        print_row(json, label, t->torch, bytes, t->copy);
    if (json) {
        cli_json_close();
        print_linear(json, t, torch_version);
        cli_json_end();
        return;
    }
    else if (t->torch > 0)
        printf("mxp_quantize_into is %.2fx PyTorch's speed, mxp_quantize %.2fx (%.2fx with 4 KiB pages)\n",
               t->torch / t->into, t->torch / t->fresh, t->torch / t->fresh_4k);
    else if (t->torch < 0)
        printf("(PyTorch not installed: apt-get install python3-torch)\n");
    else
        printf("(PyTorch row empty: /usr/bin/python3 was not available)\n");
    print_linear(json, t, torch_version);
}

static double median(double *v, int reps)
{
    qsort(v, (size_t)reps, sizeof v[0], cmp_double);
    return v[reps / 2];
}

/* mxp_quantize_into, mxp_quantize and memcpy, alternating. */
static mxp_status measure(size_t n, int reps, void *m1, void *m2, quant_times *t)
{
    const int64_t len = (int64_t)n;
    const size_t copy = 5 * n / 2;
    mxp_array *x = NULL, *into = NULL;
    mxp_qparams qp;
    memset(&qp, 0, sizeof qp);
    mxp_status st = mxp_array_random_normal(&x, MXP_F32, 1, &len, 0, 1, 1);
    double t0 = cli_now();
    if (st == MXP_OK)
        st = mxp_calibrate_minmax(x, MXP_S8, true, -1, 0, &qp);
    t->calibration = cli_now() - t0;
    double tq[64], t4[64], ti[64], tc[64];
    const bool huge = mxp_hugepages_enabled();
    if (st == MXP_OK)
        st = mxp_array_zeros(&into, MXP_S8, 1, &len); /* written once: its pages exist */
    for (int r = 0; r < reps && st == MXP_OK; r++) {
        t0 = cli_now();
        st = mxp_quantize_into(into, x, &qp, NULL);
        ti[r] = cli_now() - t0;
        mxp_array *q = NULL;
        t0 = cli_now();
        if (st == MXP_OK)
            st = mxp_quantize(&q, x, &qp, NULL);
        tq[r] = cli_now() - t0;
        mxp_array_free(q);
        q = NULL;
        mxp_set_hugepages(false); /* the same with 4 KiB pages */
        t0 = cli_now();
        if (st == MXP_OK)
            st = mxp_quantize(&q, x, &qp, NULL);
        t4[r] = cli_now() - t0;
        mxp_set_hugepages(huge);
        mxp_array_free(q);
        t0 = cli_now();
        memcpy(m2, m1, copy);
        tc[r] = cli_now() - t0;
    }
    if (st == MXP_OK) {
        t->into = median(ti, reps);
        t->fresh = median(tq, reps);
        t->fresh_4k = median(t4, reps);
        t->copy = median(tc, reps);
        t->scale = qp.scales[0];
    }
    mxp_array_free(into);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
    return st;
}

/* mxp_qlinear and the float32 GEMM of the same shape, alternating. */
static mxp_status measure_linear(int reps, quant_times *t)
{
    const lin_shape *L = &t->lin;
    const int64_t sx[2] = { (int64_t)L->m, (int64_t)L->k }, sw[2] = { (int64_t)L->n, (int64_t)L->k };
    const int64_t sy[2] = { (int64_t)L->m, (int64_t)L->n }, nb = (int64_t)L->n;
    mxp_array *x = NULL, *w = NULL, *bias = NULL, *yf = NULL, *yq = NULL;
    mxp_qtensor *wq = NULL;
    mxp_status st = mxp_array_random_normal(&x, MXP_F32, 2, sx, 0, 1, 11);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&w, MXP_F32, 2, sw, 0, 0.05, 12);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&bias, MXP_F32, 1, &nb, 0, 1, 13);
    if (st == MXP_OK)
        st = mxp_array_empty(&yf, MXP_F32, 2, sy);
    if (st == MXP_OK) /* the weights, once, and kept packed (as torch's layer keeps its weight prepacked) */
        st = mxp_quantize_tensor(&wq, w, NULL, MXP_S8, 0);
    if (st == MXP_OK)
        st = mxp_qtensor_prepack(wq);
    mxp_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.bias = st == MXP_OK ? mxp_array_data(bias) : NULL;
    o.bias_dtype = MXP_F32;
    o.bias_kind = MXP_BIAS_PER_COL;
    o.bias_len = L->n;
    /* Each as torch's layer is timed: a call untimed, then reps calls in a
     * row, each timed (the float32 GEMM's 4 MiB of weights between two
     * qlinear calls would evict the 1 MiB of int8 weights torch keeps warm) */
    double tq[64], tf[64], t7[64];
    /* x to 7 bits (mxp_qlinear_reduce_range) and to 8, alternating call by
     * call (the same int8 weights: neither evicts the other's; a slow spell
     * of the machine falls on both, not on one whole series); the last y
     * is 8-bit's */
    for (int r = -1; r < reps && st == MXP_OK; r++)
        for (int v = 0; v < 2 && st == MXP_OK; v++) {
            mxp_array_free(yq);
            yq = NULL;
            const double t0 = cli_now();
            st = (v ? mxp_qlinear : mxp_qlinear_reduce_range)(&yq, x, wq, bias, MXP_F32, NULL);
            if (r >= 0)
                (v ? tq : t7)[r] = cli_now() - t0;
        }
    for (int r = -1; r < reps && st == MXP_OK; r++) {
        const double t0 = cli_now();
        st = mxp_gemm(MXP_NO_TRANS, MXP_TRANS, L->m, L->n, L->k, 1.0, mxp_array_data(x), MXP_F32, L->k,
                      mxp_array_data(w), MXP_F32, L->k, 0.0, mxp_array_data(yf), MXP_F32, L->n, &o);
        if (r >= 0)
            tf[r] = cli_now() - t0;
    }
    mxp_compare_report rep = { 0 };
    if (st == MXP_OK)
        st = mxp_compare(yf, yq, &rep);
    if (st == MXP_OK) {
        t->qlinear = median(tq, reps);
        t->qlinear7 = median(t7, reps);
        t->f32_gemm = median(tf, reps);
        t->psnr_db = rep.psnr_db;
    }
    mxp_qtensor_free(wq);
    mxp_array_free(x);
    mxp_array_free(w);
    mxp_array_free(bias);
    mxp_array_free(yf);
    mxp_array_free(yq);
    return st;
}

int cli_bench_quant(int argc, char **argv)
{
    size_t n = 16u << 20;
    int reps = 7;
    bool json = false;
    quant_times t;
    memset(&t, 0, sizeof t);
    t.lin = (lin_shape){ 128, 1024, 1024 };
    /* --linear MxNxK is ours; the rest goes to the common parser */
    char *rest[64];
    int nrest = 0;
    for (int i = 0; i < argc && nrest < 64; i++) {
        if (i > 0 && !strcmp(argv[i], "--linear")) {
            char tail;
            if (i + 1 >= argc || sscanf(argv[i + 1], "%zux%zux%zu%c", &t.lin.m, &t.lin.n, &t.lin.k, &tail) != 3 ||
                !t.lin.m || !t.lin.n || !t.lin.k || t.lin.m > (1u << 20) || t.lin.n > (1u << 20) ||
                t.lin.k > (1u << 20))
                return cli_usage_error("bench quant", "--linear wants MxNxK (each 1..2^20), such as 128x1024x1024, "
                                       "not '%s'", i + 1 < argc ? argv[i + 1] : "");
            i++;
            continue;
        }
        rest[nrest++] = argv[i];
    }
    if (nrest >= 64)
        return cli_usage_error("bench quant", "too many arguments");
    const int parsed = cli_parse_n_reps("bench quant", nrest, rest, &n, &reps, &json, usage);
    if (parsed >= 0)
        return parsed;
    char torch_version[64] = "";
    t.torch = time_torch(n, reps, &t.lin, &t.torch_linear, &t.torch_threads, torch_version, sizeof torch_version);
    const size_t copy = 5 * n / 2;
    void *m1 = cli_alloc(copy), *m2 = cli_alloc(copy);
    if (!m1 || !m2) {
        free(m1);
        free(m2);
        return cli_mxp_error("bench quant", "allocating the memcpy buffers", MXP_ERR_NO_MEMORY);
    }
    memset(m1, 1, copy);
    memset(m2, 2, copy);
    mxp_status st = measure(n, reps, m1, m2, &t);
    free(m1);
    free(m2);
    if (st == MXP_OK)
        st = measure_linear(reps, &t);
    if (st != MXP_OK)
        return cli_mxp_error("bench quant", NULL, st);
    print_results(json, n, reps, &t, torch_version);
    return CLI_OK;
}
