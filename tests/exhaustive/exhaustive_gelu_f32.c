/* make check-exhaustive: float32 gelu's checked fast path (every row of
 * src/kernels/f32-gelu-list.inc the level runs: mxp_f32_gelu__avx512f,
 * mxp_f32_gelu__avx2) on every one of the 2^32 float32 patterns, bit for
 * bit against the SLEEF path it replaces (mxp_f32_vmath__avx512f / __avx2
 * with MXP_VMATH_GELU: SLEEF's float64 erfc, rounded once).  Also:
 *
 *   - the fast path's float64 approximation y (mxp_f64_gelu_approx__<isa>)
 *     against the SLEEF path's float64 value s: max |y - s| / |s| over all
 *     x with |x| < 14.5, which must stay below 2^-44, leaving the check's
 *     2^-42 room for s's own error (a few float64 ulp); beyond, y is x or
 *     -0, and the comparison of the results proves them;
 *   - the check redone here in C from y (y -+ 2^-42 |y| round to the same
 *     float32), lane by lane: the kernel's count of lanes that took the
 *     SLEEF path must equal it; they are counted by kind (NaN and infinities,
 *     tiny x whose x/2 is a float32 tie, the rest: a rounding boundary
 *     near y);
 *   - where the level has one, the bfloat16-output kernel
 *     (mxp_f32_vmath_to_bf16__avx512f with MXP_VMATH_GELU: a float32
 *     approximation, the SLEEF path where its rounding is unsettled)
 *     rounded to bfloat16, bit for bit against the SLEEF path's float64
 *     value rounded once to bfloat16 (NaN against NaN).
 *
 *   exhaustive_gelu_f32 [THREADS]     (default 2)
 *
 * Skips (passes) where the machine or MXP_ISA has no AVX2. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxp.h"
#include "ops/kernel-config.h"

enum { CHUNK = 1 << 20, MAX_THREADS = 16 };

/* One ISA's fast path: the kernel, its approximation, the SLEEF path in
 * float32 and float64. */
typedef struct gelu_isa {
    const char *name;
    mxp_isa isa;
    mxp_f32_gelu_ukernel *fast;
    mxp_f64_gelu_ukernel *approx;
    mxp_f32_vmath_ukernel *sleef;
    mxp_f64_vmath_ukernel *sleef64;
    mxp_f32_vmath_ukernel *to_bf16; /* NULL where the level has none */
} gelu_isa;

static const gelu_isa *k; /* the one under test */
static int threads = 2;
static atomic_ullong chunks_done, mismatches, redo_kernel, redo_twin, redo_nonfinite, redo_tie, miscount;
static atomic_ullong bf16_mismatches, bf16_redo;
static double worst_rel[MAX_THREADS];
static uint32_t worst_bits[MAX_THREADS];

/* the kernel's check, in C: y -+ 2^-42 |y| round to the same float32 */
static int settled(double y)
{
    const double d = fabs(y) * 0x1p-42;
    return (float)(y - d) == (float)(y + d);
}

static void *worker(void *arg)
{
    const int w = (int)(uintptr_t)arg;
    const uint64_t total = (1ull << 32) / CHUNK;
    uint32_t *bits = malloc(CHUNK * 4);
    float *got = malloc(CHUNK * 4), *want = malloc(CHUNK * 4);
    double *xd = malloc(CHUNK * 8), *y = malloc(CHUNK * 8), *s = malloc(CHUNK * 8);
    uint16_t *got16 = malloc(CHUNK * 2), *want16 = malloc(CHUNK * 2);
    for (uint64_t c = (uint64_t)w; c < total; c += (uint64_t)threads) {
        for (uint32_t i = 0; i < CHUNK; i++)
            bits[i] = (uint32_t)(c * CHUNK + i);
        const float *x = (const float *)(const void *)bits;
        for (uint32_t i = 0; i < CHUNK; i++)
            xd[i] = x[i];
        const size_t redo = k->fast(got, x, CHUNK);
        k->sleef(MXP_VMATH_GELU, want, x, CHUNK);
        k->approx(y, xd, CHUNK);
        k->sleef64(MXP_VMATH_GELU, s, xd, CHUNK);
        if (memcmp(got, want, CHUNK * 4) != 0) {
            for (uint32_t i = 0; i < CHUNK; i++) {
                uint32_t g, r;
                memcpy(&g, &got[i], 4);
                memcpy(&r, &want[i], 4);
                if (g != r && atomic_fetch_add(&mismatches, 1) < 10)
                    fprintf(stderr, "\n%s: gelu(0x%08x = %.9g): fast path 0x%08x, SLEEF path 0x%08x\n", k->name,
                            bits[i], (double)x[i], g, r);
            }
        }
        if (k->to_bf16) {
            atomic_fetch_add(&bf16_redo, k->to_bf16(MXP_VMATH_GELU, got, x, CHUNK));
            mxp_convert(got16, MXP_BF16, got, MXP_F32, CHUNK, NULL);
            mxp_convert(want16, MXP_BF16, s, MXP_F64, CHUNK, NULL);
            for (uint32_t i = 0; i < CHUNK; i++) {
                const int nan = (got16[i] & 0x7fff) > 0x7f80 && (want16[i] & 0x7fff) > 0x7f80;
                if (got16[i] != want16[i] && !nan && atomic_fetch_add(&bf16_mismatches, 1) < 10)
                    fprintf(stderr, "\n%s: bfloat16 gelu(0x%08x = %.9g): kernel 0x%04x, SLEEF path 0x%04x\n",
                            k->name, bits[i], (double)x[i], got16[i], want16[i]);
            }
        }
        size_t twin = 0, nonfinite = 0, tie = 0;
        for (uint32_t i = 0; i < CHUNK; i++) {
            if (fabs(xd[i]) < 14.5 && s[i] != 0) { /* beyond, y is 0 or x: exact as a float32 */
                const double e = fabs(y[i] - s[i]) / fabs(s[i]);
                if (e > worst_rel[w]) {
                    worst_rel[w] = e;
                    worst_bits[w] = bits[i];
                }
            }
            if (settled(y[i]))
                continue;
            twin++;
            if (!isfinite(x[i]))
                nonfinite++;
            else if (fabs(xd[i]) < 0x1p-54 && (double)(float)(xd[i] / 2) != xd[i] / 2)
                tie++;
        }
        if (twin != redo && atomic_fetch_add(&miscount, 1) < 10)
            fprintf(stderr, "\nchunk %llu: the kernel redid %zu lanes, the check in C fails %zu\n",
                    (unsigned long long)c, redo, twin);
        atomic_fetch_add(&redo_kernel, redo);
        atomic_fetch_add(&redo_twin, twin);
        atomic_fetch_add(&redo_nonfinite, nonfinite);
        atomic_fetch_add(&redo_tie, tie);
        const unsigned long long done = atomic_fetch_add(&chunks_done, 1) + 1;
        if (done * 100 / total != (done - 1) * 100 / total) {
            printf("\r%s: %3llu%% of 2^32 float32 patterns, %llu mismatches", k->name, done * 100 / total,
                   (unsigned long long)atomic_load(&mismatches));
            fflush(stdout);
        }
    }
    free(bits);
    free(got);
    free(want);
    free(xd);
    free(y);
    free(s);
    free(got16);
    free(want16);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        threads = atoi(argv[1]);
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "usage: exhaustive_gelu_f32 [THREADS (1..%d)]\n", MAX_THREADS);
        return 2;
    }
    if (mxp_isa_current() < MXP_ISA_AVX2) {
        printf("skipped: ISA level %s has no fast path\n", mxp_isa_name(mxp_isa_current()));
        return 0;
    }
    int fail = 0;
    size_t nk;
    const mxp_kernel *rows = mxp_ops_kernels(MXP_LIST_F32_GELU, &nk);
    for (size_t ki = 0; ki < nk; ki++) {
        if (!mxp_kernel_runs(&rows[ki], mxp_isa_current()))
            continue;
        const mxp_isa level = rows[ki].isa;
        const gelu_isa row = { rows[ki].name, level, (mxp_f32_gelu_ukernel *)rows[ki].fn,
                               (mxp_f64_gelu_ukernel *)mxp_ops_kernel(MXP_LIST_F64_GELU, level, 0)->fn,
                               mxp_f32_vmath_kernel(level, MXP_VMATH_FOR_F32 | MXP_VMATH_FN(MXP_VMATH_GELU)),
                               mxp_f64_vmath_kernel(level),
                               mxp_f32_vmath_kernel(level, MXP_VMATH_FOR_BF16 | MXP_VMATH_FN(MXP_VMATH_GELU)) };
        k = &row;
        atomic_store(&chunks_done, 0);
        atomic_store(&mismatches, 0);
        atomic_store(&redo_kernel, 0);
        atomic_store(&redo_twin, 0);
        atomic_store(&redo_nonfinite, 0);
        atomic_store(&redo_tie, 0);
        atomic_store(&miscount, 0);
        atomic_store(&bf16_mismatches, 0);
        atomic_store(&bf16_redo, 0);
        memset(worst_rel, 0, sizeof worst_rel);
        pthread_t th[MAX_THREADS];
        for (int i = 0; i < threads; i++)
            pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
        double worst = 0;
        uint32_t wb = 0;
        for (int i = 0; i < threads; i++) {
            pthread_join(th[i], NULL);
            if (worst_rel[i] > worst) {
                worst = worst_rel[i];
                wb = worst_bits[i];
            }
        }
        const unsigned long long bad = atomic_load(&mismatches), r = atomic_load(&redo_kernel);
        const unsigned long long nf = atomic_load(&redo_nonfinite), tie = atomic_load(&redo_tie);
        float wx;
        memcpy(&wx, &wb, 4);
        printf("\n%s: max |y - s| / |s|: 2^%.2f (x = %.9g, 0x%08x); the check assumes 2^-42\n", k->name, log2(worst),
               (double)wx, wb);
        printf("%s: lanes on the SLEEF path: %llu of 2^32 (%llu NaN or infinite x, %llu tiny ties, %llu near a "
               "rounding boundary); the check in C: %llu\n",
               k->name, r, nf, tie, r - nf - tie, (unsigned long long)atomic_load(&redo_twin));
        const unsigned long long bad16 = atomic_load(&bf16_mismatches);
        if (k->to_bf16)
            printf("%s: bfloat16 output: %llu mismatches, %llu lanes on the SLEEF path\n", k->name, bad16,
                   (unsigned long long)atomic_load(&bf16_redo));
        const int f = bad != 0 || bad16 != 0 || atomic_load(&miscount) != 0 || !(worst < 0x1p-44);
        printf("%s: %s: all 2^32 float32 patterns, %llu mismatches\n", k->name, f ? "FAILED" : "PASSED", bad);
        fail |= f;
    }
    return fail;
}
