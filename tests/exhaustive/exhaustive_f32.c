/* make check-exhaustive: every one of the 2^32 float32 patterns to bfloat16,
 * float16, float8_e4m3fn and float8_e5m2 (and the 0.2 formats: float8_e3m4,
 * float8_e4m3, the fnuz float8s, float6, float4, float8_e8m0fnu) in the five
 * deterministic modes, and to the first four, int8, uint8 and e8m0 by
 * stochastic rounding, bit for bit, at
 * every ISA level this machine has.
 *
 * Step 1 proves the reference converter equal to the MPFR oracle on the
 * stratified set (every exponent, the rounding-deciding mantissas, 2M random
 * patterns).  Step 2 compares every SIMD kernel with the reference on all
 * 2^32 inputs in the deterministic modes (overflow to inf), step 3 in
 * stochastic rounding (one seed, element i drawing index i, both overflow
 * policies), each in two threads.  Prints a progress line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/cases.h"
#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "convert/oracle.h"
#include "mxp.h"

enum { CHUNK = 1 << 20, THREADS = 2, N_MODES = 5 };

static const mxp_dtype targets[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2,
                                     /* the 0.2 formats with float32 kernels */
                                     MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ,
                                     MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_E8M0 };
enum { N_TARGETS = sizeof targets / sizeof targets[0] };
static const mxp_dtype sr_targets[] = { MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8, MXP_E8M0 };
enum { N_SR_TARGETS = sizeof sr_targets / sizeof sr_targets[0] };

/* One pass over the 2^32 patterns: these targets, modes [mode0, mode1),
 * overflow policies [0, n_overflow), the stochastic stream's seed. */
typedef struct sweep {
    const char *step;
    const mxp_dtype *targets;
    int n_targets, mode0, mode1, n_overflow;
    uint64_t seed;
} sweep;

static const sweep deterministic = { "step 2", targets, N_TARGETS, 0, N_MODES, 1, 0 };
static const sweep stochastic = { "step 3", sr_targets, N_SR_TARGETS, MXP_ROUND_STOCHASTIC, MXP_ROUND_STOCHASTIC + 1,
                                  MXP_OVERFLOW_COUNT, 0x5eed5eed12345678ull };

static const sweep *current;
static atomic_ullong chunks_done, mismatches;

static size_t oracle_step(const mxp_dtype *tl, int n_targets)
{
    enum { CAP = 1 << 22 };
    uint64_t *bits = malloc(CAP * sizeof *bits);
    uint32_t *src = malloc(CAP * 4);
    uint16_t *dst = malloc(CAP * 2);
    size_t bad = 0, checked = 0;
    mxp_set_isa(MXP_ISA_SCALAR);
    for (int t = 0; t < n_targets; t++) {
        size_t n = cases_build(MXP_F32, tl[t], bits, CAP, 2024 + t, 2000000);
        cases_store(src, MXP_F32, bits, n);
        size_t ds = mxp_dtype_itemsize(tl[t]);
        for (int mode = 0; mode < N_MODES; mode++) {
            mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = MXP_OVERFLOW_INF, .seed = 0, .flags = NULL };
            mxp_convert(dst, tl[t], src, MXP_F32, n, &o);
            for (size_t i = 0; i < n; i++) {
                oracle_result want = oracle_convert(tl[t], MXP_F32, bits[i], (mxp_rounding)mode, MXP_OVERFLOW_INF);
                uint64_t got = test_load_bits(dst, i, ds);
                if (!oracle_matches(&want, got, tl[t]) && bad++ < 10)
                    fprintf(stderr, "oracle: f32 0x%08llx -> %s %s: reference 0x%llx, oracle 0x%llx\n",
                            (unsigned long long)bits[i], mxp_dtype_name(tl[t]),
                            mxp_rounding_name((mxp_rounding)mode), (unsigned long long)got,
                            (unsigned long long)want.bits);
            }
            checked += n;
        }
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    free(bits);
    free(src);
    free(dst);
    printf("step 1: reference equals the MPFR oracle on %zu stratified conversions (%zu differ)\n", checked, bad);
    return bad;
}

enum { MAX_KERNELS = 8 };

/* Every kernel for (target, mode) this machine can run: the ones dispatch
 * picks here and the ones it passes over for this CPU family. */
static size_t kernels_for(mxp_dtype t, mxp_rounding mode, const mxp_cvt_kernel **out)
{
    size_t n = 0, count;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&count);
    for (size_t i = 0; i < count && n < MAX_KERNELS; i++)
        if (ks[i].dst == t && ks[i].src == MXP_F32 && (ks[i].modes >> mode & 1u) && ks[i].isa <= mxp_isa_supported())
            out[n++] = &ks[i];
    return n;
}

static void *worker(void *arg)
{
    const sweep *w = current;
    const uint64_t first = (uint64_t)(uintptr_t)arg, total_chunks = (1ull << 32) / CHUNK;
    uint32_t *src = malloc(CHUNK * 4);
    uint16_t *want = malloc(CHUNK * 2), *got = malloc(CHUNK * 2);
    for (uint64_t c = first; c < total_chunks; c += THREADS) {
        for (uint32_t i = 0; i < CHUNK; i++)
            src[i] = (uint32_t)(c * CHUNK + i);
        for (int t = 0; t < w->n_targets; t++) {
            size_t ds = mxp_dtype_itemsize(w->targets[t]);
            for (int mode = w->mode0; mode < w->mode1; mode++) {
                const mxp_cvt_kernel *ks[MAX_KERNELS];
                size_t nk = kernels_for(w->targets[t], (mxp_rounding)mode, ks);
                for (int ov = 0; ov < w->n_overflow; ov++) {
                    mxp_cvt_params p = { (mxp_rounding)mode, (mxp_overflow)ov, w->seed, c * CHUNK, NULL };
                    mxp_convert_ref(want, w->targets[t], src, MXP_F32, CHUNK, &p);
                    for (size_t k = 0; k < nk; k++) {
                        ks[k]->fn(got, src, CHUNK, &p);
                        if (memcmp(want, got, CHUNK * ds) == 0)
                            continue;
                        for (uint32_t i = 0; i < CHUNK; i++) {
                            uint64_t a = test_load_bits(want, i, ds), b = test_load_bits(got, i, ds);
                            if (a != b && atomic_fetch_add(&mismatches, 1) < 10)
                                fprintf(stderr, "\n%s %s/%s: f32 0x%08x: kernel 0x%llx, reference 0x%llx\n",
                                        ks[k]->name, mxp_rounding_name((mxp_rounding)mode),
                                        mxp_overflow_name((mxp_overflow)ov), src[i], (unsigned long long)b,
                                        (unsigned long long)a);
                        }
                    }
                }
            }
        }
        unsigned long long done = atomic_fetch_add(&chunks_done, 1) + 1;
        if (done * 1000 / total_chunks != (done - 1) * 1000 / total_chunks) {
            printf("\r%s: %5.1f%% of 2^32 float32 patterns, %llu mismatches", w->step,
                   100.0 * (double)done / (double)total_chunks, (unsigned long long)atomic_load(&mismatches));
            fflush(stdout);
        }
    }
    free(src);
    free(want);
    free(got);
    return NULL;
}

/* Runs one sweep in THREADS threads; its mismatches. */
static unsigned long long run_sweep(const sweep *w)
{
    printf("%s: kernels compared with the reference:", w->step);
    for (int t = 0; t < w->n_targets; t++)
        for (int mode = w->mode0; mode < w->mode1; mode++) {
            const mxp_cvt_kernel *ks[MAX_KERNELS];
            size_t nk = kernels_for(w->targets[t], (mxp_rounding)mode, ks);
            for (size_t k = 0; k < nk; k++)
                printf(" %s/%s", ks[k]->name + 4, mxp_rounding_name((mxp_rounding)mode));
        }
    printf("\n");
    current = w;
    atomic_store(&chunks_done, 0);
    atomic_store(&mismatches, 0);
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    unsigned long long bad = atomic_load(&mismatches);
    printf("\n%s: all 2^32 float32 patterns x %d targets x %d modes x %d overflow policies, %llu mismatches\n",
           w->step, w->n_targets, w->mode1 - w->mode0, w->n_overflow, bad);
    return bad;
}

/* Keeps the targets named on the command line (dtype names), in place;
 * returns how many are left. */
static int keep_named(mxp_dtype *t, int n, int argc, char **argv)
{
    int kept = 0;
    for (int i = 0; i < n; i++)
        for (int a = 1; a < argc; a++) {
            if (mxp_dtype_from_name(argv[a]) == t[i]) {
                t[kept++] = t[i];
                break;
            }
        }
    return kept;
}

/* usage: exhaustive_f32 [dtype ...]  -- only these targets (default: all) */
int main(int argc, char **argv)
{
    sweep det = deterministic, sr = stochastic;
    mxp_dtype det_t[N_TARGETS], sr_t[N_SR_TARGETS];
    memcpy(det_t, targets, sizeof det_t);
    memcpy(sr_t, sr_targets, sizeof sr_t);
    det.targets = det_t;
    sr.targets = sr_t;
    if (argc > 1) {
        det.n_targets = keep_named(det_t, N_TARGETS, argc, argv);
        sr.n_targets = keep_named(sr_t, N_SR_TARGETS, argc, argv);
    }
    if (oracle_step(det.targets, det.n_targets) != 0)
        return 1;
    unsigned long long bad = run_sweep(&det);
    bad += run_sweep(&sr);
    printf("%s: %llu mismatches\n", bad ? "FAILED" : "PASSED", bad);
    printf("%d passed, %d failed\n", bad ? 0 : 1, bad ? 1 : 0);
    return bad != 0;
}
