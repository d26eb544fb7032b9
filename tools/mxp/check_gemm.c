/* mxp check gemm — runs every GEMM implementation this machine has (each
 * ISA level, the scalar reference included) over a set of shapes and
 * transposes for each input dtype, against a float64 reference (integer
 * GEMM: exact int64 sums), and prints the largest error of each as a
 * table.  Exit 1 if one exceeds its documented tolerance (integer: 0).
 * Then what a float16- or bfloat16-accumulating unit gives on the same
 * inputs (opts.acc_dtype, an emulation): its error next to float32's,
 * informational (no tolerance). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct shape { size_t m, n, k; } shape;

static const shape quick[] = { { 1, 1, 1 }, { 7, 31, 65 }, { 33, 17, 129 }, { 64, 65, 300 } };
static const shape full[] = { { 1, 1, 1 }, { 3, 7, 2 }, { 7, 31, 65 }, { 33, 17, 129 }, { 64, 65, 300 },
                              { 97, 131, 511 }, { 200, 150, 1030 } };

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random values in [-1, 1] (positive: [0, 1]) rounded to dt; also
 * returned as float64. */
static void *fill(mxp_dtype dt, size_t count, uint64_t seed, double **as_f64, bool positive)
{
    double *d = malloc(count * sizeof *d + 8);
    void *x = malloc(count * mxp_dtype_itemsize(dt) + 8);
    for (size_t i = 0; i < count; i++) {
        d[i] = (double)(next(&seed) >> 11) * 0x1p-52 - 1.0;
        d[i] = positive ? fabs(d[i]) : d[i];
    }
    mxp_convert(x, dt, d, MXP_F64, count, NULL);
    mxp_convert(d, MXP_F64, x, dt, count, NULL);
    *as_f64 = d;
    return x;
}

/* Max over C of |got - ref| / sum_k |a b| (the scale BLAS tests use),
 * with accumulator acc (0: the default). */
static double case_error(mxp_dtype dt, const shape *s, int ta, int tb, mxp_dtype acc, bool positive, mxp_status *st)
{
    double *a64, *b64;
    void *a = fill(dt, s->m * s->k, 1 + s->m, &a64, positive), *b = fill(dt, s->k * s->n, 2 + s->n, &b64, positive);
    mxp_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.acc_dtype = acc;
    mxp_dtype ct = dt == MXP_F64 ? MXP_F64 : MXP_F32;
    double *c = malloc(s->m * s->n * sizeof *c + 8);
    void *cc = malloc(s->m * s->n * 8 + 8);
    size_t lda = ta ? s->m : s->k, ldb = tb ? s->k : s->n;
    *st = mxp_gemm(ta, tb, s->m, s->n, s->k, 1.0, a, dt, lda, b, dt, ldb, 0.0, cc, ct, s->n, &o);
    double worst = 0;
    if (*st == MXP_OK) {
        mxp_convert(c, MXP_F64, cc, ct, s->m * s->n, NULL);
        for (size_t i = 0; i < s->m; i++)
            for (size_t j = 0; j < s->n; j++) {
                double ref = 0, scale = 0;
                for (size_t p = 0; p < s->k; p++) {
                    double x = ta ? a64[p * s->m + i] : a64[i * s->k + p];
                    double y = tb ? b64[j * s->k + p] : b64[p * s->n + j];
                    ref += x * y;
                    scale += fabs(x * y);
                }
                double e = fabs(c[i * s->n + j] - ref) / (scale > 0 ? scale : 1);
                worst = e > worst ? e : worst;
            }
    }
    free(a);
    free(b);
    free(a64);
    free(b64);
    free(c);
    free(cc);
    return worst;
}

/* Integer GEMM, A (uint8 or int8) by int8 B into int32 C with zero points,
 * against exact int64 sums: the largest |C - sum| (0 when exact). */
static double int8_case_error(mxp_dtype at, const shape *s, int ta, int tb, mxp_status *st)
{
    uint64_t seed = 7 + s->m * 31 + s->k;
    unsigned char *a = malloc(s->m * s->k + 1), *b = malloc(s->k * s->n + 1);
    int32_t *c = malloc(s->m * s->n * sizeof *c + 4);
    for (size_t i = 0; i < s->m * s->k; i++)
        a[i] = (unsigned char)next(&seed);
    for (size_t i = 0; i < s->k * s->n; i++)
        b[i] = (unsigned char)next(&seed);
    mxp_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.a_zero_point = at == MXP_U8 ? 131 : -9;
    o.b_zero_point = 5;
    size_t lda = ta ? s->m : s->k, ldb = tb ? s->k : s->n;
    *st = mxp_gemm(ta, tb, s->m, s->n, s->k, 1.0, a, at, lda, b, MXP_S8, ldb, 0.0, c, MXP_S32, s->n, &o);
    double worst = 0;
    for (size_t i = 0; i < s->m && *st == MXP_OK; i++)
        for (size_t j = 0; j < s->n; j++) {
            int64_t ref = 0;
            for (size_t p = 0; p < s->k; p++) {
                const unsigned char x = ta ? a[p * s->m + i] : a[i * s->k + p];
                const int64_t y = (int8_t)(tb ? b[j * s->k + p] : b[p * s->n + j]);
                ref += ((at == MXP_U8 ? (int64_t)x : (int64_t)(int8_t)x) - o.a_zero_point) * (y - o.b_zero_point);
            }
            double e = fabs((double)(c[i * s->n + j] - ref));
            worst = e > worst ? e : worst;
        }
    free(a);
    free(b);
    free(c);
    return worst;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp check gemm [--full] [--json]\n\n"
               "Runs mxp_gemm at every ISA level this machine has (scalar reference included)\n"
               "for float64, float32, float16, bfloat16, float8_e4m3fn and float8_e5m2 inputs\n"
               "(C float64 for float64, else float32), all four transposes, over a set of\n"
               "shapes (--full: larger ones), against a float64 reference.  Prints the largest\n"
               "error relative to sum_k |a b| per implementation, and the tolerance:\n"
               "K * 4 * eps of the accumulator (inputs convert exactly, so only the\n"
               "accumulation rounds).  Integer GEMM (uint8 or int8 A by int8 B into int32\n"
               "with zero points) against exact sums: tolerance 0.  Exit status 1 if any\n"
               "exceeds its tolerance.\n\n"
               "Then low-precision accumulators: float16 and bfloat16 inputs (16 x 16 x K,\n"
               "K = 256 and 4096, values in [-1, 1] and in [0, 1]) multiplied with the sum\n"
               "rounded to float16, bfloat16 or float32 after every addition of a float32\n"
               "product (acc_dtype; float16/bfloat16 are a portable emulation of such\n"
               "hardware, docs/gemm.md), the same error measure: what an fp16- or\n"
               "bf16-accumulating unit would give.  Informational: no tolerance.\n\n"
               "  --full   larger shapes too\n"
               "  --json   one JSON object: full, results (one object per implementation:\n"
               "           inputs, level, kernel, max_error, tolerance, ok), accumulators\n"
               "           (inputs, values, k, acc, max_error), ok\n");
}

static void print_row(bool json, const char *inputs, int isa, const char *kernel, double worst, double tol)
{
    if (json) {
        cli_json_object(NULL);
        cli_json_str("inputs", inputs);
        cli_json_str("level", mxp_isa_name((mxp_isa)isa));
        cli_json_str("kernel", kernel);
        cli_json_num("max_error", worst);
        cli_json_num("tolerance", tol);
        cli_json_bool("ok", worst <= tol);
        cli_json_close();
    } else {
        printf("%-14s %-11s %-38s %12.3e %12.3e  %s\n", inputs, mxp_isa_name((mxp_isa)isa), kernel, worst, tol,
               worst <= tol ? "ok" : "EXCEEDS");
    }
}

/* The largest error over the shapes and transposes at the current level. */
static mxp_status worst_error(mxp_dtype t, const shape *shapes, size_t nshapes, double *worst)
{
    *worst = 0;
    for (size_t s = 0; s < nshapes; s++)
        for (int tr = 0; tr < 4; tr++) {
            mxp_status st;
            double e = case_error(t, &shapes[s], tr >> 1, tr & 1, 0, false, &st);
            if (st != MXP_OK)
                return st;
            *worst = e > *worst ? e : *worst;
        }
    return MXP_OK;
}

/* The accumulator table (after the implementations' one, whose JSON array
 * it closes). */
static mxp_status accumulators(bool json)
{
    const mxp_dtype inputs[] = { MXP_F16, MXP_BF16 }, accs[] = { MXP_F16, MXP_BF16, MXP_F32 };
    const size_t ks[] = { 256, 4096 };
    if (json) {
        cli_json_close();
        cli_json_array("accumulators");
    } else {
        printf("\nlow-precision accumulators (16 x 16 x K; error relative to sum |a b|)\n");
        printf("%-10s %-8s %6s   %-10s %12s\n", "inputs", "values", "K", "acc", "max error");
    }
    for (size_t t = 0; t < 2; t++)
        for (int positive = 0; positive < 2; positive++)
            for (size_t q = 0; q < 2; q++)
                for (size_t r = 0; r < 3; r++) {
                    const shape s = { 16, 16, ks[q] };
                    mxp_status st;
                    const double e = case_error(inputs[t], &s, 0, 0, accs[r], positive, &st);
                    if (st != MXP_OK)
                        return st;
                    const char *values = positive ? "[0,1]" : "[-1,1]";
                    if (json) {
                        cli_json_object(NULL);
                        cli_json_str("inputs", mxp_dtype_name(inputs[t]));
                        cli_json_str("values", values);
                        cli_json_num("k", (double)ks[q]);
                        cli_json_str("acc", mxp_dtype_name(accs[r]));
                        cli_json_num("max_error", e);
                        cli_json_close();
                    } else {
                        printf("%-10s %-8s %6zu   %-10s %12.3e\n", mxp_dtype_name(inputs[t]), values, ks[q],
                               mxp_dtype_name(accs[r]), e);
                    }
                }
    if (json)
        cli_json_close();
    return MXP_OK;
}

int cli_check_gemm(int argc, char **argv)
{
    bool use_full = false, json = false;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        }
        if (!strcmp(argv[i], "--full"))
            use_full = true;
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else
            return cli_bad_argument("check gemm", argv[i]);
    }
    const shape *shapes = use_full ? full : quick;
    const size_t nshapes = use_full ? sizeof full / sizeof full[0] : sizeof quick / sizeof quick[0];
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2 };
    const mxp_isa saved = mxp_get_isa();
    size_t kmax = 0;
    for (size_t s = 0; s < nshapes; s++)
        kmax = shapes[s].k > kmax ? shapes[s].k : kmax;
    if (json) {
        cli_json_begin("check gemm");
        cli_json_bool("full", use_full);
        cli_json_array("results");
    } else {
        printf("%-14s %-11s %-38s %12s %12s\n", "inputs", "level", "kernel", "max error", "tolerance");
    }
    int bad = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const double eps = types[t] == MXP_F64 ? 0x1p-52 : 0x1p-23;
        const double tol = (double)kmax * 4 * eps;
        for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
            mxp_set_isa((mxp_isa)isa);
            double worst;
            mxp_status st = worst_error(types[t], shapes, nshapes, &worst);
            if (st != MXP_OK) {
                mxp_set_isa(saved);
                return cli_mxp_error("check gemm", NULL, st);
            }
            bad += !(worst <= tol);
            print_row(json, mxp_dtype_name(types[t]), isa, mxp_gemm_kernel_name(types[t], types[t], NULL), worst, tol);
        }
    }
    const mxp_dtype int_types[] = { MXP_U8, MXP_S8 };
    for (size_t t = 0; t < sizeof int_types / sizeof int_types[0]; t++)
        for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
            mxp_set_isa((mxp_isa)isa);
            double worst = 0;
            for (size_t s = 0; s < nshapes; s++)
                for (int tr = 0; tr < 4; tr++) {
                    mxp_status st;
                    double e = int8_case_error(int_types[t], &shapes[s], tr >> 1, tr & 1, &st);
                    if (st != MXP_OK) {
                        mxp_set_isa(saved);
                        return cli_mxp_error("check gemm", NULL, st);
                    }
                    worst = e > worst ? e : worst;
                }
            bad += worst != 0;
            char inputs[32];
            snprintf(inputs, sizeof inputs, "%s x int8", mxp_dtype_name(int_types[t]));
            print_row(json, inputs, isa, mxp_gemm_kernel_name(int_types[t], MXP_S8, NULL), worst, 0.0);
        }
    mxp_set_isa(saved);
    mxp_status st = accumulators(json);
    if (st != MXP_OK)
        return cli_mxp_error("check gemm", NULL, st);
    if (json) {
        cli_json_bool("ok", bad == 0);
        cli_json_end();
    } else {
        printf("%s\n", bad ? "some implementations exceed their tolerance" : "every implementation is within tolerance");
    }
    return bad ? CLI_FAILED : CLI_OK;
}

int cli_check(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        fprintf(argc < 2 ? stderr : stdout, "usage: mxp check gemm [--full] [--json]\n"
                                            "       mxp check op NAME [--plugin PATH] [--ref F] [--json]\n\n"
                                            "  gemm   every GEMM implementation against a float64 reference\n"
                                            "  op     a plugin operator against its reference, in ulp\n");
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (!strcmp(argv[1], "gemm"))
        return cli_check_gemm(argc - 1, argv + 1);
    if (!strcmp(argv[1], "op"))
        return cli_check_op(argc - 1, argv + 1);
    return cli_usage_error("check", "unknown check '%s'", argv[1]);
}
