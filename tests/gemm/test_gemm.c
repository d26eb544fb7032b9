/* mxp_gemm against a reference GEMM computed here in long double: every
 * transpose pair and edge shape, tolerances per accumulator and output
 * dtype, exact results where the arithmetic is exact (small integers,
 * subnormal inputs), leading dimensions with padding and guard bytes that
 * must survive, alpha/beta semantics (beta == 0 ignores NaN in C, alpha == 0
 * does not read A or B), every ISA level, any thread count, directed
 * rounding of the output, bad arguments (C untouched; sizes beyond the
 * address space checked in a child process), allocation failures and kernel
 * names. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid, alarm */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/alloc_failures.h"
#include "support/matrix.h"
#include "support/prng.h"

#define INPUT_FILL 0xff, 0xff  /* NaN in every float dtype: a read of padding poisons the result */
#define OUTPUT_FILL 0xfe, 0xed

static double *alloc_f64(size_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    assert_non_null(p);
    return p;
}

/* ---- the oracle ---------------------------------------------------------- */

/* ref = alpha * op(A) op(B) + beta * C0 in long double, rounded once to
 * double.  av is A as stored (rows x cols, compact: K x M if ta else M x K),
 * bv likewise (N x K if tb else K x N), c0 is M x N.  alpha == 0 ignores A and
 * B, beta == 0 ignores C0 (NaN included), as BLAS does.  bound (optional) gets
 * |alpha| sum_k |a b| + |beta c0|, the scale of the rounding errors. */
static void ref_gemm(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const double *av,
                     const double *bv, double beta, const double *c0, double *ref, double *bound)
{
    double *opa = alloc_f64(m * k), *opbt = alloc_f64(n * k);
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++)
            opa[i * k + p] = ta ? av[p * m + i] : av[i * k + p];
    for (size_t j = 0; j < n; j++)
        for (size_t p = 0; p < k; p++)
            opbt[j * k + p] = tb ? bv[j * k + p] : bv[p * n + j];
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            const double *x = opa + i * k, *y = opbt + j * k;
            long double s = 0;
            double abs_sum = 0;
            for (size_t p = 0; p < k; p++) {
                long double prod = (long double)x[p] * y[p];
                s += prod;
                abs_sum += fabs((double)prod);
            }
            long double r = alpha != 0 ? (long double)alpha * s : 0.0L;
            double b = alpha != 0 ? fabs(alpha) * abs_sum : 0.0;
            if (beta != 0) {
                r += (long double)beta * c0[i * n + j];
                b += fabs(beta * c0[i * n + j]);
            }
            ref[i * n + j] = (double)r;
            if (bound)
                bound[i * n + j] = b;
        }
    free(opa);
    free(opbt);
}

/* ---- one GEMM case, checked ----------------------------------------------- */

enum gen { GEN_UNIFORM, GEN_INT, GEN_GRID, GEN_NAN };
enum check { CHECK_TOL, CHECK_EXACT };

typedef struct gemm_case {
    mxp_trans ta, tb;
    size_t m, n, k;
    double alpha, beta;
    mxp_dtype at, bt, ct;
    size_t pad_a, pad_b, pad_c;  /* ld = row length + pad */
    const mxp_gemm_opts *opts;
    enum gen gen_ab, gen_c;
    int vmax;                    /* GEN_INT: integers in [-vmax, vmax] */
    enum check check;
    uint64_t seed;
} gemm_case;

static double gen_value(enum gen g, int vmax, uint64_t *s)
{
    switch (g) {
    case GEN_INT: return prng_int(s, vmax);
    case GEN_GRID: return prng_int(s, 128) / 128.0; /* i/128: exact in every float type but fp8 */
    case GEN_NAN: return NAN;
    default: return prng_range(s, -1.0, 1.0);
    }
}

static mxp_dtype acc_of(mxp_dtype at, mxp_dtype bt, const mxp_gemm_opts *o)
{
    if (o && o->acc_dtype)
        return o->acc_dtype;
    return at == MXP_F64 || bt == MXP_F64 ? MXP_F64 : MXP_F32;
}

/* Documented tolerance: |got - ref| <= acc_tol * bound + half an ulp of C's
 * dtype (relative 2^-(mant+1) of the accumulated value, plus half the
 * smallest subnormal) when C is narrower than the accumulator. */
static double acc_tolerance(mxp_dtype acc, size_t k)
{
    const double eps = acc == MXP_F64 ? 0x1p-52 : 0x1p-23;
    return (double)(k + 2) * eps * 4; /* + 2: alpha and beta * C */
}

static void describe(char *d, size_t size, const gemm_case *gc)
{
    snprintf(d, size, "%s x %s -> %s (acc %s), ta=%d tb=%d m=%zu n=%zu k=%zu pads %zu/%zu/%zu alpha=%g beta=%g isa %s",
             mxp_dtype_name(gc->at), mxp_dtype_name(gc->bt), mxp_dtype_name(gc->ct),
             mxp_dtype_name(acc_of(gc->at, gc->bt, gc->opts)), (int)gc->ta, (int)gc->tb, gc->m, gc->n, gc->k,
             gc->pad_a, gc->pad_b, gc->pad_c, gc->alpha, gc->beta, mxp_isa_name(mxp_isa_current()));
}

/* Runs the case: padding and guards of C unchanged, A and B unchanged, the
 * result within tolerance of (or, CHECK_EXACT, equal to the correctly rounded)
 * reference.  Returns a copy of C's bytes (rows * ldc elements) to free. */
static unsigned char *run_case(const gemm_case *gc)
{
    char desc[512];
    describe(desc, sizeof desc, gc);
    const size_t m = gc->m, n = gc->n, k = gc->k;
    const size_t ar = gc->ta ? k : m, ac = gc->ta ? m : k, br = gc->tb ? n : k, bc = gc->tb ? k : n;
    mat A = mat_new(gc->at, ar, ac, ld_for(ac, gc->pad_a), INPUT_FILL);
    mat B = mat_new(gc->bt, br, bc, ld_for(bc, gc->pad_b), INPUT_FILL);
    mat C = mat_new(gc->ct, m, n, ld_for(n, gc->pad_c), OUTPUT_FILL);
    double *av = alloc_f64(ar * ac), *bv = alloc_f64(br * bc), *cv = alloc_f64(m * n);
    uint64_t s = prng_seed(gc->seed);
    for (size_t i = 0; i < ar * ac; i++)
        av[i] = gen_value(gc->gen_ab, gc->vmax, &s);
    for (size_t i = 0; i < br * bc; i++)
        bv[i] = gen_value(gc->gen_ab, gc->vmax, &s);
    for (size_t i = 0; i < m * n; i++)
        cv[i] = gen_value(gc->gen_c, gc->vmax, &s);
    mat_set(&A, av);
    mat_set(&B, bv);
    mat_set(&C, cv);
    mat_get(&A, av); /* the values as stored are what the reference multiplies */
    mat_get(&B, bv);
    mat_get(&C, cv);
    unsigned char *a0 = dup_bytes(A.buf, A.bytes), *b0 = dup_bytes(B.buf, B.bytes), *c0 = dup_bytes(C.buf, C.bytes);

    mxp_status st = mxp_gemm(gc->ta, gc->tb, m, n, k, gc->alpha, A.data, A.dt, A.ld, B.data, B.dt, B.ld, gc->beta,
                             C.data, C.dt, C.ld, gc->opts);
    if (st != MXP_OK)
        fail_msg("%s: %s (%s)", desc, mxp_status_str(st), mxp_last_error());
    if (memcmp(A.buf, a0, A.bytes))
        fail_msg("%s: A (or bytes around it) was modified", desc);
    if (memcmp(B.buf, b0, B.bytes))
        fail_msg("%s: B (or bytes around it) was modified", desc);
    mat_expect_padding_untouched(&C, c0, desc);

    double *ref = alloc_f64(m * n), *bound = alloc_f64(m * n), *got = alloc_f64(m * n);
    ref_gemm(gc->ta, gc->tb, m, n, k, gc->alpha, av, bv, gc->beta, cv, ref, bound);
    mat_get(&C, got);
    const mxp_dtype acc = acc_of(gc->at, gc->bt, gc->opts);
    const mxp_dtype_traits *tc = mxp_dtype_get_traits(gc->ct), *tacc = mxp_dtype_get_traits(acc);
    const bool narrow = tc->mant_bits < tacc->mant_bits;
    const double half_ulp = narrow ? ldexp(1.0, -(tc->mant_bits + 1)) : 0.0;
    const double abs_tol = narrow ? tc->min_subnormal / 2 : 0.0;
    const double tol = acc_tolerance(acc, k);
    double *want = NULL;
    if (gc->check == CHECK_EXACT) {
        /* The correctly rounded reference, in C's dtype, with the options' rounding. */
        unsigned char *tmp = malloc((m * n + 1) * tc->itemsize);
        assert_non_null(tmp);
        want = alloc_f64(m * n);
        assert_int_equal(mxp_convert(tmp, gc->ct, ref, MXP_F64, m * n, gc->opts ? &gc->opts->convert : NULL), MXP_OK);
        assert_int_equal(mxp_convert(want, MXP_F64, tmp, gc->ct, m * n, NULL), MXP_OK);
        free(tmp);
    }
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            const double g = got[i * n + j], r = ref[i * n + j];
            if (want) {
                const double w = want[i * n + j];
                if (isnan(w) ? !isnan(g) : g != w)
                    fail_msg("%s: C[%zu][%zu] = %.17g, want exactly %.17g (reference %.17g)", desc, i, j, g, w, r);
                continue;
            }
            if (isnan(r) || isinf(r)) {
                if (isnan(r) ? !isnan(g) : g != r)
                    fail_msg("%s: C[%zu][%zu] = %.17g, want %g", desc, i, j, g, r);
                continue;
            }
            const double bd = bound[i * n + j], e = tol * bd;
            const double lim = e + half_ulp * (fabs(r) + e) + abs_tol;
            if (!(fabs(g - r) <= lim))
                fail_msg("%s: C[%zu][%zu] = %.17g, reference %.17g: error %.3g > tolerance %.3g (scale %.3g)", desc,
                         i, j, g, r, fabs(g - r), lim, bd);
        }
    unsigned char *result = dup_bytes(C.data, m * C.ld * C.isz);
    free(want);
    free(ref);
    free(bound);
    free(got);
    free(a0);
    free(b0);
    free(c0);
    free(av);
    free(bv);
    free(cv);
    mat_free(&A);
    mat_free(&B);
    mat_free(&C);
    return result;
}

static void check_case(const gemm_case *gc)
{
    free(run_case(gc));
}

static gemm_case base_case(mxp_dtype at, mxp_dtype bt, mxp_dtype ct)
{
    gemm_case gc;
    memset(&gc, 0, sizeof gc);
    gc.alpha = 1.0;
    gc.beta = 0.0;
    gc.at = at;
    gc.bt = bt;
    gc.ct = ct;
    gc.gen_ab = GEN_UNIFORM;
    gc.gen_c = GEN_UNIFORM;
    gc.vmax = 4;
    gc.check = CHECK_TOL;
    gc.seed = 1;
    return gc;
}


/* ---- 1. the oracle --------------------------------------------------------- */

static void test_gemm_reference_oracle_is_right(void **state)
{
    (void)state;
    /* [1 2 3; 4 5 6] [7 8; 9 10; 11 12] = [58 64; 139 154] */
    const double a[6] = { 1, 2, 3, 4, 5, 6 }, at[6] = { 1, 4, 2, 5, 3, 6 };
    const double b[6] = { 7, 8, 9, 10, 11, 12 }, bt[6] = { 7, 9, 11, 8, 10, 12 };
    const double c0[4] = { 1, -1, NAN, 2 };
    const double plain[4] = { 58, 64, 139, 154 }, general[4] = { 115.5, 128.5, NAN, 307 };
    for (int t = 0; t < 4; t++) {
        const mxp_trans ta = trans_pairs[t][0], tb = trans_pairs[t][1];
        double r[4], bound[4];
        ref_gemm(ta, tb, 2, 2, 3, 1.0, ta ? at : a, tb ? bt : b, 0.0, c0, r, bound); /* beta 0: NaN in C0 ignored */
        for (int i = 0; i < 4; i++) {
            assert_true(r[i] == plain[i]);
            assert_true(bound[i] == plain[i]);
        }
        ref_gemm(ta, tb, 2, 2, 3, 2.0, ta ? at : a, tb ? bt : b, -0.5, c0, r, NULL);
        for (int i = 0; i < 4; i++)
            assert_true(isnan(general[i]) ? isnan(r[i]) : r[i] == general[i]);
        /* alpha == 0 ignores NaN in A */
        const double anan[6] = { NAN, NAN, NAN, NAN, NAN, NAN };
        ref_gemm(ta, tb, 2, 2, 3, 0.0, anan, tb ? bt : b, 3.0, c0, r, NULL);
        assert_true(r[0] == 3.0 && r[1] == -3.0 && isnan(r[2]) && r[3] == 6.0);
    }
    /* and mxp_gemm agrees exactly on it, float32 */
    for (int t = 0; t < 4; t++) {
        const mxp_trans ta = trans_pairs[t][0], tb = trans_pairs[t][1];
        float fa[6], fb[6], fc[4] = { 1, -1, 5, 2 };
        for (int i = 0; i < 6; i++) {
            fa[i] = (float)(ta ? at[i] : a[i]);
            fb[i] = (float)(tb ? bt[i] : b[i]);
        }
        assert_int_equal(mxp_gemm(ta, tb, 2, 2, 3, 2.0, fa, MXP_F32, ta ? 2 : 3, fb, MXP_F32, tb ? 3 : 2, -0.5, fc,
                                  MXP_F32, 2, NULL), MXP_OK);
        assert_true(fc[0] == 115.5f && fc[1] == 128.5f && fc[2] == 275.5f && fc[3] == 307.0f);
    }
}

/* ---- 2. shapes x transposes, float32 and float64 ---------------------------- */

static const size_t shape_set[] = { 0, 1, 2, 3, 7, 31, 64, 65, 127, 131 };

static void test_gemm_f32_and_f64_match_reference_on_every_shape_and_transpose(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_F64 };
    const size_t ks[] = { 1, 7, 64, 131 };
    uint64_t seed = 100;
    for (size_t d = 0; d < NELEMS(types); d++)
        for (int t = 0; t < 4; t++) {
            gemm_case gc = base_case(types[d], types[d], types[d]);
            gc.ta = trans_pairs[t][0];
            gc.tb = trans_pairs[t][1];
            for (size_t im = 0; im < NELEMS(shape_set); im++)
                for (size_t in = 0; in < NELEMS(shape_set); in++)
                    for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                        gc.m = shape_set[im];
                        gc.n = shape_set[in];
                        gc.k = ks[ik];
                        gc.seed = seed++;
                        check_case(&gc);
                    }
            gc.m = gc.n = 31;
            for (size_t ik = 0; ik < NELEMS(shape_set); ik++) {
                gc.k = shape_set[ik];
                gc.seed = seed++;
                check_case(&gc);
            }
        }
}

/* ---- low-precision and mixed dtypes, accumulator option -------------------- */

static void test_gemm_low_precision_and_mixed_dtypes_within_tolerance(void **state)
{
    (void)state;
    static const mxp_gemm_opts acc64 = { .acc_dtype = MXP_F64 };
    static const mxp_gemm_opts acc32 = { .acc_dtype = MXP_F32 };
    const struct {
        mxp_dtype a, b, c;
        const mxp_gemm_opts *opts;
    } combos[] = {
        { MXP_BF16, MXP_BF16, MXP_F32, NULL },  { MXP_F16, MXP_F16, MXP_F32, NULL },
        { MXP_E4M3, MXP_E4M3, MXP_F32, NULL },  { MXP_E5M2, MXP_E5M2, MXP_F32, NULL },
        { MXP_BF16, MXP_F32, MXP_F32, NULL },   { MXP_F16, MXP_F32, MXP_F32, NULL },
        { MXP_E4M3, MXP_E5M2, MXP_BF16, NULL }, { MXP_BF16, MXP_BF16, MXP_BF16, NULL },
        { MXP_F16, MXP_F16, MXP_F16, NULL },    { MXP_F32, MXP_F32, MXP_E4M3, NULL },
        { MXP_F32, MXP_F32, MXP_E5M2, NULL },   { MXP_F32, MXP_F32, MXP_F32, &acc64 },
        { MXP_F32, MXP_F32, MXP_BF16, &acc64 }, { MXP_BF16, MXP_F16, MXP_F64, &acc64 },
        { MXP_F64, MXP_F64, MXP_F32, NULL },    { MXP_F64, MXP_F64, MXP_BF16, NULL },
        { MXP_F64, MXP_F32, MXP_F64, NULL },    { MXP_BF16, MXP_BF16, MXP_F64, &acc32 },
    };
    const size_t mns[] = { 1, 3, 31, 65 }, ks[] = { 1, 7, 64, 131 };
    uint64_t seed = 5000;
    for (size_t c = 0; c < NELEMS(combos); c++)
        for (int t = 0; t < 4; t++)
            for (size_t im = 0; im < NELEMS(mns); im++)
                for (size_t in = 0; in < NELEMS(mns); in++)
                    for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                        gemm_case gc = base_case(combos[c].a, combos[c].b, combos[c].c);
                        gc.opts = combos[c].opts;
                        gc.ta = trans_pairs[t][0];
                        gc.tb = trans_pairs[t][1];
                        gc.m = mns[im];
                        gc.n = mns[in];
                        gc.k = ks[ik];
                        gc.alpha = (t & 1) ? 1.0 : 0.75;
                        gc.beta = (ik & 1) ? 0.0 : -0.5;
                        gc.seed = seed++;
                        check_case(&gc);
                    }
}

/* ---- shapes beyond the cache blocks (KC, MC, NC), alpha and beta -------- */

static void test_gemm_large_shapes_cross_every_cache_block(void **state)
{
    (void)state;
    const struct {
        size_t m, n, k;
    } shapes[] = { { 200, 70, 600 }, { 7, 2100, 300 }, { 97, 1029, 259 }, { 150, 40, 1100 } };
    const mxp_dtype types[] = { MXP_F32, MXP_F64 };
    uint64_t seed = 9000;
    for (size_t s = 0; s < NELEMS(shapes); s++) {
        for (size_t d = 0; d < NELEMS(types); d++)
            for (int t = 0; t < 4; t++) {
                gemm_case gc = base_case(types[d], types[d], types[d]);
                gc.ta = trans_pairs[t][0];
                gc.tb = trans_pairs[t][1];
                gc.m = shapes[s].m;
                gc.n = shapes[s].n;
                gc.k = shapes[s].k;
                gc.alpha = 2.0;
                gc.beta = -0.5;
                gc.pad_a = (size_t)t;
                gc.pad_c = 3;
                gc.seed = seed++;
                check_case(&gc);
            }
        /* narrow C through the workspace, beta applied once across K blocks */
        gemm_case gc = base_case(MXP_BF16, MXP_E4M3, MXP_BF16);
        gc.ta = MXP_TRANS;
        gc.m = shapes[s].m;
        gc.n = shapes[s].n;
        gc.k = shapes[s].k;
        gc.alpha = -1.5;
        gc.beta = 0.25;
        gc.pad_c = 1;
        gc.seed = seed++;
        check_case(&gc);
    }
}

/* Small M reads B in place (AVX-512: the direct 8 x 48 / 8 x 24 / bf16
 * 8 x 32 kernels with rank-16 steps): tiles one column short and over, K around the steps
 * and KC, padded B rows holding NaN that a stray read would show, at every
 * ISA level. */
static void test_gemm_small_m_reads_b_in_place_at_every_level(void **state)
{
    (void)state;
    const size_t ms[] = { 2, 8, 9, 16 }, ns[] = { 1, 47, 48, 49, 97 }, ks[] = { 1, 15, 17, 257 };
    const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_BF16 };
    uint64_t seed = 9500;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t d = 0; d < NELEMS(types); d++)
            for (size_t im = 0; im < NELEMS(ms); im++)
                for (size_t in = 0; in < NELEMS(ns); in++)
                    for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                        gemm_case gc = base_case(types[d], types[d], types[d]);
                        gc.ta = (im + ik) % 2 ? MXP_TRANS : MXP_NO_TRANS;
                        gc.m = ms[im];
                        gc.n = ns[in];
                        gc.k = ks[ik];
                        gc.alpha = 2.0;
                        gc.beta = in % 2 ? -0.5 : 0.0;
                        gc.pad_a = 1;
                        gc.pad_b = 3;
                        gc.pad_c = 2;
                        gc.seed = seed++;
                        check_case(&gc);
                    }
    }
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
}

/* Up to n = 1024 the float32 and bfloat16 kernels read a non-transposed A
 * where it is stored (rows beyond the tile's never read: the padding of A
 * is NaN); a transposed copy of the same A is packed.  Both sum in the same
 * order, so C must be identical bit for bit, on every edge of MR and KC. */
static void test_gemm_a_read_in_place_equals_a_packed_bit_for_bit(void **state)
{
    (void)state;
    /* k around the KC steps: f32 512, bf16 1024 (AVX-512), 256 elsewhere */
    const size_t ms[] = { 1, 5, 6, 7, 13, 71, 72, 73, 150 }, ks[] = { 2, 16, 254, 256, 258, 514, 1030 };
    const size_t ns[] = { 1, 33, 100 };
    const mxp_dtype types[] = { MXP_F32, MXP_BF16 };
    uint64_t seed = prng_seed(7700);
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t d = 0; d < NELEMS(types); d++)
            for (size_t im = 0; im < NELEMS(ms); im++)
                for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                    const size_t m = ms[im], k = ks[ik], n = ns[(im + ik) % NELEMS(ns)];
                    mat A = mat_new(types[d], m, k, k + 3, INPUT_FILL), At = mat_new(types[d], k, m, m + 1, INPUT_FILL);
                    mat B = mat_new(types[d], k, n, n, INPUT_FILL);
                    mat C1 = mat_new(MXP_F32, m, n, n, OUTPUT_FILL), C2 = mat_new(MXP_F32, m, n, n, OUTPUT_FILL);
                    double *av = alloc_f64(m * k), *atv = alloc_f64(m * k), *bv = alloc_f64(k * n);
                    for (size_t i = 0; i < m * k; i++)
                        av[i] = prng_range(&seed, -1.0, 1.0);
                    for (size_t i = 0; i < k * n; i++)
                        bv[i] = prng_range(&seed, -1.0, 1.0);
                    for (size_t i = 0; i < m; i++)
                        for (size_t p = 0; p < k; p++)
                            atv[p * m + i] = av[i * k + p];
                    mat_set(&A, av);
                    mat_set(&At, atv);
                    mat_set(&B, bv);
                    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.5, A.data, A.dt, A.ld, B.data,
                                              B.dt, B.ld, 0.0, C1.data, C1.dt, C1.ld, NULL),
                                     MXP_OK);
                    assert_int_equal(mxp_gemm(MXP_TRANS, MXP_NO_TRANS, m, n, k, 1.5, At.data, At.dt, At.ld, B.data,
                                              B.dt, B.ld, 0.0, C2.data, C2.dt, C2.ld, NULL),
                                     MXP_OK);
                    if (memcmp(C1.buf, C2.buf, C1.bytes))
                        fail_msg("%s m=%zu n=%zu k=%zu isa %s: A in place and A packed differ",
                                 mxp_dtype_name(types[d]), m, n, k, mxp_isa_name(mxp_isa_current()));
                    float chk;
                    memcpy(&chk, C1.data + ((m - 1) * n + n - 1) * 4, 4);
                    assert_false(isnan(chk)); /* A's NaN padding was not read */
                    free(av);
                    free(atv);
                    free(bv);
                    mat_free(&A);
                    mat_free(&At);
                    mat_free(&B);
                    mat_free(&C1);
                    mat_free(&C2);
                }
    }
}

/* The float8/6/4 types fit bfloat16 exactly: where their GEMM takes the
 * same kernel as bfloat16's (every level: at avx512bf16 and amx both go
 * through the vdpbf16ps or tile kernel, widened while packing), the
 * products of their values and of the same
 * values stored as bfloat16 are the same bits -- every transpose, k around
 * the tile's 32 and the KC step, edges of the 32 x 32 tile, NaN included. */
static void test_gemm_narrow_floats_equal_their_bf16_values_on_the_same_kernel(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_E4M3, MXP_E5M2, MXP_E3M4, MXP_E4M3FNUZ, MXP_E5M2FNUZ, MXP_E2M3, MXP_E2M1 };
    const size_t shapes[][3] = { { 1, 1, 1 }, { 5, 7, 31 }, { 33, 40, 33 }, { 32, 32, 64 }, { 70, 65, 1030 },
                                 { 17, 100, 95 } };
    uint64_t seed = prng_seed(8811);
    size_t compared = 0;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t d = 0; d < NELEMS(types); d++) {
            const mxp_dtype t = types[d];
            if (strcmp(mxp_gemm_kernel_name(t, t, NULL), mxp_gemm_kernel_name(MXP_BF16, MXP_BF16, NULL)) != 0)
                continue;
            for (size_t sh = 0; sh < NELEMS(shapes); sh++)
                for (int tr = 0; tr < 4; tr++) {
                    const size_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
                    const int ta = tr & 1, tb = tr >> 1;
                    const size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
                    double *av = alloc_f64(ar * ac), *bv = alloc_f64(br * bc);
                    for (size_t i = 0; i < ar * ac; i++)
                        av[i] = prng_range(&seed, -4.0, 4.0);
                    for (size_t i = 0; i < br * bc; i++)
                        bv[i] = prng_range(&seed, -4.0, 4.0);
                    if (sh == 2 && mxp_dtype_get_traits(t)->has_nan)
                        av[3] = NAN;
                    mat A = mat_new(t, ar, ac, ac, INPUT_FILL), B = mat_new(t, br, bc, bc, INPUT_FILL);
                    mat A16 = mat_new(MXP_BF16, ar, ac, ac, INPUT_FILL), B16 = mat_new(MXP_BF16, br, bc, bc, INPUT_FILL);
                    mat_set(&A, av);
                    mat_set(&B, bv);
                    mat_get(&A, av); /* the narrow values, exact in bfloat16 */
                    mat_get(&B, bv);
                    mat_set(&A16, av);
                    mat_set(&B16, bv);
                    mat C = mat_new(MXP_F32, m, n, n, OUTPUT_FILL), C16 = mat_new(MXP_F32, m, n, n, OUTPUT_FILL);
                    const mxp_trans opa = ta ? MXP_TRANS : MXP_NO_TRANS, opb = tb ? MXP_TRANS : MXP_NO_TRANS;
                    assert_int_equal(mxp_gemm(opa, opb, m, n, k, 0.75, A.data, t, A.ld, B.data, t, B.ld, 0.0,
                                              C.data, MXP_F32, C.ld, NULL),
                                     MXP_OK);
                    assert_int_equal(mxp_gemm(opa, opb, m, n, k, 0.75, A16.data, MXP_BF16, A16.ld, B16.data,
                                              MXP_BF16, B16.ld, 0.0, C16.data, MXP_F32, C16.ld, NULL),
                                     MXP_OK);
                    if (memcmp(C.buf, C16.buf, C.bytes))
                        fail_msg("%s m=%zu n=%zu k=%zu ta=%d tb=%d isa %s: not the bits of the same bfloat16 values",
                                 mxp_dtype_name(t), m, n, k, ta, tb, mxp_isa_name(mxp_isa_current()));
                    compared++;
                    free(av);
                    free(bv);
                    mat_free(&A);
                    mat_free(&B);
                    mat_free(&A16);
                    mat_free(&B16);
                    mat_free(&C);
                    mat_free(&C16);
                }
        }
    }
    assert_true(compared > 0);
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    if (mxp_isa_current() == MXP_ISA_AMX) /* the tile kernel takes them (docs/gemm.md) */
        assert_string_equal(mxp_gemm_kernel_name(MXP_E4M3, MXP_E5M2, NULL), "mxp_bf16_gemm_ukernel_32x32__amx");
    if (mxp_isa_supported() >= MXP_ISA_AVX512BF16) { /* and the vdpbf16ps kernel */
        assert_int_equal(mxp_set_isa(MXP_ISA_AVX512BF16), MXP_OK);
        assert_string_equal(mxp_gemm_kernel_name(MXP_E4M3, MXP_E2M1, NULL), "mxp_bf16_gemm_ukernel_6x32__avx512bf16");
        mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    }
}

/* ---- 3. leading dimensions with padding, guards, inputs untouched --------- */

static void test_gemm_padded_leading_dimensions_leave_padding_guards_and_inputs_untouched(void **state)
{
    (void)state;
    /* run_case checks every byte of C's guards and padding, and A and B with
     * their padding (NaN there: a read would show in the result). */
    const mxp_dtype types[][3] = {
        { MXP_F32, MXP_F32, MXP_F32 }, { MXP_F64, MXP_F64, MXP_F64 }, { MXP_BF16, MXP_BF16, MXP_BF16 },
        { MXP_F16, MXP_F32, MXP_F32 }, { MXP_E4M3, MXP_E5M2, MXP_E4M3 }, { MXP_F32, MXP_F32, MXP_F64 },
    };
    const size_t pads[] = { 1, 5 };
    const size_t shapes[][3] = { { 1, 1, 1 }, { 3, 7, 5 }, { 13, 33, 17 }, { 65, 31, 70 }, { 7, 70, 300 } };
    uint64_t seed = 20000;
    for (size_t d = 0; d < NELEMS(types); d++)
        for (int t = 0; t < 4; t++)
            for (size_t p = 0; p < NELEMS(pads); p++)
                for (size_t s = 0; s < NELEMS(shapes); s++) {
                    gemm_case gc = base_case(types[d][0], types[d][1], types[d][2]);
                    gc.ta = trans_pairs[t][0];
                    gc.tb = trans_pairs[t][1];
                    gc.m = shapes[s][0];
                    gc.n = shapes[s][1];
                    gc.k = shapes[s][2];
                    gc.pad_a = pads[p];
                    gc.pad_b = pads[1 - p];
                    gc.pad_c = pads[p];
                    gc.beta = (s & 1) ? 0.5 : 0.0;
                    gc.seed = seed++;
                    check_case(&gc);
                }
}

/* ---- 4. alpha and beta ------------------------------------------------------ */

static void test_gemm_beta_zero_ignores_nan_and_inf_in_c(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_BF16, MXP_F16, MXP_E5M2 };
    uint64_t seed = 30000;
    for (size_t d = 0; d < NELEMS(types); d++)
        for (int t = 0; t < 4; t++) {
            gemm_case gc = base_case(types[d] == MXP_F64 ? MXP_F64 : MXP_F32, types[d] == MXP_F64 ? MXP_F64 : MXP_F32,
                                     types[d]);
            gc.ta = trans_pairs[t][0];
            gc.tb = trans_pairs[t][1];
            gc.m = 19;
            gc.n = 37;
            gc.k = 300;
            gc.gen_c = GEN_NAN;
            gc.pad_c = 2;
            gc.seed = seed++;
            check_case(&gc); /* the reference ignores C: every element must be finite and right */
        }
    /* infinities in C too, by hand */
    float c[4] = { INFINITY, -INFINITY, NAN, -NAN };
    const float a[2] = { 1, 2 }, b[2] = { 3, 4 };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 1, 1.0, a, MXP_F32, 1, b, MXP_F32, 2, 0.0, c, MXP_F32, 2,
                              NULL), MXP_OK);
    assert_true(c[0] == 3 && c[1] == 4 && c[2] == 6 && c[3] == 8);
}

static void test_gemm_alpha_zero_gives_beta_c_without_reading_a_or_b(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_BF16, MXP_F16, MXP_E4M3 };
    const double betas[] = { 0.0, 1.0, -0.5, 3.0 };
    uint64_t seed = 31000;
    for (size_t d = 0; d < NELEMS(types); d++)
        for (size_t bi = 0; bi < NELEMS(betas); bi++)
            for (int t = 0; t < 4; t++) {
                /* A and B are all NaN: with alpha == 0 they must not reach C */
                gemm_case gc = base_case(types[d], types[d], types[d]);
                gc.ta = trans_pairs[t][0];
                gc.tb = trans_pairs[t][1];
                gc.m = 9;
                gc.n = 21;
                gc.k = 11;
                gc.alpha = 0.0;
                gc.beta = betas[bi];
                gc.gen_ab = GEN_NAN;
                gc.gen_c = bi == 0 ? GEN_NAN : GEN_UNIFORM;
                gc.check = CHECK_EXACT; /* round(beta * c) exactly */
                gc.seed = seed++;
                check_case(&gc);
            }
}

static void test_gemm_beta_one_accumulates_and_general_alpha_beta(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_F64 };
    uint64_t seed = 32000;
    for (size_t d = 0; d < NELEMS(types); d++)
        for (int t = 0; t < 4; t++) {
            const mxp_dtype dt = types[d];
            gemm_case gc = base_case(dt, dt, dt);
            gc.ta = trans_pairs[t][0];
            gc.tb = trans_pairs[t][1];
            gc.m = 23;
            gc.n = 41;
            gc.k = 290;
            gc.beta = 1.0;
            gc.seed = seed++;
            check_case(&gc);
            gc.alpha = 2.0;
            gc.beta = -0.5;
            gc.seed = seed++;
            check_case(&gc);
            gc.alpha = 0.1; /* not exact in float32 */
            gc.beta = 1.0 / 3.0;
            gc.seed = seed++;
            check_case(&gc);
        }
    /* beta = 1 twice: C0 + 2 AB, exactly with integers */
    float a[6] = { 1, 2, 3, 4, 5, 6 }, b[6] = { 7, 8, 9, 10, 11, 12 }, c[4] = { 1, 2, 3, 4 };
    for (int rep = 0; rep < 2; rep++)
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1.0, a, MXP_F32, 3, b, MXP_F32, 2, 1.0, c,
                                  MXP_F32, 2, NULL), MXP_OK);
    assert_true(c[0] == 117 && c[1] == 130 && c[2] == 281 && c[3] == 312);
}

/* NaN and infinity in A or B reach exactly the elements they should, at every
 * level (no "skip zero" shortcuts, no lost NaN in edge tiles). */
static void test_gemm_nan_and_inf_in_inputs_propagate_at_every_level(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_BF16 };
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        for (size_t d = 0; d < NELEMS(types); d++) {
            const mxp_dtype dt = types[d], ct = dt == MXP_F64 ? MXP_F64 : MXP_F32;
            const size_t m = 13, n = 35, k = 9;
            mat A = mat_new(dt, m, k, k, INPUT_FILL), B = mat_new(dt, k, n, n, INPUT_FILL), C = mat_new(ct, m, n, n, OUTPUT_FILL);
            double av[13 * 9], bv[9 * 35], ref[13 * 35], got[13 * 35], c0[13 * 35] = { 0 };
            uint64_t s = prng_seed(77 + (uint64_t)d);
            for (size_t i = 0; i < m * k; i++)
                av[i] = prng_int(&s, 3);
            for (size_t i = 0; i < k * n; i++)
                bv[i] = prng_int(&s, 3);
            av[5 * k + 2] = NAN;      /* row 5 of C all NaN */
            bv[4 * n + 33] = INFINITY; /* column 33 +-inf, NaN where A[i][4] == 0 */
            av[11 * k + 4] = 0.0;
            av[12 * k + 4] = -2.0;
            mat_set(&A, av);
            mat_set(&B, bv);
            mat_set(&C, c0);
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, A.data, dt, A.ld, B.data, dt, B.ld,
                                      0.0, C.data, ct, C.ld, NULL), MXP_OK);
            ref_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, av, bv, 0.0, c0, ref, NULL);
            mat_get(&C, got);
            for (size_t i = 0; i < m * n; i++)
                if (isnan(ref[i]) ? !isnan(got[i]) : got[i] != ref[i])
                    fail_msg("%s level %s: C[%zu][%zu] = %g, want %g", mxp_dtype_name(dt), mxp_isa_name((mxp_isa)isa),
                             i / n, i % n, got[i], ref[i]);
            assert_true(isnan(got[5 * n + 0]) && isnan(got[11 * n + 33]) && got[12 * n + 33] == -INFINITY);
            mat_free(&A);
            mat_free(&B);
            mat_free(&C);
        }
    }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
}

/* ---- 5. exact where the arithmetic is exact --------------------------------- */

static void test_gemm_small_integers_are_exact_in_every_dtype(void **state)
{
    (void)state;
    /* Integers in [-4, 4] are exact in every float dtype; products <= 16 and
     * sums <= 64 * 16 are exact in float32, so the accumulator holds the exact
     * value and C gets it rounded once: exact in f32/f64, correctly rounded (=
     * mxp_convert of the exact value) in the narrow dtypes. */
    const mxp_dtype pairs[][2] = {
        { MXP_F64, MXP_F64 }, { MXP_F32, MXP_F32 },   { MXP_F16, MXP_F16 },   { MXP_BF16, MXP_BF16 },
        { MXP_E4M3, MXP_E4M3 }, { MXP_E5M2, MXP_E5M2 }, { MXP_BF16, MXP_F32 },  { MXP_F16, MXP_F32 },
        { MXP_E4M3, MXP_E5M2 }, { MXP_F64, MXP_F32 },   { MXP_E5M2, MXP_BF16 }, { MXP_F16, MXP_E4M3 },
    };
    const size_t mns[] = { 1, 5, 17 }, ks[] = { 1, 2, 7, 16, 33, 64 };
    uint64_t seed = 40000;
    for (size_t p = 0; p < NELEMS(pairs); p++) {
        const mxp_dtype outs[] = { MXP_F32, MXP_F64, pairs[p][0] };
        for (size_t o = 0; o < NELEMS(outs); o++)
            for (int t = 0; t < 4; t++)
                for (size_t im = 0; im < NELEMS(mns); im++)
                    for (size_t in = 0; in < NELEMS(mns); in++)
                        for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                            gemm_case gc = base_case(pairs[p][0], pairs[p][1], outs[o]);
                            gc.ta = trans_pairs[t][0];
                            gc.tb = trans_pairs[t][1];
                            gc.m = mns[im];
                            gc.n = mns[in];
                            gc.k = ks[ik];
                            gc.gen_ab = gc.gen_c = GEN_INT;
                            gc.vmax = 4;
                            gc.check = CHECK_EXACT;
                            if (outs[o] != pairs[p][0]) { /* wide C: alpha and beta exact too */
                                gc.alpha = (ik & 1) ? 2.0 : 1.0;
                                gc.beta = (ik & 2) ? -3.0 : 0.0;
                            }
                            gc.seed = seed++;
                            check_case(&gc);
                        }
    }
}

/* Subnormal inputs of every dtype, times values that make the products
 * normal (or subnormal results in float32/float64): exact at every level —
 * nothing flushes them to zero, as gemm.h promises ("converted exactly to the
 * accumulator").  (vdpbf16ps reads bf16 subnormals as zero and flushes
 * subnormal results: the bf16 kernel must not be used where that shows.) */

static void test_gemm_subnormals_are_exact_at_every_level(void **state)
{
    (void)state;
    const struct {
        mxp_dtype dt;
        double unit, normal, scale; /* A: {0, +-1, +-2, +-3} * unit or +-normal; B: {0, +-1, +-2, +-3} * scale */
    } cases[] = {
        /* subnormal inputs (normal = the smallest normal), products normal in the accumulator */
        { MXP_BF16, 0x1p-130, 0x1p-126, 0x1p100 },  { MXP_F16, 0x1p-22, 0x1p-14, 0x1p10 },
        { MXP_E4M3, 0x1p-9, 0x1p-6, 0x1p6 },        { MXP_E5M2, 0x1p-16, 0x1p-14, 0x1p13 },
        { MXP_F32, 0x1p-140, 0x1p-126, 0x1p100 },   { MXP_F64, 0x1p-1060, 0x1p-1022, 0x1p1000 },
        /* normal inputs, subnormal products and results (multiples of 2^-140 / 2^-1060) */
        { MXP_F32, 0x1p-100, 0x1p-90, 0x1p-40 },    { MXP_F64, 0x1p-1000, 0x1p-990, 0x1p-60 },
        { MXP_BF16, 0x1p-70, 0x1p-65, 0x1p-70 },
    };
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        for (size_t c = 0; c < NELEMS(cases); c++)
            for (int t = 0; t < 4; t++) {
                const mxp_dtype dt = cases[c].dt, ct = dt == MXP_F64 ? MXP_F64 : MXP_F32;
                const mxp_trans ta = trans_pairs[t][0], tb = trans_pairs[t][1];
                const size_t m = 11, n = 37, k = 29;
                double *av = alloc_f64(m * k), *bv = alloc_f64(k * n), *ref = alloc_f64(m * n), *got = alloc_f64(m * n);
                double c0[1] = { 0 };
                uint64_t s = prng_seed(500 + c);
                const bool swap = t & 1; /* odd transposes: the subnormals in B */
                double *small = swap ? bv : av, *large = swap ? av : bv;
                const size_t n_small = swap ? k * n : m * k, n_large = swap ? m * k : k * n;
                for (size_t i = 0; i < n_small; i++)
                    small[i] = (prng_next(&s) % 5 == 0) ? cases[c].normal * (prng_int(&s, 1) > 0 ? 1 : -1)
                                                         : prng_int(&s, 3) * cases[c].unit;
                for (size_t i = 0; i < n_large; i++)
                    large[i] = prng_int(&s, 3) * cases[c].scale;
                mat A = mat_new(dt, ta ? k : m, ta ? m : k, ta ? m : k, INPUT_FILL);
                mat B = mat_new(dt, tb ? n : k, tb ? k : n, tb ? k : n, INPUT_FILL);
                mat C = mat_new(ct, m, n, n, OUTPUT_FILL);
                mat_set(&A, av);
                mat_get(&A, got); /* (scratch) every value is exact in dt */
                for (size_t i = 0; i < m * k; i++)
                    assert_true(got[i] == av[i]);
                mat_set(&B, bv);
                assert_int_equal(mxp_gemm(ta, tb, m, n, k, 1.0, A.data, dt, A.ld, B.data, dt, B.ld, 0.0, C.data, ct,
                                          C.ld, NULL), MXP_OK);
                ref_gemm(ta, tb, m, n, k, 1.0, av, bv, 0.0, c0, ref, NULL);
                mat_get(&C, got);
                for (size_t i = 0; i < m * n; i++)
                    if (got[i] != ref[i])
                        fail_msg("%s subnormal case %zu (in %s), level %s (%s), ta=%d tb=%d: C[%zu][%zu] = %a, want %a",
                                 mxp_dtype_name(dt), c, swap ? "B" : "A", mxp_isa_name((mxp_isa)isa),
                                 mxp_gemm_kernel_name(dt, dt, NULL), (int)ta, (int)tb, i / n, i % n, got[i], ref[i]);
                mat_free(&A);
                mat_free(&B);
                mat_free(&C);
                free(av);
                free(bv);
                free(ref);
                free(got);
            }
    }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
}

/* Tiny bf16 values in a large B, scanned by all the threads (one share of
 * rows each) before the product: a single 2^-70 anywhere in a 1024 x 1024
 * B times 2^-63 in A (not tiny itself) gives C = 2^-133 exactly (vdpbf16ps
 * would flush it to 0), into float32 C (accumulated in place) and
 * bfloat16 C (a workspace), beta 0 and 1, with 1-3 threads. */
static void test_gemm_bf16_tiny_value_anywhere_in_a_large_b_is_exact_with_threads(void **state)
{
    (void)state;
    const size_t m = 20, n = 1024, k = 1024;
    uint16_t *a = calloc(m * k, sizeof *a), *b = calloc(k * n, sizeof *b);
    float *c = malloc(m * n * sizeof *c);
    assert_true(a && b && c);
    const uint16_t tiny = (127 - 70) << 7, limit = (127 - 63) << 7; /* 2^-70, 2^-63 */
    const size_t spots[][2] = { { 0, 0 }, { 511, 700 }, { 512, 3 }, { 1023, 1023 } };
    const mxp_dtype cts[] = { MXP_F32, MXP_BF16 };
    for (int threads = 1; threads <= 3; threads++) {
        assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
        for (size_t sp = 0; sp < NELEMS(spots); sp++)
            for (size_t v = 0; v < 4; v++) {
                const size_t p = spots[sp][0], j = spots[sp][1];
                const mxp_dtype ct = cts[v % 2];
                const double beta = v < 2 ? 0.0 : 1.0;
                a[2 * k + p] = limit; /* row 2 of A */
                b[p * n + j] = tiny;
                memset(c, 0, m * n * sizeof *c); /* zeros in either C dtype */
                assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, a, MXP_BF16, k, b, MXP_BF16, n,
                                          beta, c, ct, n, NULL),
                                 MXP_OK);
                double got[1];
                for (size_t i = 0; i < m * n; i++) {
                    assert_int_equal(
                        mxp_convert(got, MXP_F64, (const unsigned char *)c + i * mxp_dtype_itemsize(ct), ct, 1, NULL),
                        MXP_OK);
                    if (got[0] != (i == 2 * n + j ? 0x1p-133 : 0.0))
                        fail_msg("%d threads, %s C, beta %g, tiny B[%zu][%zu]: C[%zu][%zu] = %a", threads,
                                 mxp_dtype_name(ct), beta, p, j, i / n, i % n, got[0]);
                }
                a[2 * k + p] = 0;
                b[p * n + j] = 0;
            }
    }
    free(a);
    free(b);
    free(c);
}

/* ---- 6. every ISA level ------------------------------------------------------ */

/* docs/gemm.md: results may differ in the last bits between levels (FMA
 * versus multiply then add in the scalar reference), within the tolerances;
 * where all arithmetic is exact (small integers) every level is bit for bit
 * the same.  So: random inputs within tolerance at every level (differences
 * are only reported), small integers identical at every level. */

static void test_gemm_every_isa_level_matches_reference(void **state)
{
    (void)state;
    const struct {
        mxp_dtype a, b, c;
        bool exact; /* small integers: the same bits at every level */
    } combos[] = {
        { MXP_F64, MXP_F64, MXP_F64, false },  { MXP_F32, MXP_F32, MXP_F32, false },
        { MXP_BF16, MXP_BF16, MXP_F32, false }, { MXP_F16, MXP_F16, MXP_BF16, false },
        { MXP_E4M3, MXP_E5M2, MXP_F32, false }, { MXP_F64, MXP_F64, MXP_F64, true },
        { MXP_F32, MXP_F32, MXP_F32, true },    { MXP_BF16, MXP_BF16, MXP_F32, true },
        { MXP_E4M3, MXP_E5M2, MXP_BF16, true }, { MXP_F16, MXP_F16, MXP_F16, true },
    };
    const int top = (int)mxp_isa_supported();
    const mxp_isa level_before = mxp_isa_current();
    for (size_t d = 0; d < NELEMS(combos); d++)
        for (int t = 0; t < 4; t++) {
            unsigned char *first = NULL;
            double *first_v = NULL;
            for (int isa = 0; isa <= top; isa++) {
                assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                gemm_case gc = base_case(combos[d].a, combos[d].b, combos[d].c);
                if (combos[d].exact) {
                    gc.gen_ab = gc.gen_c = GEN_INT;
                    gc.check = CHECK_EXACT;
                }
                gc.ta = trans_pairs[t][0];
                gc.tb = trans_pairs[t][1];
                gc.m = 37;
                gc.n = 45;
                gc.k = 53;
                gc.alpha = 1.5;
                gc.beta = -0.5;
                gc.seed = 777 + (uint64_t)t;
                unsigned char *r = run_case(&gc); /* within tolerance (or exact) at this level */
                const mxp_dtype ct = combos[d].c;
                const size_t bytes = gc.m * gc.n * mxp_dtype_itemsize(ct);
                double *v = alloc_f64(gc.m * gc.n);
                assert_int_equal(mxp_convert(v, MXP_F64, r, ct, gc.m * gc.n, NULL), MXP_OK);
                if (!first) {
                    first = r;
                    first_v = v;
                    continue;
                }
                size_t differ = 0;
                for (size_t i = 0; i < gc.m * gc.n; i++)
                    differ += v[i] != first_v[i];
                if (combos[d].exact && memcmp(first, r, bytes))
                    fail_msg("small integers, %s x %s -> %s ta=%d tb=%d: level %s differs from scalar in %zu "
                             "elements", mxp_dtype_name(gc.at), mxp_dtype_name(gc.bt), mxp_dtype_name(ct), (int)gc.ta,
                             (int)gc.tb, mxp_isa_name((mxp_isa)isa), differ);
                if (differ && t == 0)
                    print_message("%s x %s -> %s: level %s differs from scalar in %zu of %zu elements (within "
                                  "tolerance)\n", mxp_dtype_name(gc.at), mxp_dtype_name(gc.bt), mxp_dtype_name(ct),
                                  mxp_isa_name((mxp_isa)isa), differ, gc.m * gc.n);
                free(r);
                free(v);
            }
            free(first);
            free(first_v);
        }
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
    assert_int_equal(mxp_isa_current(), level_before); /* restored (MXP_ISA in the environment may cap it) */
}

/* M = 1 goes through the GEMV kernels at AVX2 and AVX-512 (B streamed in
 * place): within tolerance of the reference at every level, tails of n and
 * k included; B not transposed, each y[j] is the same chain of fused
 * multiply-adds at both levels, so AVX2 and AVX-512 give the same bits. */
static void test_gemm_m1_gemv_at_every_level(void **state)
{
    (void)state;
    const mxp_dtype bs[] = { MXP_F32, MXP_BF16, MXP_F16, MXP_F64 };
    const size_t ns[] = { 1, 7, 45, 130 }, ks[] = { 1, 3, 53, 300 };
    for (size_t d = 0; d < NELEMS(bs); d++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t in = 0; in < NELEMS(ns); in++)
                for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                    unsigned char *at_avx2 = NULL;
                    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
                        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                        const mxp_dtype a = bs[d] == MXP_F64 ? MXP_F64 : MXP_F32;
                        gemm_case gc = base_case(a, bs[d], a);
                        gc.tb = tb ? MXP_TRANS : MXP_NO_TRANS;
                        gc.m = 1;
                        gc.n = ns[in];
                        gc.k = ks[ik];
                        gc.alpha = 1.25;
                        gc.beta = in % 2 ? 0.5 : 0.0;
                        gc.seed = 4242 + in * 10 + ik;
                        unsigned char *r = run_case(&gc);
                        const size_t bytes = gc.n * mxp_dtype_itemsize(a);
                        if (isa == MXP_ISA_AVX2) {
                            at_avx2 = r;
                            continue;
                        }
                        if (isa >= MXP_ISA_AVX512 && at_avx2 && !tb && memcmp(at_avx2, r, bytes))
                            fail_msg("M = 1, %s B, n %zu k %zu: AVX2 and %s GEMV differ", mxp_dtype_name(bs[d]),
                                     gc.n, gc.k, mxp_isa_name((mxp_isa)isa));
                        free(r);
                    }
                    free(at_avx2);
                }
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
}

/* ---- threads ------------------------------------------------------------------- */

/* docs/gemm.md: every C tile is computed by one thread in one order, so the
 * results are identical for any thread count. */
static void test_gemm_results_identical_for_any_thread_count(void **state)
{
    (void)state;
    const struct {
        mxp_dtype a, b, c;
        double beta;
    } combos[] = {
        { MXP_F32, MXP_F32, MXP_F32, 0.0 },
        { MXP_F64, MXP_F64, MXP_F64, -0.5 },
        { MXP_BF16, MXP_BF16, MXP_BF16, 1.0 },
        { MXP_E4M3, MXP_F16, MXP_F32, 0.25 },
        { MXP_BF16, MXP_F32, MXP_F16, 0.5 }, /* with the epilogue below, stochastic rounding */
    };
    const int counts[] = { 1, 2, 3, 5, 8 };
    static float bias[4200];
    for (int j = 0; j < 4200; j++)
        bias[j] = (float)(j % 1000) / 64.0f - 1.0f;
    mxp_gemm_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.bias = bias;
    eo.bias_dtype = MXP_F32;
    eo.bias_kind = MXP_BIAS_PER_COL;
    eo.activation = MXP_ACT_GELU;
    eo.convert.rounding = MXP_ROUND_STOCHASTIC;
    eo.convert.seed = 77;
    /* 11.7 million multiply-adds in 4 MC blocks (two threads: a slab of
     * columns each; more: a shared B~, rows split); two slabs of two NC
     * blocks each; 5 rows (small M: the threads split the columns); one row
     * (the GEMV's column ranges) */
    const size_t shapes[4][3] = { { 301, 130, 300 }, { 20, 4200, 60 }, { 5, 700, 1200 }, { 1, 1000, 1100 } };
    for (size_t sh = 0; sh < 4; sh++)
    for (size_t d = 0; d < NELEMS(combos); d++)
        for (int t = 0; t < 4; t += 3) {
            const size_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
            const mxp_trans ta = trans_pairs[t][0], tb = trans_pairs[t][1];
            mat A = mat_new(combos[d].a, ta ? k : m, ta ? m : k, (ta ? m : k) + 1, INPUT_FILL);
            mat B = mat_new(combos[d].b, tb ? n : k, tb ? k : n, tb ? k : n, INPUT_FILL);
            mat C = mat_new(combos[d].c, m, n, n + 2, OUTPUT_FILL);
            double *v = alloc_f64(m * (n + k) + k * n);
            uint64_t s = prng_seed(4242 + d);
            for (size_t i = 0; i < m * (n + k) + k * n; i++)
                v[i] = prng_range(&s, -1.0, 1.0);
            mat_set(&A, v);
            mat_set(&B, v + m * k);
            mat_set(&C, v + m * k + k * n);
            unsigned char *c_init = dup_bytes(C.buf, C.bytes), *first = NULL;
            for (size_t ci = 0; ci < NELEMS(counts); ci++) {
                assert_int_equal(mxp_set_num_threads(counts[ci]), MXP_OK);
                assert_int_equal(mxp_get_num_threads(), counts[ci]);
                memcpy(C.buf, c_init, C.bytes);
                assert_int_equal(mxp_gemm(ta, tb, m, n, k, 1.25, A.data, A.dt, A.ld, B.data, B.dt, B.ld,
                                          combos[d].beta, C.data, C.dt, C.ld, d == 4 ? &eo : NULL), MXP_OK);
                mat_expect_padding_untouched(&C, c_init, "threads");
                if (!first)
                    first = dup_bytes(C.buf, C.bytes);
                else if (memcmp(first, C.buf, C.bytes))
                    fail_msg("%s x %s -> %s ta=%d tb=%d: %d threads give other bits than 1",
                             mxp_dtype_name(combos[d].a), mxp_dtype_name(combos[d].b), mxp_dtype_name(combos[d].c),
                             (int)ta, (int)tb, counts[ci]);
            }
            free(first);
            free(c_init);
            free(v);
            mat_free(&A);
            mat_free(&B);
            mat_free(&C);
        }
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
    assert_true(mxp_get_num_threads() >= 1);
}

/* ---- 7. bad input ------------------------------------------------------------ */

/* Whether msg names the argument: `word` as a whole word (not part of a
 * longer identifier). */
typedef struct bad_call {
    const char *what;
    mxp_status want;
    const char *word, *word2; /* the message names one of these */
    mxp_trans ta, tb;
    size_t m, n, k;
    bool null_a, null_b, null_c;
    mxp_dtype at, bt, ct;
    size_t lda, ldb, ldc;
    const mxp_gemm_opts *opts;
} bad_call;

static void test_gemm_bad_arguments_give_a_status_and_a_sentence_and_leave_c_untouched(void **state)
{
    (void)state;
    static float a[64], b[64];
    static float c[64];
    static const mxp_gemm_opts bad_acc = { .acc_dtype = MXP_E5M2 };
    static const mxp_gemm_opts bad_acc2 = { .acc_dtype = (mxp_dtype)99 };
    static const mxp_gemm_opts bad_round = { .convert = { .rounding = (mxp_rounding)17 } };
    static const mxp_gemm_opts bad_overflow = { .convert = { .overflow = (mxp_overflow)9 } };
    const size_t big = SIZE_MAX / 16; /* 2^60 float32: 2^62 bytes, fits in a ptrdiff_t */
    const mxp_trans N = MXP_NO_TRANS, T = MXP_TRANS;
    const bad_call calls[] = {
        /* leading dimensions: m = 3, n = 4, k = 5 */
        { "lda < k", MXP_ERR_INVALID_ARGUMENT, "lda", NULL, N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 4, 4, 4, NULL },
        { "lda < m (A transposed)", MXP_ERR_INVALID_ARGUMENT, "lda", NULL, T, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 2, 4, 4, NULL },
        { "ldb < n", MXP_ERR_INVALID_ARGUMENT, "ldb", NULL, N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 3, 4, NULL },
        { "ldb < k (B transposed)", MXP_ERR_INVALID_ARGUMENT, "ldb", NULL, N, T, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        { "ldc < n", MXP_ERR_INVALID_ARGUMENT, "ldc", NULL, N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 3, NULL },
        /* NULL pointers with nonzero sizes */
        { "a NULL", MXP_ERR_INVALID_ARGUMENT, "a", "A", N, N, 3, 4, 5, 1, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        { "b NULL", MXP_ERR_INVALID_ARGUMENT, "b", "B", N, N, 3, 4, 5, 0, 1, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        { "c NULL", MXP_ERR_INVALID_ARGUMENT, "c", "C", N, N, 3, 4, 5, 0, 0, 1, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        { "c NULL, k = 0", MXP_ERR_INVALID_ARGUMENT, "c", "C", N, N, 3, 4, 0, 1, 1, 1, MXP_F32, MXP_F32, MXP_F32, 1, 4, 4, NULL },
        /* dtypes */
        { "a_type 0", MXP_ERR_INVALID_DTYPE, "a_type", "A", N, N, 3, 4, 5, 0, 0, 0, (mxp_dtype)0, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        { "b_type 77", MXP_ERR_INVALID_DTYPE, "b_type", "B", N, N, 3, 4, 5, 0, 0, 0, MXP_F32, (mxp_dtype)77, MXP_F32, 5, 4, 4, NULL },
        { "c_type -1", MXP_ERR_INVALID_DTYPE, "c_type", "C", N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, (mxp_dtype)-1, 5, 4, 4, NULL },
        { "a_type s32", MXP_ERR_UNSUPPORTED, "a_type", "A", N, N, 3, 4, 5, 0, 0, 0, MXP_S32, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        { "b_type bool", MXP_ERR_UNSUPPORTED, "b_type", "B", N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_BOOL, MXP_F32, 5, 4, 4, NULL },
        { "c_type s32", MXP_ERR_UNSUPPORTED, "c_type", "C", N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_S32, 5, 4, 4, NULL },
        /* transpose flags */
        { "ta = 5", MXP_ERR_INVALID_ARGUMENT, "ta", NULL, (mxp_trans)5, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        { "tb = 5", MXP_ERR_INVALID_ARGUMENT, "tb", NULL, N, (mxp_trans)5, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, NULL },
        /* sizes that overflow the address space, one matrix at a time (the
         * others, 2^62 bytes at most, would fit) */
        { "m * lda overflows", MXP_ERR_SIZE_OVERFLOW, "a", "A", N, N, big, 1, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 1, 1, NULL },
        { "m * lda overflows, SIZE_MAX/2", MXP_ERR_SIZE_OVERFLOW, "a", "A", N, N, SIZE_MAX / 2, 1, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 1, 1, NULL },
        { "k * lda overflows (A transposed)", MXP_ERR_SIZE_OVERFLOW, "a", "A", T, T, 3, 1, big, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 3, big, 1, NULL },
        { "k * ldb overflows", MXP_ERR_SIZE_OVERFLOW, "b", "B", N, N, 1, 4, big, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, big, 4, 4, NULL },
        { "m * ldc overflows", MXP_ERR_SIZE_OVERFLOW, "c", "C", N, N, big, 4, 1, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 1, 4, 4, NULL },
        /* options */
        { "acc float8_e5m2", MXP_ERR_UNSUPPORTED, "accumulator", "acc_dtype", N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, &bad_acc },
        { "acc 99", MXP_ERR_UNSUPPORTED, "accumulator", "acc_dtype", N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_F32, 5, 4, 4, &bad_acc2 },
        { "rounding 17", MXP_ERR_INVALID_ARGUMENT, "rounding", NULL, N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_BF16, 5, 4, 4, &bad_round },
        { "overflow 9", MXP_ERR_INVALID_ARGUMENT, "overflow", NULL, N, N, 3, 4, 5, 0, 0, 0, MXP_F32, MXP_F32, MXP_BF16, 5, 4, 4, &bad_overflow },
    };
    for (size_t i = 0; i < 64; i++) {
        a[i] = (float)i;
        b[i] = (float)(64 - i);
    }
    int wrong = 0;
    for (size_t i = 0; i < NELEMS(calls); i++) {
        const bad_call *bc = &calls[i];
        for (size_t j = 0; j < 64; j++)
            c[j] = -7.25f;
        mxp_clear_error();
        mxp_status st = mxp_gemm(bc->ta, bc->tb, bc->m, bc->n, bc->k, 1.0, bc->null_a ? NULL : a, bc->at, bc->lda,
                                 bc->null_b ? NULL : b, bc->bt, bc->ldb, 0.0, bc->null_c ? NULL : c, bc->ct, bc->ldc,
                                 bc->opts);
        const char *msg = mxp_last_error();
        const bool also_ok = bc->opts == &bad_acc2 && st == MXP_ERR_INVALID_DTYPE; /* not a dtype at all */
        bool ok = true;
        if (st != bc->want && !also_ok) {
            print_error("%s: got %s (\"%s\"), want %s\n", bc->what, mxp_status_str(st), msg,
                        mxp_status_str(bc->want));
            ok = false;
        } else if (!msg[0]) {
            print_error("%s: %s without a message\n", bc->what, mxp_status_str(st));
            ok = false;
        } else if (!mentions(msg, bc->word) && !(bc->word2 && mentions(msg, bc->word2))) {
            print_error("%s: the message \"%s\" does not name '%s'%s%s\n", bc->what, msg, bc->word,
                        bc->word2 ? " or " : "", bc->word2 ? bc->word2 : "");
            ok = false;
        }
        for (size_t j = 0; j < 64 && ok; j++)
            if (c[j] != -7.25f) {
                print_error("%s: C[%zu] was written\n", bc->what, j);
                ok = false;
            }
        wrong += !ok;
    }
    if (wrong)
        fail_msg("%d of %zu bad calls were not refused as documented", wrong, NELEMS(calls));
    /* the kernel name of a bad pair says so */
    assert_string_equal(mxp_gemm_kernel_name((mxp_dtype)0, MXP_F32, NULL), "invalid");
}

/* Runs one float32 call in a child process and returns its status, or
 * -signal if it crashed or hung (an accepted call with a huge k or n would
 * read and write far beyond the buffers). */
static int status_in_child(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, size_t lda, size_t ldb,
                           size_t ldc)
{
    static float a[64], b[64], c[64];
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* cmocka's handlers would turn a crash into a longjmp back into the runner */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGILL, SIG_DFL);
        signal(SIGFPE, SIG_DFL);
        alarm(3);
        const mxp_status st = mxp_gemm(ta, tb, m, n, k, 1.0, a, MXP_F32, lda, b, MXP_F32, ldb, 0.0, c, MXP_F32, ldc,
                                       NULL);
        _exit((int)st);
    }
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? -WTERMSIG(ws) : -1000;
}

/* One row longer than the address space: (rows - 1) * ld stays small, the
 * row itself (SIZE_MAX / 2 float32 elements) does not fit. */
static void test_gemm_rows_longer_than_the_address_space_overflow(void **state)
{
    (void)state;
    const size_t big = SIZE_MAX / 2;
    const struct {
        const char *what;
        mxp_trans ta, tb;
        size_t m, n, k, lda, ldb, ldc;
    } calls[] = {
        { "A and B one row of k = SIZE_MAX/2", MXP_NO_TRANS, MXP_TRANS, 1, 1, big, big, big, 1 },
        { "A two rows of k = SIZE_MAX/2", MXP_NO_TRANS, MXP_TRANS, 2, 1, big, big, big, 1 },
        { "B and C one row of n = SIZE_MAX/2", MXP_NO_TRANS, MXP_NO_TRANS, 1, big, 1, 1, big, big },
    };
    int wrong = 0;
    for (size_t i = 0; i < NELEMS(calls); i++) {
        const int got = status_in_child(calls[i].ta, calls[i].tb, calls[i].m, calls[i].n, calls[i].k, calls[i].lda,
                                        calls[i].ldb, calls[i].ldc);
        if (got == MXP_ERR_SIZE_OVERFLOW)
            continue;
        wrong++;
        if (got < 0)
            print_error("%s: the call was accepted and then killed by signal %d (want MXP_ERR_SIZE_OVERFLOW)\n",
                        calls[i].what, -got);
        else
            print_error("%s: %s, want MXP_ERR_SIZE_OVERFLOW\n", calls[i].what, mxp_status_str((mxp_status)got));
    }
    if (wrong)
        fail_msg("%d of %zu calls with an over-long row were not refused", wrong, NELEMS(calls));
}

/* m, n or k == 0: NULL pointers where nothing is read or written. */
static void test_gemm_zero_sizes_allow_null_and_k_zero_scales_c(void **state)
{
    (void)state;
    float c[12];
    const float a[12] = { 1 }, b[12] = { 1 };
    /* m == 0 or n == 0: nothing happens, any pointer may be NULL */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 0, 4, 5, 1.0, NULL, MXP_F32, 5, NULL, MXP_F32, 4, 0.0, NULL,
                              MXP_F32, 4, NULL), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_TRANS, MXP_TRANS, 3, 0, 5, 1.0, NULL, MXP_F32, 3, NULL, MXP_F32, 5, 0.0, NULL,
                              MXP_F32, 1, NULL), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 0, 0, 0, 1.0, NULL, MXP_BF16, 1, NULL, MXP_BF16, 1, 0.0, NULL,
                              MXP_BF16, 1, NULL), MXP_OK);
    for (int i = 0; i < 12; i++)
        c[i] = NAN;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 0, 4, 5, 1.0, a, MXP_F32, 5, b, MXP_F32, 4, 0.0, c, MXP_F32,
                              4, NULL), MXP_OK);
    for (int i = 0; i < 12; i++)
        assert_true(isnan(c[i])); /* untouched */
    /* k == 0: C = beta * C, A and B may be NULL */
    for (int i = 0; i < 12; i++)
        c[i] = (float)i - 5.5f;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 3, 4, 0, 1.0, NULL, MXP_F32, 1, NULL, MXP_F32, 4, -0.5, c,
                              MXP_F32, 4, NULL), MXP_OK);
    for (int i = 0; i < 12; i++)
        assert_true(c[i] == ((float)i - 5.5f) * -0.5f);
    for (int i = 0; i < 12; i++)
        c[i] = NAN;
    assert_int_equal(mxp_gemm(MXP_TRANS, MXP_TRANS, 3, 4, 0, 1.0, NULL, MXP_F32, 3, NULL, MXP_F32, 1, 0.0, c, MXP_F32,
                              4, NULL), MXP_OK);
    for (int i = 0; i < 12; i++)
        assert_true(c[i] == 0.0f);
    /* k == 0 with a padded, narrow C: padding kept */
    uint16_t cb[3 * 6];
    for (int i = 0; i < 18; i++)
        cb[i] = (i % 6) < 4 ? mxp_f32_to_bf16((float)i) : 0xfeed;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 3, 4, 0, 1.0, NULL, MXP_F32, 1, NULL, MXP_F32, 4, 3.0, cb,
                              MXP_BF16, 6, NULL), MXP_OK);
    for (int i = 0; i < 18; i++)
        if ((i % 6) < 4)
            assert_int_equal(cb[i], mxp_f32_to_bf16(3.0f * (float)i));
        else
            assert_int_equal(cb[i], 0xfeed);
}

/* ---- 8. rounding of the output ------------------------------------------------ */

static void test_gemm_output_rounding_options_are_applied_once(void **state)
{
    (void)state;
    /* Inputs i/128 (|i| <= 128), exact in bf16 and float32: products are
     * multiples of 2^-14 and sums of up to 300 of them are exact in float32, so
     * the accumulator is exact and C must equal mxp_convert of the exact
     * value with the same options. */
    static mxp_gemm_opts opts[8];
    const mxp_rounding modes[] = { MXP_ROUND_UP, MXP_ROUND_DOWN, MXP_ROUND_TOWARD_ZERO, MXP_ROUND_NEAREST_AWAY };
    const mxp_dtype outs[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2 };
    const mxp_dtype ins[] = { MXP_BF16, MXP_F32 };
    const size_t ks[] = { 3, 17, 64, 300 };
    uint64_t seed = 60000;
    for (size_t r = 0; r < NELEMS(modes); r++)
        for (size_t o = 0; o < NELEMS(outs); o++)
            for (size_t in = 0; in < NELEMS(ins); in++)
                for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                    memset(&opts[r], 0, sizeof opts[r]);
                    opts[r].convert.rounding = modes[r];
                    gemm_case gc = base_case(ins[in], ins[in], outs[o]);
                    gc.opts = &opts[r];
                    gc.ta = trans_pairs[ik][0];
                    gc.tb = trans_pairs[ik][1];
                    gc.m = 17;
                    gc.n = 29;
                    gc.k = ks[ik];
                    gc.gen_ab = GEN_GRID;
                    gc.check = CHECK_EXACT;
                    gc.seed = seed++;
                    check_case(&gc);
                }
    /* and explicitly: UP >= reference >= DOWN, element by element, bf16;
     * stochastic rounding equal to mxp_convert's of the exact values with
     * C's row-major element index (m beyond one MC block of rows) */
    const size_t m = 131, n = 33, k = 70;
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    double *av = alloc_f64(m * k), *bv = alloc_f64(k * n), *ref = alloc_f64(m * n), *up = alloc_f64(m * n),
           *down = alloc_f64(m * n), *st = alloc_f64(m * n);
    uint16_t *c = malloc(m * n * sizeof *c);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    uint64_t s = prng_seed(61);
    for (size_t i = 0; i < m * k; i++)
        a[i] = (float)(av[i] = prng_int(&s, 128) / 128.0);
    for (size_t i = 0; i < k * n; i++)
        b[i] = (float)(bv[i] = prng_int(&s, 128) / 128.0);
    const double zero = 0;
    ref_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, av, bv, 0.0, &zero, ref, NULL);
    double *outs_v[3] = { up, down, st };
    const mxp_rounding dir[3] = { MXP_ROUND_UP, MXP_ROUND_DOWN, MXP_ROUND_STOCHASTIC };
    int inexact = 0;
    for (int d = 0; d < 3; d++) {
        mxp_gemm_opts o;
        memset(&o, 0, sizeof o);
        o.convert.rounding = dir[d];
        o.convert.seed = 12345;
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, a, MXP_F32, k, b, MXP_F32, n, 0.0, c,
                                  MXP_BF16, n, &o), MXP_OK);
        assert_int_equal(mxp_convert(outs_v[d], MXP_F64, c, MXP_BF16, m * n, NULL), MXP_OK);
    }
    for (size_t i = 0; i < m * n; i++) {
        if (!(up[i] >= ref[i]) || !(down[i] <= ref[i]))
            fail_msg("element %zu: round down %.17g, reference %.17g, round up %.17g", i, down[i], ref[i], up[i]);
        if ((up[i] != down[i]) != (up[i] != ref[i] || down[i] != ref[i]))
            fail_msg("element %zu: round down %.17g and up %.17g of %.17g", i, down[i], up[i], ref[i]);
        inexact += up[i] != down[i];
        if (st[i] != up[i] && st[i] != down[i])
            fail_msg("element %zu: stochastic rounding gave %.17g, not %.17g or %.17g", i, st[i], down[i], up[i]);
    }
    assert_true(inexact > 100); /* the test exercises rounding */
    uint16_t *want = malloc(m * n * sizeof *want);
    assert_non_null(want);
    const mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 12345 };
    assert_int_equal(mxp_convert(want, MXP_BF16, ref, MXP_F64, m * n, &sr), MXP_OK);
    double *wv = alloc_f64(m * n);
    assert_int_equal(mxp_convert(wv, MXP_F64, want, MXP_BF16, m * n, NULL), MXP_OK);
    for (size_t i = 0; i < m * n; i++)
        if (wv[i] != st[i])
            fail_msg("element %zu: stochastic rounding gave %.17g, mxp_convert %.17g", i, st[i], wv[i]);
    free(want);
    free(wv);
    /* overflow option: saturate instead of NaN/inf (e4m3, sums up to +-1024) */
    static mxp_gemm_opts sat;
    memset(&sat, 0, sizeof sat);
    sat.convert.overflow = MXP_OVERFLOW_SATURATE;
    gemm_case gc = base_case(MXP_E4M3, MXP_E4M3, MXP_E4M3);
    gc.opts = &sat;
    gc.m = 20;
    gc.n = 20;
    gc.k = 64;
    gc.gen_ab = GEN_INT;
    gc.vmax = 4;
    gc.alpha = 4.0;
    gc.check = CHECK_EXACT;
    gc.seed = 62;
    check_case(&gc);
    free(a);
    free(b);
    free(c);
    free(av);
    free(bv);
    free(ref);
    free(up);
    free(down);
    free(st);
}

/* ---- 9. allocation failures --------------------------------------------------- */

typedef struct alloc_job {
    mxp_trans ta, tb;
    size_t m, n, k;
    double alpha, beta;
    mxp_dtype at, bt, ct;
    size_t lda, ldb, ldc;
    unsigned char *a, *b, *c, *c_init, *c_want;
    size_t c_bytes;
} alloc_job;

static alloc_job alloc_jobs[7];

static mxp_status alloc_job_run(alloc_job *j)
{
    memcpy(j->c, j->c_init, j->c_bytes);
    return mxp_gemm(j->ta, j->tb, j->m, j->n, j->k, j->alpha, j->a, j->at, j->lda, j->b, j->bt, j->ldb, j->beta, j->c,
                    j->ct, j->ldc, NULL);
}

static mxp_status gemm_workload(void)
{
    for (size_t i = 0; i < NELEMS(alloc_jobs); i++) {
        alloc_job *j = &alloc_jobs[i];
        mxp_status st = alloc_job_run(j);
        if (st != MXP_OK) {
            if (memcmp(j->c, j->c_init, j->c_bytes))
                fail_msg("job %zu: %s, but C was written", i, mxp_status_str(st));
            return st;
        }
        if (memcmp(j->c, j->c_want, j->c_bytes))
            fail_msg("job %zu: the result after earlier failed attempts differs", i);
    }
    return MXP_OK;
}

static void test_gemm_every_allocation_failure_is_reported_and_leaves_c_untouched(void **state)
{
    (void)state;
    const struct {
        mxp_trans ta, tb;
        size_t m, n, k;
        double alpha, beta;
        mxp_dtype at, bt, ct;
    } spec[NELEMS(alloc_jobs)] = {
        { MXP_NO_TRANS, MXP_NO_TRANS, 70, 70, 70, 1.0, 0.0, MXP_F32, MXP_F32, MXP_F32 },
        { MXP_TRANS, MXP_NO_TRANS, 30, 40, 300, 2.0, 0.5, MXP_BF16, MXP_E4M3, MXP_BF16 },
        { MXP_NO_TRANS, MXP_TRANS, 50, 20, 270, 1.0, -1.0, MXP_F64, MXP_F64, MXP_F64 },
        { MXP_TRANS, MXP_TRANS, 9, 2100, 5, 1.0, 1.0, MXP_F16, MXP_F32, MXP_F64 },
        { MXP_NO_TRANS, MXP_NO_TRANS, 200, 100, 260, 1.0, 0.5, MXP_F32, MXP_F32, MXP_F32 }, /* threaded */
        /* a tiny value in B (below): the float32 kernel */
        { MXP_NO_TRANS, MXP_NO_TRANS, 40, 70, 50, 1.0, 0.0, MXP_BF16, MXP_BF16, MXP_BF16 },
        /* found while packing the second KC panel, float32 C written: the redo allocates nothing */
        { MXP_NO_TRANS, MXP_NO_TRANS, 40, 70, 1100, 1.0, 0.0, MXP_BF16, MXP_BF16, MXP_F32 },
    };
    uint64_t s = prng_seed(90);
    for (size_t i = 0; i < NELEMS(alloc_jobs); i++) {
        alloc_job *j = &alloc_jobs[i];
        j->ta = spec[i].ta;
        j->tb = spec[i].tb;
        j->m = spec[i].m;
        j->n = spec[i].n;
        j->k = spec[i].k;
        j->alpha = spec[i].alpha;
        j->beta = spec[i].beta;
        j->at = spec[i].at;
        j->bt = spec[i].bt;
        j->ct = spec[i].ct;
        j->lda = (j->ta ? j->m : j->k) + 1;
        j->ldb = (j->tb ? j->k : j->n) + 2;
        j->ldc = j->n + 3;
        const size_t na = (j->ta ? j->k : j->m) * j->lda, nb = (j->tb ? j->n : j->k) * j->ldb, nc = j->m * j->ldc;
        double *tmp = alloc_f64(na > nb ? (na > nc ? na : nc) : (nb > nc ? nb : nc));
        j->a = malloc(na * mxp_dtype_itemsize(j->at));
        j->b = malloc(nb * mxp_dtype_itemsize(j->bt));
        j->c_bytes = nc * mxp_dtype_itemsize(j->ct);
        j->c = malloc(j->c_bytes);
        j->c_init = malloc(j->c_bytes);
        j->c_want = malloc(j->c_bytes);
        assert_true(j->a && j->b && j->c && j->c_init && j->c_want);
        for (size_t q = 0; q < na; q++)
            tmp[q] = prng_range(&s, -1.0, 1.0);
        assert_int_equal(mxp_convert(j->a, j->at, tmp, MXP_F64, na, NULL), MXP_OK);
        for (size_t q = 0; q < nb; q++)
            tmp[q] = prng_range(&s, -1.0, 1.0);
        if (i == NELEMS(alloc_jobs) - 2)
            tmp[7 * j->ldb + 3] = 0x1p-70;
        if (i == NELEMS(alloc_jobs) - 1)
            tmp[1050 * j->ldb + 3] = 0x1p-70;
        assert_int_equal(mxp_convert(j->b, j->bt, tmp, MXP_F64, nb, NULL), MXP_OK);
        for (size_t q = 0; q < nc; q++)
            tmp[q] = prng_range(&s, -1.0, 1.0);
        assert_int_equal(mxp_convert(j->c_init, j->ct, tmp, MXP_F64, nc, NULL), MXP_OK);
        free(tmp);
        assert_int_equal(alloc_job_run(j), MXP_OK);
        memcpy(j->c_want, j->c, j->c_bytes);
    }
    assert_int_equal(mxp_set_num_threads(1), MXP_OK);
    const int failures = check_every_allocation_failure(gemm_workload);
    /* the threaded job: 2 threads take a slab of columns each (a B~ each),
     * 3 threads share one B~ (too few columns for three slabs); the
     * buffers are one block either way */
    assert_int_equal(mxp_set_num_threads(2), MXP_OK);
    const int failures2 = check_every_allocation_failure(gemm_workload);
    assert_int_equal(mxp_set_num_threads(3), MXP_OK);
    const int failures3 = check_every_allocation_failure(gemm_workload);
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
    print_message("mxp_gemm workload: %d allocation failures checked (%d with 2 threads, %d with 3)\n", failures,
                  failures2, failures3);
    assert_true(failures2 >= failures);
    assert_true(failures3 >= failures);
    for (size_t i = 0; i < NELEMS(alloc_jobs); i++) {
        alloc_job *j = &alloc_jobs[i];
        free(j->a);
        free(j->b);
        free(j->c);
        free(j->c_init);
        free(j->c_want);
    }
}

/* ---- 10. kernel names ----------------------------------------------------------- */

static void test_gemm_kernel_name_names_the_kernel_or_says_invalid(void **state)
{
    (void)state;
    static const mxp_gemm_opts acc64 = { .acc_dtype = MXP_F64 };
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        const char *f32 = mxp_gemm_kernel_name(MXP_F32, MXP_F32, NULL);
        const char *f64 = mxp_gemm_kernel_name(MXP_F64, MXP_F64, NULL);
        assert_non_null(f32);
        assert_non_null(f64);
        assert_true(f32[0] != '\0' && f64[0] != '\0');
        assert_string_not_equal(f32, "invalid");
        assert_string_not_equal(f64, "invalid");
        assert_string_not_equal(f32, f64);
        print_message("level %s: f32 %s, f64 %s\n", mxp_isa_name((mxp_isa)isa), f32, f64);
        /* every float pair has a kernel; acc_dtype F64 picks float64's */
        const mxp_dtype lows[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2 };
        for (size_t i = 0; i < NELEMS(lows); i++)
            for (size_t j = 0; j < NELEMS(lows); j++) {
                const char *name = mxp_gemm_kernel_name(lows[i], lows[j], NULL);
                assert_non_null(name);
                assert_true(name[0] != '\0');
                assert_string_not_equal(name, "invalid");
            }
        assert_string_equal(mxp_gemm_kernel_name(MXP_F32, MXP_F32, &acc64), f64);
        assert_string_equal(mxp_gemm_kernel_name(MXP_BF16, MXP_F16, &acc64), f64);
        assert_string_equal(mxp_gemm_kernel_name(MXP_F16, MXP_F32, NULL), f32);
        /* each level's own kernels, by their function names (an AVX2
         * machine runs these two) */
        if (isa == MXP_ISA_AVX2) {
            assert_string_equal(f32, "mxp_f32_gemm_ukernel_6x16__avx2");
            assert_string_equal(f64, "mxp_f64_gemm_ukernel_6x8__avx2");
        }
        if (isa == MXP_ISA_SCALAR)
            assert_string_equal(f64, "mxp_f64_gemm_ukernel_4x4__scalar");
    }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    assert_string_equal(mxp_gemm_kernel_name((mxp_dtype)0, MXP_F32, NULL), "invalid");
    assert_string_equal(mxp_gemm_kernel_name(MXP_F32, (mxp_dtype)77, NULL), "invalid");
    const char *s32 = mxp_gemm_kernel_name(MXP_S32, MXP_S32, NULL);
    assert_non_null(s32);
    assert_true(s32[0] != '\0');
    static const mxp_gemm_opts bad_acc = { .acc_dtype = MXP_E5M2 };
    assert_string_equal(mxp_gemm_kernel_name(MXP_F32, MXP_F32, &bad_acc), "invalid");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_gemm_reference_oracle_is_right, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_f32_and_f64_match_reference_on_every_shape_and_transpose, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_low_precision_and_mixed_dtypes_within_tolerance, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_large_shapes_cross_every_cache_block, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_small_m_reads_b_in_place_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_a_read_in_place_equals_a_packed_bit_for_bit, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_narrow_floats_equal_their_bf16_values_on_the_same_kernel, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_padded_leading_dimensions_leave_padding_guards_and_inputs_untouched,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_gemm_beta_zero_ignores_nan_and_inf_in_c, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_alpha_zero_gives_beta_c_without_reading_a_or_b, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_beta_one_accumulates_and_general_alpha_beta, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_nan_and_inf_in_inputs_propagate_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_small_integers_are_exact_in_every_dtype, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_subnormals_are_exact_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_bf16_tiny_value_anywhere_in_a_large_b_is_exact_with_threads,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_gemm_every_isa_level_matches_reference, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_m1_gemv_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_results_identical_for_any_thread_count, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_bad_arguments_give_a_status_and_a_sentence_and_leave_c_untouched,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_gemm_rows_longer_than_the_address_space_overflow, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_zero_sizes_allow_null_and_k_zero_scales_c, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_output_rounding_options_are_applied_once, restore_defaults),
        cmocka_unit_test_teardown(test_gemm_every_allocation_failure_is_reported_and_leaves_c_untouched,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_gemm_kernel_name_names_the_kernel_or_says_invalid, restore_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
