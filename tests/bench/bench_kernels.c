/* Per-kernel benchmark rows, expanded from the kernel lists
 * (src/kernels/<dtype>-<op>-list.inc, cvt-list.inc, u8-lut-list.inc,
 * gemm-list.inc, u8s8-gemm-list.inc): every row this machine runs, timed
 * on data that stays in the L1/L2 caches, beside its reference twin, so a
 * kernel's speed-up over its twin can be read per row and a new list line
 * appears here without a line of this file.  `make bench` runs it; ctest
 * runs it once with --quick (it must find and run rows, not time them).
 *
 *   bench_kernels [--quick] [--filter TEXT] [--n ELEMENTS]
 *
 * Columns: the list, the function, its ISA level, elements per call (GEMM:
 * the tile and kc), the median time per element (GEMM: GFLOPS), GB/s of
 * the row's operands, the twin's median and the speed-up over it.  The
 * medians are of 7 samples of at least 2 ms (0.05 ms with --quick). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "kernels/gemm-kernels.h"
#include "kernels/quant-kernels.h"
#include "kernels/u8-lut-kernels.h"
#include "mxp.h"
#include "ops/kernel-config.h"
#include "quant/quant-internal.h"
#include "support/prng.h"

enum { SAMPLES = 7, MAX_N = 1 << 16 };

static double min_sample_s = 2e-3;
static const char *filter;
static size_t nelem = 4096;

/* Operand buffers, large enough for any row (64-bit elements, 3 operands). */
static unsigned char *buf_x, *buf_y, *buf_z;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One call of a row's function (or of its twin) on the benchmark's data. */
typedef void run_fn(const void *row, int twin);

/* Median seconds per call of run(row, twin): SAMPLES samples of enough
 * calls to last min_sample_s each. */
static double time_call(run_fn *run, const void *row, int twin)
{
    run(row, twin); /* warm: caches, pages, the dispatch tables */
    size_t calls = 1;
    for (;;) {
        const double t0 = now_s();
        for (size_t i = 0; i < calls; i++)
            run(row, twin);
        const double dt = now_s() - t0;
        if (dt >= min_sample_s || calls >= ((size_t)1 << 30))
            break;
        calls *= dt > 0 ? (size_t)(min_sample_s / dt) + 1 : 16;
    }
    double s[SAMPLES];
    for (int k = 0; k < SAMPLES; k++) {
        const double t0 = now_s();
        for (size_t i = 0; i < calls; i++)
            run(row, twin);
        s[k] = (now_s() - t0) / (double)calls;
    }
    for (int i = 1; i < SAMPLES; i++) /* insertion sort: 7 values */
        for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
            const double t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return s[SAMPLES / 2];
}

static int rows_printed;

/* One output line: the row timed against its twin.  work: elements per
 * call (or operations: flops 1 floating-point, 2 integer), bytes: operand
 * bytes per call (0: not shown). */
static void report(const char *list, const char *name, mxp_isa isa, const char *what, run_fn *run, const void *row,
                   const char *twin_name, double work, int flops, double bytes)
{
    if (filter && !strstr(list, filter) && !strstr(name, filter))
        return;
    const double t = time_call(run, row, 0);
    const int self = twin_name && strcmp(twin_name, name) == 0;
    const double tt = self || !twin_name ? t : time_call(run, row, 1);
    char rate[32], bw[32] = "";
    if (flops)
        snprintf(rate, sizeof rate, "%8.1f %s", work / t * 1e-9, flops == 2 ? "GOPS  " : "GFLOPS");
    else
        snprintf(rate, sizeof rate, "%8.3f ns/elem", t / work * 1e9);
    if (bytes > 0)
        snprintf(bw, sizeof bw, "%7.1f GB/s", bytes / t * 1e-9);
    printf("%-22s %-44s %-10s %-14s %s %12s  twin %s x%.1f\n", list, name, mxp_isa_name(isa), what, rate, bw,
           self ? "(itself)" : twin_name ? twin_name : "-", tt / t);
    rows_printed++;
}

/* ---- elementwise and reductions: src/ops/kernel-config.c's lists ------- */

typedef struct ops_row {
    mxp_ops_list list;
    const mxp_kernel *k;
    int fn; /* the vmath function timed */
} ops_row;

static void run_ops(const void *p, int twin)
{
    const ops_row *r = p;
    const mxp_kernel_any f = twin ? r->k->twin : r->k->fn;
    void *y = buf_y;
    const void *a = buf_x, *b = buf_z;
    const size_t n = nelem;
    switch (r->list) {
    case MXP_LIST_F32_ARITH: ((mxp_f32_arith_ukernel *)f)(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_LIST_F64_ARITH: ((mxp_f64_arith_ukernel *)f)(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_LIST_F16_ARITH:
    case MXP_LIST_BF16_ARITH: ((mxp_h16_arith_ukernel *)f)(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_LIST_F32_CANONICAL_NAN: ((mxp_f32_canonical_nan_ukernel *)f)(y, n); break;
    case MXP_LIST_F64_CANONICAL_NAN: ((mxp_f64_canonical_nan_ukernel *)f)(y, n); break;
    case MXP_LIST_F32_SUM: {
        volatile double s = ((mxp_f32_sum_f64_ukernel *)f)(a, n);
        (void)s;
        break;
    }
    case MXP_LIST_F32_VMATH: ((mxp_f32_vmath_ukernel *)f)(r->fn, y, a, n); break;
    case MXP_LIST_F64_VMATH: ((mxp_f64_vmath_ukernel *)f)(r->fn, y, a, n); break;
    case MXP_LIST_F16_VMATH: ((mxp_f16_vmath_ukernel *)f)(r->fn, y, a, n); break;
    case MXP_LIST_F32_GELU: ((mxp_f32_gelu_ukernel *)f)(y, a, n); break;
    case MXP_LIST_F64_GELU: ((mxp_f64_gelu_ukernel *)f)(y, a, n); break;
    default: break;
    }
}

static const char *const ops_names[MXP_LIST_COUNT] = {
    "f32-arith", "f64-arith", "f16-arith", "bf16-arith", "f32-canonical-nan", "f64-canonical-nan",
    "f32-sum",   "f32-vmath", "f64-vmath", "f16-vmath",  "f32-gelu",          "f64-gelu",
};

/* Element size and operands read + written per element. */
static void ops_traffic(mxp_ops_list l, size_t *esz, int *operands)
{
    *esz = l == MXP_LIST_F64_ARITH || l == MXP_LIST_F64_CANONICAL_NAN || l == MXP_LIST_F64_VMATH ||
                   l == MXP_LIST_F64_GELU
               ? 8
           : l == MXP_LIST_F16_ARITH || l == MXP_LIST_BF16_ARITH || l == MXP_LIST_F16_VMATH ? 2
                                                                                            : 4;
    *operands = l <= MXP_LIST_BF16_ARITH ? 3 : l == MXP_LIST_F32_SUM ? 1 : 2;
}

/* Fills the operands with values every function takes without a special
 * path: magnitudes 1/4 .. 4 of both signs (log: their absolute values). */
static void fill_ops(mxp_ops_list l, int positive)
{
    uint64_t rng = prng_seed(42);
    size_t esz;
    int operands;
    ops_traffic(l, &esz, &operands);
    for (size_t i = 0; i < nelem; i++) {
        double v[2] = { prng_range(&rng, 0.25, 4.0), prng_range(&rng, 0.25, 4.0) };
        for (int j = 0; j < 2; j++) {
            if (!positive && (prng_next(&rng) & 1))
                v[j] = -v[j];
            unsigned char *dst = j ? buf_z : buf_x;
            if (esz == 8) {
                memcpy(dst + 8 * i, &v[j], 8);
            } else {
                const float f = (float)v[j];
                uint32_t bits;
                memcpy(&bits, &f, 4);
                if (esz == 4) {
                    memcpy(dst + 4 * i, &bits, 4);
                } else {
                    uint16_t h;
                    mxp_convert(&h, l == MXP_LIST_BF16_ARITH ? MXP_BF16 : MXP_F16, &f, MXP_F32, 1, NULL);
                    memcpy(dst + 2 * i, &h, 2);
                }
            }
        }
    }
    memcpy(buf_y, buf_x, nelem * esz);
}

static void bench_ops(void)
{
    for (int l = 0; l < MXP_LIST_COUNT; l++) {
        size_t n, esz;
        int operands;
        const mxp_kernel *rows = mxp_ops_kernels((mxp_ops_list)l, &n);
        ops_traffic((mxp_ops_list)l, &esz, &operands);
        for (size_t i = 0; i < n; i++) {
            if (!mxp_kernel_runs(&rows[i], mxp_isa_current()))
                continue;
            const int vmath = l == MXP_LIST_F32_VMATH || l == MXP_LIST_F64_VMATH || l == MXP_LIST_F16_VMATH;
            /* vmath rows: exp, and gelu where the row serves it */
            const int fns[2] = { MXP_VMATH_EXP, MXP_VMATH_GELU };
            for (int f = 0; f < (vmath ? 2 : 1); f++) {
                if (vmath && rows[i].tags && !(rows[i].tags & MXP_VMATH_FN(fns[f])))
                    continue;
                if (vmath && l == MXP_LIST_F64_VMATH && f)
                    continue;
                ops_row r = { (mxp_ops_list)l, &rows[i], fns[f] };
                fill_ops((mxp_ops_list)l, 0);
                char what[32];
                snprintf(what, sizeof what, "%s%zu", vmath ? (f ? "gelu " : "exp ") : "n=", nelem);
                report(ops_names[l], rows[i].name, rows[i].isa, what, run_ops, &r, rows[i].twin_name, (double)nelem,
                       0, (double)(nelem * esz * (size_t)operands));
            }
        }
    }
}

/* ---- quantization: src/quant/quant-config.c's lists -------------------- */

typedef struct quant_row {
    const mxp_kernel *k;
    int minmax;
} quant_row;

static void run_quant(const void *p, int twin)
{
    const quant_row *r = p;
    const mxp_kernel_any f = twin ? r->k->twin : r->k->fn;
    const float *x = (const float *)buf_x;
    if (r->minmax && r->k->tags == MXP_QUANT_TAG_ONE) {
        float lo = 0, hi = 0;
        ((mxp_f32_minmax_ukernel *)f)(x, nelem, &lo, &hi);
    } else if (r->minmax) {
        ((mxp_f32_minmax_cols_ukernel *)f)(x, nelem, (float *)buf_y, (float *)buf_z);
    } else if (r->k->tags == MXP_QUANT_TAG_ONE) {
        ((mxp_f32_quant_ukernel *)f)(buf_y, x, nelem, 0.03125f, 3, -128, 127);
    } else { /* per column: rinv, scale, zp side by side in buf_z */
        float *rinv = (float *)buf_z, *scale = rinv + nelem;
        int32_t *zp = (int32_t *)(scale + nelem);
        ((mxp_f32_quant_cols_ukernel *)f)(buf_y, x, nelem, rinv, scale, zp, -128, 127);
    }
}

static void bench_quant(void)
{
    fill_ops(MXP_LIST_F32_ARITH, 0);
    float *rinv = (float *)buf_z, *scale = rinv + nelem;
    int32_t *zp = (int32_t *)(scale + nelem);
    for (size_t i = 0; i < nelem; i++) {
        scale[i] = 0.03125f;
        rinv[i] = 32.0f;
        zp[i] = (int32_t)(i % 7) - 3;
    }
    for (int mm = 0; mm < 2; mm++) {
        size_t n;
        const mxp_kernel *rows = mxp_quant_kernels(mm, &n);
        for (size_t i = 0; i < n; i++) {
            if (!mxp_kernel_runs(&rows[i], mxp_isa_current()))
                continue;
            if (mm && rows[i].tags != MXP_QUANT_TAG_ONE) { /* per-column lo/hi: the last rows, after quant */
                memset(buf_y, 0, nelem * 4);
                memset(buf_z, 0, nelem * 4);
            }
            quant_row r = { &rows[i], mm };
            char what[32];
            snprintf(what, sizeof what, "n=%zu", nelem);
            const size_t out = mm ? (rows[i].tags == MXP_QUANT_TAG_ONE ? 0 : 8) : 1;
            report(mm ? "f32-minmax" : "f32-quant", rows[i].name, rows[i].isa, what, run_quant, &r,
                   rows[i].twin_name, (double)nelem, 0, (double)(nelem * (4 + out)));
        }
    }
}

/* ---- conversions: src/kernels/cvt-list.inc, twin the reference converter */

typedef struct cvt_row {
    const mxp_cvt_kernel *k;
    mxp_cvt_params p;
} cvt_row;

static void run_cvt(const void *q, int twin)
{
    const cvt_row *r = q;
    if (twin)
        mxp_convert_ref(buf_y, r->k->dst, buf_x, r->k->src, nelem, &r->p);
    else
        r->k->fn(buf_y, buf_x, nelem, &r->p);
}

/* Source values of every binade the narrow types have, both signs:
 * |x| in 2^-6 .. 2^6, converted into the source dtype. */
static void fill_cvt(mxp_dtype src)
{
    uint64_t rng = prng_seed(7);
    double *v = (double *)buf_z;
    for (size_t i = 0; i < nelem; i++)
        v[i] = prng_range(&rng, 1.0, 2.0) * ldexp(1.0, prng_int(&rng, 12) - 6) * (prng_next(&rng) & 1 ? -1 : 1);
    mxp_convert_opts o = { .struct_size = sizeof o, .rounding = MXP_ROUND_NEAREST_EVEN,
                           .overflow = MXP_OVERFLOW_SATURATE };
    if (mxp_convert(buf_x, src, v, MXP_F64, nelem, &o) != MXP_OK)
        memset(buf_x, 0, nelem * mxp_dtype_itemsize(src));
}

static void bench_cvt(void)
{
    size_t n;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&n);
    for (size_t i = 0; i < n; i++) {
        const mxp_cvt_kernel *k = &ks[i];
        if (k->isa > mxp_isa_current())
            continue;
        /* one row for nearest-even and one for stochastic rounding where the
         * kernel has them, else its first mode */
        for (int m = 0; m < MXP_ROUNDING_COUNT; m++) {
            const int first = (int)__builtin_ctz(k->modes);
            const int take = m == MXP_ROUND_NEAREST_EVEN || m == MXP_ROUND_STOCHASTIC
                                 ? (int)(k->modes >> m & 1)
                                 : m == first && !(k->modes & (MXP_MODES_RNE | MXP_MODES_SR));
            if (!take)
                continue;
            cvt_row r = { k, { (mxp_rounding)m, MXP_OVERFLOW_INF, 12345, 0, NULL } };
            fill_cvt(k->src);
            char list[32], what[48];
            snprintf(list, sizeof list, "%s->%s", mxp_dtype_name(k->src), mxp_dtype_name(k->dst));
            snprintf(what, sizeof what, "%s", mxp_rounding_name((mxp_rounding)m));
            report(list, k->name, k->isa, what, run_cvt, &r, "mxp_convert_ref", (double)nelem, 0,
                   (double)(nelem * (mxp_dtype_itemsize(k->src) + mxp_dtype_itemsize(k->dst))));
        }
    }
}

/* ---- table lookups: src/kernels/u8-lut-list.inc ------------------------ */

static void run_lut(const void *q, int twin)
{
    const mxp_kernel *k = q;
    const mxp_kernel_any f = twin ? k->twin : k->fn;
    const void *table = buf_z;
    if (k->param == 8)
        ((mxp_u8_lut_x8_ukernel *)f)(buf_y, buf_x, nelem, table);
    else if (k->param == 16)
        ((mxp_u8_lut_x16_ukernel *)f)(buf_y, buf_x, nelem, table);
    else
        ((mxp_u8_lut_x64_ukernel *)f)(buf_y, buf_x, nelem, table);
}

static void bench_lut(void)
{
    uint64_t rng = prng_seed(9);
    for (size_t i = 0; i < nelem; i++)
        buf_x[i] = (unsigned char)prng_next(&rng);
    for (size_t i = 0; i < 256 * 8; i++)
        buf_z[i] = (unsigned char)(i * 37);
    size_t n;
    const mxp_kernel *rows = mxp_cvt_lut_kernels(&n);
    for (size_t i = 0; i < n; i++) {
        if (!mxp_kernel_runs(&rows[i], mxp_isa_current()))
            continue;
        char what[32];
        snprintf(what, sizeof what, "x%d n=%zu", rows[i].param, nelem);
        report("u8-lut", rows[i].name, rows[i].isa, what, run_lut, &rows[i], rows[i].twin_name, (double)nelem, 0,
               (double)(nelem * (1 + (size_t)rows[i].param / 8)));
    }
}

/* ---- GEMM micro-kernels: gemm-list.inc and u8s8-gemm-list.inc ---------- */

enum { GEMM_KC = 256 };

typedef struct gemm_row {
    const char *name, *twin_name;
    mxp_gemm_ukernel_fn fn, twin;             /* float */
    mxp_u8s8_gemm_ukernel_fn ifn, itwin;      /* integer */
    mxp_isa isa;
    size_t mr, nr;
} gemm_row;

static void run_gemm(const void *q, int twin)
{
    const gemm_row *r = q;
    if (r->fn)
        (twin ? r->twin : r->fn)(r->mr, r->nr, GEMM_KC, buf_x, buf_z, buf_y, r->nr, 1.0, 1.0);
    else
        (twin ? r->itwin : r->ifn)(r->mr, r->nr, GEMM_KC, buf_x, buf_z, (int32_t *)buf_y, r->nr, NULL, NULL);
}

static const gemm_row gemm_rows[] = {
#define MXP_GEMM_UKERNEL(f, acc, packed, kpack, isa, mr, nr, mc, kc, nc, twin) \
    { #f, #twin, f, twin, NULL, NULL, isa, mr, nr },
#define MXP_GEMM_UKERNEL_A(f, of, max_n, twin)
#define MXP_GEMM_DIRECT(f, acc, packed, kpack, isa, mr, nr, kc, step, step_multi, max_m, twin)
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_DIRECT
#define MXP_U8S8_GEMM_UKERNEL(f, packed, kpack, isa, mr, nr, mc, kc, nc, deep_m, twin) \
    { #f, #twin, NULL, NULL, f, twin, isa, mr, nr },
#define MXP_U8S8_GEMM_UKERNEL_A(f, of, twin)
#include "kernels/u8s8-gemm-list.inc"
#undef MXP_U8S8_GEMM_UKERNEL
#undef MXP_U8S8_GEMM_UKERNEL_A
};

static void bench_gemm(void)
{
    /* Panels of bytes 0x30 .. 0x3f: read as any packed type (float64,
     * float32, bfloat16, uint8/int8) every element is a normal positive
     * number below 1 or a small integer, so no row meets subnormals or
     * overflow; C a tile of zeros. */
    uint64_t rng = prng_seed(11);
    for (size_t i = 0; i < 16 * (size_t)MAX_N; i++) {
        buf_x[i] = (unsigned char)(0x30 | (prng_next(&rng) & 0xf));
        buf_z[i] = (unsigned char)(0x30 | (prng_next(&rng) & 0xf));
    }
    for (size_t i = 0; i < sizeof gemm_rows / sizeof gemm_rows[0]; i++) {
        const gemm_row *r = &gemm_rows[i];
        if (r->isa > mxp_isa_current())
            continue;
        memset(buf_y, 0, 16 * (size_t)MAX_N);
        char what[32];
        snprintf(what, sizeof what, "%zux%zu kc=%d", r->mr, r->nr, GEMM_KC);
        report(r->fn ? "gemm" : "u8s8-gemm", r->name, r->isa, what, run_gemm, r, r->twin_name,
               2.0 * (double)(r->mr * r->nr * GEMM_KC), r->fn ? 1 : 2, 0);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            min_sample_s = 5e-5;
            nelem = 1000;
        } else if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
            filter = argv[++i];
        } else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
            const long v = strtol(argv[++i], NULL, 10);
            if (v < 1 || v > MAX_N) {
                fprintf(stderr, "bench_kernels: --n takes 1 .. %d\n", MAX_N);
                return 2;
            }
            nelem = (size_t)v;
        } else {
            fprintf(stderr, "usage: bench_kernels [--quick] [--filter TEXT] [--n ELEMENTS (1..%d)]\n", MAX_N);
            return 2;
        }
    }
    buf_x = aligned_alloc(64, 16 * (size_t)MAX_N);
    buf_y = aligned_alloc(64, 16 * (size_t)MAX_N);
    buf_z = aligned_alloc(64, 16 * (size_t)MAX_N);
    if (!buf_x || !buf_y || !buf_z) {
        fprintf(stderr, "bench_kernels: out of memory\n");
        return 1;
    }
    printf("# mxp per-kernel rows (bench_kernels), ISA level %s, one thread; the twin's median over the row's: x\n",
           mxp_isa_name(mxp_isa_current()));
    bench_ops();
    bench_quant();
    bench_lut();
    bench_cvt();
    bench_gemm();
    free(buf_x);
    free(buf_y);
    free(buf_z);
    if (!rows_printed && !filter) {
        fprintf(stderr, "bench_kernels: no kernel list row ran\n");
        return 1;
    }
    printf("# %d rows\n", rows_printed);
    return 0;
}
