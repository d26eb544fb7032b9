/* mxp bench gemm — mxp_gemm throughput beside the GEMM libraries it is
 * compared with, timed in this process with the runs alternating:
 *   f32   OpenBLAS cblas_sgemm, oneDNN dnnl_sgemm
 *   f64   OpenBLAS cblas_dgemm
 *   bf16  the oneDNN matmul primitive, bf16 x bf16 -> f32
 *   u8s8  oneDNN dnnl_gemm_u8s8s32: uint8 A x int8 B -> int32 C
 *   f16, e4m3, e5m2: no peer; mxp's own f32 GEMM on the same values
 *         widened to f32 (and NumPy's float16 matmul for small f16 cases).
 * The peers are loaded with dlopen at run time, so neither mxp nor this tool
 * links them and the build needs none of their headers; a missing one prints
 * "-" and the Debian package to install. */
#define _POSIX_C_SOURCE 200809L /* dlopen, dlsym, setenv, popen, mkstemp, fdopen */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_gemm.h"
#include "bench_gemm_peers.h"

static const char *const cmd_name = "bench gemm";

/* ---- one case ------------------------------------------------------------- */

typedef enum impl_kind {
    IMPL_MXP,
    IMPL_MXP_F32, /* mxp on A and B widened to f32 */
    IMPL_OPENBLAS,
    IMPL_DNNL_SGEMM,
    IMPL_DNNL_BF16,
    IMPL_DNNL_U8S8,
    IMPL_MEMCPY, /* B's bytes, M == 1 */
    IMPL_NUMPY,  /* f16, small cases; timed in a child process */
    IMPL_MXP_WIDE_B, /* u8s8: mxp on B uniform over -128..127 (K-pairs past |b0| + |b1| = 128) */
    IMPL_MAX = 7
} impl_kind;

typedef struct impl {
    impl_kind kind;
    const char *label, *id;
    char detail[128]; /* kernel, library, or why it is missing */
    int available;
    double *times;
    double seconds; /* median */
    double diff;    /* < 0: not compared */
} impl;

typedef struct gemm_case {
    mxp_dtype type, c_type;
    size_t m, n, k;
    void *a, *b;         /* of `type` */
    void *b_wide;        /* u8s8: B uniform over -128..127 */
    float *a32, *b32;    /* f16 / fp8: widened copies */
    void *c_mxp, *c_out; /* of c_type: mxp's result, the others' */
    void *copy;          /* memcpy's destination, B's size */
    size_t b_bytes;
    dnnl_matmul mm;
    impl impls[IMPL_MAX];
    int count;
} gemm_case;

/* One call: 0 on success; mxp's rows return the mxp_status. */
static int run_impl(gemm_case *c, impl *im)
{
    const int m = (int)c->m, n = (int)c->n, k = (int)c->k;
    switch (im->kind) {
    case IMPL_MXP:
        return mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, c->m, c->n, c->k, 1.0, c->a, c->type, c->k, c->b,
                        c->type == MXP_U8 ? MXP_S8 : c->type, c->n, 0.0, c->c_mxp, c->c_type, c->n, NULL);
    case IMPL_MXP_WIDE_B:
        return mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, c->m, c->n, c->k, 1.0, c->a, MXP_U8, c->k, c->b_wide, MXP_S8, c->n,
                        0.0, c->c_out, c->c_type, c->n, NULL);
    case IMPL_MXP_F32:
        return mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, c->m, c->n, c->k, 1.0, c->a32, MXP_F32, c->k, c->b32, MXP_F32,
                        c->n, 0.0, c->c_out, MXP_F32, c->n, NULL);
    case IMPL_OPENBLAS:
        if (c->type == MXP_F64)
            openblas.dgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, m, n, k, 1.0, c->a, k, c->b, n, 0.0,
                           c->c_out, n);
        else
            openblas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, m, n, k, 1.0f, c->a, k, c->b, n, 0.0f,
                           c->c_out, n);
        return 0;
    case IMPL_DNNL_SGEMM: /* row-major, like every oneDNN GEMM */
        return onednn.sgemm('N', 'N', m, n, k, 1.0f, c->a, k, c->b, n, 0.0f, c->c_out, n) != 0;
    case IMPL_DNNL_BF16: {
        dnnl_arg args[3] = { { DNNL_ARG_SRC, c->mm.mem[0] }, { DNNL_ARG_WEIGHTS, c->mm.mem[1] },
                             { DNNL_ARG_DST, c->mm.mem[2] } };
        if (onednn.primitive_execute(c->mm.prim, onednn.stream, 3, args) != 0)
            return 1;
        return onednn.stream_wait(onednn.stream) != 0;
    }
    case IMPL_DNNL_U8S8: { /* 'F': one fixed offset of C, 0 */
        const int32_t zero = 0;
        return onednn.gemm_u8s8s32('N', 'N', 'F', m, n, k, 1.0f, c->a, k, 0, c->b, n, 0, 0.0f, c->c_out, n, &zero) != 0;
    }
    case IMPL_MEMCPY:
        memcpy(c->copy, c->b, c->b_bytes);
        return 0;
    case IMPL_NUMPY:
        break;
    }
    return 1;
}

static impl *add_impl(gemm_case *c, impl_kind kind, const char *label, const char *id)
{
    impl *im = &c->impls[c->count++];
    im->kind = kind;
    im->label = label;
    im->id = id;
    im->available = 1;
    im->diff = -1;
    return im;
}

static void set_missing(impl *im, const char *why)
{
    im->available = 0;
    snprintf(im->detail, sizeof im->detail, "%s", why);
}

/* Which implementations this case compares, and what each row says. */
static void choose_impls(gemm_case *c, int threads)
{
    impl *im = add_impl(c, IMPL_MXP, "mxp", "mxp");
    const char *name = mxp_gemm_kernel_name(c->type, c->type == MXP_U8 ? MXP_S8 : c->type, NULL);
    if (c->type == MXP_U8 && strstr(name, "6x16__avx2")) /* the K-pair kernel's level */
        snprintf(im->detail, sizeof im->detail, "B's K-pairs narrow: the vpmaddubsw kernel, not %s", name);
    else
        snprintf(im->detail, sizeof im->detail, "%s", name);
    switch (c->type) {
    case MXP_F32:
    case MXP_F64:
        load_openblas(threads);
        im = c->type == MXP_F32 ? add_impl(c, IMPL_OPENBLAS, "OpenBLAS sgemm", "openblas_sgemm")
                                : add_impl(c, IMPL_OPENBLAS, "OpenBLAS dgemm", "openblas_dgemm");
        if (!openblas.lib || !(c->type == MXP_F32 ? openblas.sgemm != NULL : openblas.dgemm != NULL))
            set_missing(im, openblas_missing);
        else
            snprintf(im->detail, sizeof im->detail, "%s", openblas.about);
        if (c->type == MXP_F64)
            break;
        load_onednn(threads);
        im = add_impl(c, IMPL_DNNL_SGEMM, "oneDNN sgemm", "onednn_sgemm");
        if (!onednn.lib || !onednn.sgemm)
            set_missing(im, onednn_missing);
        else
            snprintf(im->detail, sizeof im->detail, "%s", onednn.about);
        break;
    case MXP_BF16: {
        load_onednn(threads);
        im = add_impl(c, IMPL_DNNL_BF16, "oneDNN bf16 matmul", "onednn_bf16_matmul");
        const char *why = dnnl_matmul_create(&c->mm, c->m, c->n, c->k, c->a, c->b, c->c_out);
        if (why)
            set_missing(im, why);
        else
            snprintf(im->detail, sizeof im->detail, "%s %s", onednn.about, c->mm.impl ? c->mm.impl : "");
        break;
    }
    case MXP_U8:
        load_onednn(threads);
        im = add_impl(c, IMPL_DNNL_U8S8, "oneDNN u8s8s32", "onednn_gemm_u8s8s32");
        if (!onednn.lib || !onednn.gemm_u8s8s32)
            set_missing(im, onednn_missing);
        else
            snprintf(im->detail, sizeof im->detail, "%s", onednn.about);
        im = add_impl(c, IMPL_MXP_WIDE_B, "mxp, wide B", "mxp_wide_b");
        snprintf(im->detail, sizeof im->detail, "B uniform over -128..127: without VNNI the K-pair kernel");
        break;
    default:
        im = add_impl(c, IMPL_MXP_F32, "mxp f32", "mxp_f32");
        snprintf(im->detail, sizeof im->detail, "%s, A and B widened beforehand",
                 mxp_gemm_kernel_name(MXP_F32, MXP_F32, NULL));
        break;
    }
    if (c->m == 1) {
        im = add_impl(c, IMPL_MEMCPY, "memcpy of B", "memcpy");
        snprintf(im->detail, sizeof im->detail, "%zu bytes", c->b_bytes);
    }
}

static double element(const void *p, mxp_dtype t, size_t i)
{
    if (t == MXP_S32)
        return (double)((const int32_t *)p)[i];
    return t == MXP_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* max |x - ref| / max |ref| (or the absolute difference if ref is all 0). */
static double relative_diff(const void *x, const void *ref, mxp_dtype t, size_t count)
{
    double most = 0, scale = 0;
    for (size_t i = 0; i < count; i++) {
        double r = element(ref, t, i), d = fabs(element(x, t, i) - r);
        if (d > most || d != d)
            most = d != d ? INFINITY : d;
        if (fabs(r) > scale)
            scale = fabs(r);
    }
    return scale > 0 ? most / scale : most;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- NumPy float16 -------------------------------------------------------- */

static const double numpy_max_flop = 1.1e8; /* ~0.3 s a call at NumPy's float16 speed */

static const char *const numpy_script =
    "import sys, time\n"
    "import numpy as np\n"
    "m, n, k, reps = map(int, sys.argv[1:5])\n"
    "rng = np.random.default_rng(1)\n"
    "a = rng.standard_normal((m, k)).astype(np.float16)\n"
    "b = rng.standard_normal((k, n)).astype(np.float16)\n"
    "np.matmul(a, b)\n"
    "ts = []\n"
    "for r in range(reps):\n"
    "    t0 = time.perf_counter(); np.matmul(a, b); ts.append(time.perf_counter() - t0)\n"
    "ts.sort()\n"
    "print(ts[len(ts) // 2] if len(ts) % 2 else 0.5 * (ts[len(ts) // 2 - 1] + ts[len(ts) // 2]))\n";

/* Median seconds of NumPy's float16 matmul, 0 if it could not run. */
static double time_numpy_f16(size_t m, size_t n, size_t k, int reps)
{
    char path[] = "/tmp/mxp-bench-gemm-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        remove(path);
        return 0;
    }
    fputs(numpy_script, f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %zu %zu %zu %d 2>/dev/null", path, m, n, k, reps);
    double s = 0;
    FILE *p = popen(cmd, "r");
    if (p) {
        if (fscanf(p, "%lf", &s) != 1)
            s = 0;
        pclose(p);
    }
    remove(path);
    return s;
}

/* ---- output --------------------------------------------------------------- */

static void print_row(const gemm_args *a, const gemm_case *c, const impl *im, const impl *mxp)
{
    const double flop = 2.0 * (double)c->m * (double)c->n * (double)c->k;
    const int timed = im->available && im->seconds > 0;
    const int is_copy = im->kind == IMPL_MEMCPY;
    const double gflops = timed ? flop / im->seconds * 1e-9 : 0;
    const double mxp_gflops = flop / mxp->seconds * 1e-9;
    const int has_gbps = timed && c->m == 1 && im->kind != IMPL_NUMPY;
    const double gbps = has_gbps ? (double)c->b_bytes / im->seconds * 1e-9 : 0;
    const double mxp_gbps = (double)c->b_bytes / mxp->seconds * 1e-9;
    const int has_ratio = timed && im != mxp;
    const double ratio = !has_ratio ? 0 : is_copy ? mxp_gbps / gbps : mxp_gflops / gflops;
    const char *dtype = c->type == MXP_U8 ? "u8s8" : mxp_dtype_get_traits(c->type)->short_name;
    if (a->json) {
        cli_json_object(NULL);
        cli_json_str("dtype", dtype);
        cli_json_int("m", (long long)c->m);
        cli_json_int("n", (long long)c->n);
        cli_json_int("k", (long long)c->k);
        cli_json_str("impl", im->id);
        cli_json_bool("available", im->available);
        cli_json_num("seconds", timed ? im->seconds : NAN);
        cli_json_num("gflops", timed && !is_copy ? gflops : NAN);
        cli_json_num("ratio", has_ratio ? ratio : NAN);
        cli_json_num("b_gbps", has_gbps ? gbps : NAN);
        cli_json_num("diff", im->diff >= 0 ? im->diff : NAN);
        cli_json_str("detail", im->detail);
        cli_json_close();
    } else {
        char g[32] = "-", ms[32] = "-", r[32] = "-", bw[32] = "-", d[32] = "-";
        if (timed && !is_copy)
            snprintf(g, sizeof g, "%.1f", gflops);
        if (timed)
            snprintf(ms, sizeof ms, "%.3f", im->seconds * 1e3);
        if (has_ratio)
            snprintf(r, sizeof r, "%.2f", ratio);
        if (has_gbps)
            snprintf(bw, sizeof bw, "%.1f", gbps);
        if (im->diff >= 0)
            snprintf(d, sizeof d, "%.1e", im->diff);
        printf("%-5s %5zu %5zu %5zu  %-18s %8s %10s %8s %7s %8s  %s\n", dtype, c->m, c->n, c->k, im->label, g, ms,
               r, bw, d, im->detail);
    }
}

static void print_json_header(const gemm_args *a)
{
    cli_json_begin("bench gemm");
    cli_json_int("threads", a->threads);
    cli_json_int("reps", a->reps);
    cli_json_bool("alternate", a->alternate);
    cli_json_str("isa", mxp_isa_name(mxp_get_isa()));
    cli_json_object("peers");
    if (openblas.tried) {
        cli_json_str("openblas", openblas.lib ? openblas.path : NULL);
        if (openblas.lib)
            cli_json_int("openblas_threads", openblas.threads);
    }
    if (onednn.tried) {
        cli_json_str("onednn", onednn.lib ? onednn.path : NULL);
        if (onednn.lib && onednn.threads)
            cli_json_int("onednn_threads", onednn.threads);
    }
    cli_json_close();
    cli_json_array("results");
}

static void print_header(const gemm_args *a)
{
    if (a->json) {
        print_json_header(a);
        return;
    }
    printf("# mxp bench gemm: C = A*B row-major, alpha 1, beta 0; C float32 (float64 for f64);\n"
           "# median of %d runs, implementations alternating%s; GFLOPS = 2*M*N*K / time;\n"
           "# mxp/this = mxp GFLOPS / this GFLOPS; diff = max|C - C_mxp| / max|C_mxp|\n",
           a->reps, a->alternate ? " call by call, no warm-up (--alternate)" : "");
    printf("# threads: %d (mxp %d", a->threads, mxp_get_num_threads());
    if (openblas.lib)
        printf(", OpenBLAS %d", openblas.threads);
    if (onednn.lib && onednn.threads)
        printf(", oneDNN OpenMP %d", onednn.threads);
    printf("); mxp ISA %s\n", mxp_isa_name(mxp_get_isa()));
    if (openblas.tried)
        printf("# OpenBLAS: %s\n", openblas.lib ? openblas.path : "not found (Debian: libopenblas0-pthread)");
    if (onednn.tried)
        printf("# oneDNN: %s\n", onednn.lib ? onednn.path : "not found (Debian: libdnnl2)");
    printf("%-5s %5s %5s %5s  %-18s %8s %10s %8s %7s %8s  %s\n", "dtype", "M", "N", "K", "implementation",
           "GFLOPS", "ms", "mxp/this", "B GB/s", "diff", "kernel / notes");
    fflush(stdout);
}

/* ---- running a case ------------------------------------------------------- */

static void free_case(gemm_case *c)
{
    if (c->mm.prim || c->mm.pd)
        dnnl_matmul_destroy(&c->mm);
    free(c->a);
    free(c->b_wide);
    free(c->b);
    free(c->a32);
    free(c->b32);
    free(c->c_mxp);
    free(c->c_out);
    free(c->copy);
    for (int i = 0; i < c->count; i++)
        free(c->impls[i].times);
}

static mxp_status alloc_case(gemm_case *c)
{
    const size_t size = mxp_dtype_itemsize(c->type), csize = mxp_dtype_itemsize(c->c_type);
    const int widen = c->type != MXP_F32 && c->type != MXP_F64 && c->type != MXP_BF16 && c->type != MXP_U8;
    c->b_bytes = c->k * c->n * size;
    c->a = cli_alloc(c->m * c->k * size);
    c->b = cli_alloc(c->b_bytes);
    c->c_mxp = cli_alloc(c->m * c->n * csize);
    c->c_out = cli_alloc(c->m * c->n * csize);
    if (widen) {
        c->a32 = cli_alloc(c->m * c->k * sizeof(float));
        c->b32 = cli_alloc(c->k * c->n * sizeof(float));
    }
    if (c->m == 1)
        c->copy = cli_alloc(c->b_bytes);
    if (!c->a || !c->b || !c->c_mxp || !c->c_out || (widen && (!c->a32 || !c->b32)) || (c->m == 1 && !c->copy))
        return MXP_ERR_NO_MEMORY;
    mxp_status st = cli_fill_normal(c->a, c->type, c->m * c->k, 1);
    if (c->type == MXP_U8) { /* A over all of 0..255, as asymmetric uint8 quantization spreads activations */
        if (!(c->b_wide = cli_alloc(c->k * c->n)))
            return MXP_ERR_NO_MEMORY;
        uint64_t s = 0x9e3779b97f4a7c15u;
        for (size_t i = 0; i < c->m * c->k; i++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            ((uint8_t *)c->a)[i] = (uint8_t)(s >> 56);
        }
        for (size_t i = 0; i < c->k * c->n; i++) { /* the other B: every int8 equally often */
            s = s * 6364136223846793005u + 1442695040888963407u;
            ((uint8_t *)c->b_wide)[i] = (uint8_t)(s >> 56);
        }
    }
    if (st == MXP_OK)
        st = cli_fill_normal(c->b, c->type == MXP_U8 ? MXP_S8 : c->type, c->k * c->n, 2);
    if (st == MXP_OK && widen)
        st = mxp_convert(c->a32, MXP_F32, c->a, c->type, c->m * c->k, NULL);
    if (st == MXP_OK && widen)
        st = mxp_convert(c->b32, MXP_F32, c->b, c->type, c->k * c->n, NULL);
    memset(c->c_mxp, 0, c->m * c->n * csize);
    memset(c->c_out, 0, c->m * c->n * csize);
    if (c->copy)
        memset(c->copy, 0, c->b_bytes);
    return st;
}

static void check_diff(gemm_case *c, impl *im, const char *what, double tolerance)
{
    im->diff = relative_diff(c->c_out, c->c_mxp, c->c_type, c->m * c->n);
    if (!(im->diff <= tolerance))
        fprintf(stderr, "mxp bench gemm: warning: %s: %s and mxp differ by %.2g (relative to max |C|)\n", what,
                im->label, im->diff);
}

/* --alternate: every call timed alone, from the first, the implementations
 * in turn (mxp's first call is the first of the case). */
static int run_case_alternate(const gemm_args *a, gemm_case *c, const char *what, double tolerance)
{
    for (int i = 0; i < c->count; i++) {
        c->impls[i].times = malloc((size_t)a->reps * sizeof c->impls[i].times[0]);
        if (!c->impls[i].times) {
            free_case(c);
            return cli_mxp_error(cmd_name, what, MXP_ERR_NO_MEMORY);
        }
    }
    double first[IMPL_MAX] = { 0 };
    long faults[IMPL_MAX] = { 0 }; /* minor page faults over all calls */
    for (int r = 0; r < a->reps; r++) {
        for (int j = 0; j < c->count; j++) {
            impl *im = &c->impls[(r + j) % c->count];
            if (!im->available)
                continue;
            struct rusage u0, u1;
            getrusage(RUSAGE_SELF, &u0);
            const double t0 = cli_now();
            const int failed = run_impl(c, im);
            im->times[r] = cli_now() - t0;
            getrusage(RUSAGE_SELF, &u1);
            faults[im - c->impls] += u1.ru_minflt - u0.ru_minflt;
            if (failed) {
                const int mxp_row = im->kind == IMPL_MXP || im->kind == IMPL_MXP_F32 || im->kind == IMPL_MXP_WIDE_B;
                if (!mxp_row)
                    fprintf(stderr, "mxp bench gemm: %s: %s failed\n", what, im->label);
                free_case(c);
                return mxp_row ? cli_mxp_error(cmd_name, what, (mxp_status)failed) : CLI_FAILED;
            }
            if (r == 0)
                first[im - c->impls] = im->times[0];
            if (r == 0 && im->kind != IMPL_MXP && im->kind != IMPL_MEMCPY && im->kind != IMPL_MXP_WIDE_B)
                check_diff(c, im, what, tolerance); /* mxp's C is written in round 0 before any peer's */
        }
    }
    for (int i = 0; i < c->count; i++) {
        impl *im = &c->impls[i];
        if (!im->available)
            continue;
        im->seconds = median(im->times, a->reps);
        const size_t len = strlen(im->detail);
        snprintf(im->detail + len, sizeof im->detail - len, "%sfirst call %.3f ms; %.1f page faults/call",
                 len ? "; " : "", first[i] * 1e3, (double)faults[i] / a->reps);
    }
    for (int i = 0; i < c->count; i++)
        print_row(a, c, &c->impls[i], &c->impls[0]);
    fflush(stdout);
    free_case(c);
    return CLI_OK;
}

static int run_case(const gemm_args *a, mxp_dtype type, const gemm_shape *shape)
{
    gemm_case c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.c_type = type == MXP_F64 ? MXP_F64 : type == MXP_U8 ? MXP_S32 : MXP_F32;
    c.m = shape->m;
    c.n = shape->n;
    c.k = shape->k;
    char what[96];
    snprintf(what, sizeof what, "%s %zux%zux%zu", mxp_dtype_name(type), c.m, c.n, c.k);
    mxp_status st = alloc_case(&c);
    if (st != MXP_OK) {
        free_case(&c);
        return cli_mxp_error(cmd_name, what, st);
    }
    choose_impls(&c, a->threads);
    const double tolerance = type == MXP_F64 ? 1e-10 : 1e-3;
    if (a->alternate)
        return run_case_alternate(a, &c, what, tolerance);
    /* Warm-up: one untimed call each (first-call allocations, JIT), which
     * also gives the results compared in the diff column. */
    for (int i = 0; i < c.count; i++) {
        impl *im = &c.impls[i];
        im->times = malloc((size_t)a->reps * sizeof im->times[0]);
        if (!im->times) {
            free_case(&c);
            return cli_mxp_error(cmd_name, what, MXP_ERR_NO_MEMORY);
        }
        if (!im->available)
            continue;
        int failed = run_impl(&c, im);
        if (failed && (im->kind == IMPL_MXP || im->kind == IMPL_MXP_F32 || im->kind == IMPL_MXP_WIDE_B)) {
            free_case(&c);
            return cli_mxp_error(cmd_name, what, (mxp_status)failed);
        }
        if (failed) {
            set_missing(im, "the call failed");
            continue;
        }
        if (im->kind != IMPL_MXP && im->kind != IMPL_MEMCPY && im->kind != IMPL_MXP_WIDE_B) {
            im->diff = relative_diff(c.c_out, c.c_mxp, c.c_type, c.m * c.n);
            if (!(im->diff <= tolerance))
                fprintf(stderr, "mxp bench gemm: warning: %s: %s and mxp differ by %.2g (relative to max |C|)\n",
                        what, im->label, im->diff);
        }
    }
    /* Calls per timed run: short calls (256^3 takes 0.1-0.3 ms) are timed
     * in batches of at least ~20 ms, after ~50 ms more of untimed calls of
     * each implementation (clock ramps, caches, the peers' thread pools). */
    int batch = 1;
    {
        double t0 = cli_now();
        int calls = 0;
        while (cli_now() - t0 < 0.05 && run_impl(&c, &c.impls[0]) == 0)
            calls++;
        const double per_call = (cli_now() - t0) / (calls ? calls : 1);
        batch = per_call >= 0.02 ? 1 : (int)(0.02 / per_call) + 1;
        for (int i = 1; i < c.count; i++)
            for (int w = 0; w < calls && c.impls[i].available; w++)
                if (run_impl(&c, &c.impls[i]))
                    break;
    }
    /* Timed runs, alternating, the first implementation rotating. */
    for (int r = 0; r < a->reps; r++) {
        for (int j = 0; j < c.count; j++) {
            impl *im = &c.impls[(r + j) % c.count];
            if (!im->available)
                continue;
            double t0 = cli_now();
            int failed = 0;
            for (int b = 0; b < batch && !failed; b++)
                failed = run_impl(&c, im);
            im->times[r] = (cli_now() - t0) / batch;
            if (failed) {
                const int mxp_row = im->kind == IMPL_MXP || im->kind == IMPL_MXP_F32 || im->kind == IMPL_MXP_WIDE_B;
                if (!mxp_row)
                    fprintf(stderr, "mxp bench gemm: %s: %s failed\n", what, im->label);
                free_case(&c);
                return mxp_row ? cli_mxp_error(cmd_name, what, (mxp_status)failed) : CLI_FAILED;
            }
        }
    }
    for (int i = 0; i < c.count; i++) {
        if (c.impls[i].available)
            c.impls[i].seconds = median(c.impls[i].times, a->reps);
    }
    for (int i = 0; i < c.count; i++)
        print_row(a, &c, &c.impls[i], &c.impls[0]);
    if (type == MXP_F16) {
        impl np = { .kind = IMPL_NUMPY, .label = "NumPy f16 matmul", .id = "numpy_f16", .diff = -1 };
        const double flop = 2.0 * (double)c.m * (double)c.n * (double)c.k;
        if (flop > numpy_max_flop) {
            snprintf(np.detail, sizeof np.detail, "skipped: 2*M*N*K above %.2g", numpy_max_flop);
        } else {
            np.seconds = time_numpy_f16(c.m, c.n, c.k, a->reps < 5 ? a->reps : 5);
            np.available = np.seconds > 0;
            snprintf(np.detail, sizeof np.detail, "%s",
                     np.available ? "python3 child process, output float16" : "/usr/bin/python3 with numpy not found");
        }
        print_row(a, &c, &np, &c.impls[0]);
    }
    fflush(stdout);
    free_case(&c);
    return CLI_OK;
}

int cli_bench_gemm(int argc, char **argv)
{
    gemm_args a;
    int done;
    int rc = bench_gemm_parse_args(&a, argc, argv, &done);
    if (rc != CLI_OK || done)
        return rc;
    mxp_status st = mxp_set_num_threads(a.threads);
    if (st != MXP_OK)
        return cli_mxp_error(cmd_name, NULL, st);
    /* Load the peers the dtypes need now, so the header can name them. */
    for (int d = 0; d < a.dtype_count; d++) {
        if (a.dtypes[d] == MXP_F32 || a.dtypes[d] == MXP_F64)
            load_openblas(a.threads);
        if (a.dtypes[d] == MXP_F32 || a.dtypes[d] == MXP_BF16 || a.dtypes[d] == MXP_U8)
            load_onednn(a.threads);
    }
    print_header(&a);
    for (int d = 0; d < a.dtype_count && rc == CLI_OK; d++)
        for (int s = 0; s < a.shape_count && rc == CLI_OK; s++)
            rc = run_case(&a, a.dtypes[d], &a.shapes[s]);
    if (rc == CLI_OK && a.json)
        cli_json_end();
    if (rc == CLI_OK && !a.json && ((openblas.tried && !openblas.lib) || (onednn.tried && !onednn.lib)))
        printf("(missing peers: `scripts/install-deps.sh bench` installs libopenblas-dev and libdnnl-dev)\n");
    return rc;
}
