/* make check-exhaustive: every one of the 2^32 float32 patterns, bit for bit
 * against the reference converter, through every float32 kernel this
 * machine can run (every ISA level it has; the kernels dispatch picks and
 * the ones it passes over; the byte-lane table kernel, for the pairs and
 * modes its tables serve), each step in two threads:
 *
 *   step 1  the reference equals the MPFR oracle on the stratified set
 *           (every exponent, the rounding-deciding mantissas, 2M random
 *           patterns) for the targets, deterministic modes and overflow
 *           policies of the sweeps that run (steps 2, 4 and 6);
 *   step 2  bfloat16, float16, float8_e4m3fn, float8_e5m2 and the 0.2
 *           float formats (float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
 *           float8_e4m3fnuz, float8_e5m2fnuz, float6_e2m3fn, float6_e3m2fn,
 *           float4_e2m1fn, float8_e8m0fnu), the five deterministic modes,
 *           overflow to infinity;
 *   step 3  float16, bfloat16, e4m3fn, e5m2, int8, uint8 and e8m0 by
 *           stochastic rounding (one seed, element i drawing index i),
 *           both overflow policies;
 *   step 4  float8_e4m3fn, float8_e5m2 and the 0.2 float formats, the
 *           five deterministic modes, saturating;
 *   step 5  the 0.2 float formats but e8m0 (step 3) by stochastic rounding,
 *           both overflow policies;
 *   step 6  int4, uint4, int2, uint2, int1, uint1: every mode, stochastic
 *           rounding too, both overflow policies.
 *
 * ctest (tests/CMakeLists.txt): exhaustive_f32 runs steps 1-3 and
 * exhaustive_f32_formats steps 1 and 4-6, both labelled exhaustive (make
 * check-exhaustive); exhaustive_f32_strided, in make check, steps 2-6 on
 * every 4099th pattern (a few seconds).
 *
 *   exhaustive_f32 [--steps DIGITS] [--stride N] [--kernels S] [dtype ...]
 *
 * --steps: the steps to run (default 123); --kernels S: only the kernels
 * whose names hold S (the reference is always run); --stride N (odd): the patterns
 * k * N only, k = 0, 1, ... below 2^32 / N (element k draws stochastic
 * index k); dtype names: those targets only (default: all).  Prints a
 * progress line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/cases.h"
#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "convert/oracle.h"
#include "kernels/x16-lut-kernels.h"
#include "mxp.h"

enum { CHUNK = 1 << 20, THREADS = 2, N_MODES = 5, MAX_TARGETS = 16 };

static const mxp_dtype targets[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2,
                                     /* the 0.2 formats with float32 kernels */
                                     MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ,
                                     MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_E8M0 };
static const mxp_dtype sr_targets[] = { MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8, MXP_E8M0 };
/* step 4: the 0.2 formats, and float8_e4m3fn and float8_e5m2, whose
 * saturating deterministic modes no step had swept */
static const mxp_dtype sat_targets[] = { MXP_E4M3, MXP_E5M2, MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ,
                                         MXP_E5M2FNUZ, MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_E8M0 };
static const mxp_dtype new_sr_targets[] = { MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ,
                                            MXP_E2M3, MXP_E3M2, MXP_E2M1 };
static const mxp_dtype int_targets[] = { MXP_S4, MXP_U4, MXP_S2, MXP_U2, MXP_S1, MXP_U1 };

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* One pass over the float32 patterns: these targets, modes [mode0, mode1),
 * overflow policies [ov0, ov1), the stochastic stream's seed. */
typedef struct sweep {
    const char *step;
    mxp_dtype targets[MAX_TARGETS];
    int n_targets, mode0, mode1, ov0, ov1;
    uint64_t seed, oracle_seed;
} sweep;

enum { SR = MXP_ROUND_STOCHASTIC, INF = MXP_OVERFLOW_INF, SAT = MXP_OVERFLOW_SATURATE, N_OV = MXP_OVERFLOW_COUNT };
static const uint64_t SEED = 0x5eed5eed12345678ull;

/* The patterns swept: k * stride for k in [0, n_patterns), in chunks of
 * chunk_len (element k of the sweep draws stochastic index k). */
static uint64_t stride = 1, n_patterns = 1ull << 32, chunk_len = CHUNK;

static const sweep *current;
static atomic_ullong chunks_done, mismatches;
static const char *only; /* --kernels: the kernels whose names hold this */

/* Step 1 for one sweep: the reference against MPFR on the stratified set,
 * in the sweep's deterministic modes and overflow policies. */
static size_t oracle_step(const sweep *w, size_t *checked)
{
    enum { CAP = 1 << 22 };
    uint64_t *bits = malloc(CAP * sizeof *bits);
    uint32_t *src = malloc(CAP * 4);
    uint16_t *dst = malloc(CAP * 2);
    size_t bad = 0;
    mxp_set_isa(MXP_ISA_SCALAR);
    const int mode1 = w->mode1 < SR ? w->mode1 : SR;
    for (int t = 0; t < w->n_targets; t++) {
        size_t n = cases_build(MXP_F32, w->targets[t], bits, CAP, w->oracle_seed + (uint64_t)t, 2000000);
        cases_store(src, MXP_F32, bits, n);
        size_t ds = mxp_dtype_itemsize(w->targets[t]);
        for (int mode = w->mode0; mode < mode1; mode++)
            for (int ov = w->ov0; ov < w->ov1; ov++) {
                mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = (mxp_overflow)ov, .seed = 0,
                                       .flags = NULL };
                mxp_convert(dst, w->targets[t], src, MXP_F32, n, &o);
                for (size_t i = 0; i < n; i++) {
                    oracle_result want = oracle_convert(w->targets[t], MXP_F32, bits[i], (mxp_rounding)mode,
                                                        (mxp_overflow)ov);
                    uint64_t got = test_load_bits(dst, i, ds);
                    if (!oracle_matches(&want, got, w->targets[t]) && bad++ < 10)
                        fprintf(stderr, "oracle: f32 0x%08llx -> %s %s/%s: reference 0x%llx, oracle 0x%llx\n",
                                (unsigned long long)bits[i], mxp_dtype_name(w->targets[t]),
                                mxp_rounding_name((mxp_rounding)mode), mxp_overflow_name((mxp_overflow)ov),
                                (unsigned long long)got, (unsigned long long)want.bits);
                }
                *checked += n;
            }
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    free(bits);
    free(src);
    free(dst);
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
        if (ks[i].dst == t && ks[i].src == MXP_F32 && (ks[i].modes >> mode & 1u) && ks[i].isa <= mxp_isa_supported() &&
            (!only || strstr(ks[i].name, only)))
            out[n++] = &ks[i];
    return n;
}

/* The float32 byte-lane table kernel (src/kernels/x16-lut-list.inc,
 * width 32) where the machine runs it and its tables serve (t, mode, ov),
 * with the tables in *tab (mxp_convert's from 2K elements on), or NULL. */
static const mxp_kernel *lut_for(mxp_dtype t, mxp_rounding mode, mxp_overflow ov, mxp_x16_lut_tables *tab)
{
    size_t count;
    const mxp_kernel *ks = mxp_cvt_x16_lut_kernels(&count);
    const mxp_cvt_kernel *rest = mxp_cvt_find(t, MXP_F32, mode, mxp_isa_supported());
    const mxp_cvt_params p = { mode, ov, 0, 0, NULL };
    for (size_t i = 0; i < count; i++)
        if (ks[i].param == 32 && mxp_kernel_runs(&ks[i], mxp_isa_supported()) && (!only || strstr(ks[i].name, only)) &&
            mxp_dtype_get_traits(t)->kind == MXP_KIND_FLOAT && /* float32's integers keep vcvtps2dq */
            rest && mxp_cvt_x16_lut_tables(tab, t, MXP_BF16, &p, rest->fn))
            return &ks[i];
    return NULL;
}

static void *worker(void *arg)
{
    const sweep *w = current;
    const uint64_t first = (uint64_t)(uintptr_t)arg, total_chunks = (n_patterns + chunk_len - 1) / chunk_len;
    uint32_t *src = malloc(chunk_len * 4);
    uint16_t *want = malloc(chunk_len * 2), *got = malloc(chunk_len * 2);
    for (uint64_t c = first; c < total_chunks; c += THREADS) {
        const uint64_t k0 = c * chunk_len;
        const size_t len = (size_t)(n_patterns - k0 < chunk_len ? n_patterns - k0 : chunk_len);
        for (size_t i = 0; i < len; i++)
            src[i] = (uint32_t)((k0 + i) * stride);
        for (int t = 0; t < w->n_targets; t++) {
            size_t ds = mxp_dtype_itemsize(w->targets[t]);
            for (int mode = w->mode0; mode < w->mode1; mode++) {
                const mxp_cvt_kernel *ks[MAX_KERNELS];
                size_t nk = kernels_for(w->targets[t], (mxp_rounding)mode, ks);
                for (int ov = w->ov0; ov < w->ov1; ov++) {
                    mxp_cvt_params p = { (mxp_rounding)mode, (mxp_overflow)ov, w->seed, k0, NULL };
                    mxp_x16_lut_tables tab;
                    const mxp_kernel *lut =
                        mode < SR ? lut_for(w->targets[t], (mxp_rounding)mode, (mxp_overflow)ov, &tab) : NULL;
                    if (nk == 0 && !lut) /* --kernels left nothing here */
                        continue;
                    mxp_convert_ref(want, w->targets[t], src, MXP_F32, len, &p);
                    for (size_t k = 0; k < nk + (lut != NULL); k++) {
                        if (k < nk)
                            ks[k]->fn(got, src, len, &p);
                        else
                            ((mxp_x16_lut_ukernel *)lut->fn)(got, src, len, &tab);
                        if (memcmp(want, got, len * ds) == 0)
                            continue;
                        for (size_t i = 0; i < len; i++) {
                            uint64_t a = test_load_bits(want, i, ds), b = test_load_bits(got, i, ds);
                            if (a != b && atomic_fetch_add(&mismatches, 1) < 10)
                                fprintf(stderr,
                                        "\n%s %s/%s: f32 0x%08x (seed 0x%llx, index %llu): kernel 0x%llx, "
                                        "reference 0x%llx\n",
                                        k < nk ? ks[k]->name : lut->name, mxp_rounding_name((mxp_rounding)mode),
                                        mxp_overflow_name((mxp_overflow)ov), src[i], (unsigned long long)w->seed,
                                        (unsigned long long)(k0 + i), (unsigned long long)b, (unsigned long long)a);
                        }
                    }
                }
            }
        }
        unsigned long long done = atomic_fetch_add(&chunks_done, 1) + 1;
        if (done * 1000 / total_chunks != (done - 1) * 1000 / total_chunks) {
            printf("\r%s: %5.1f%% of the float32 patterns, %llu mismatches", w->step,
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
    if (w->n_targets == 0)
        return 0;
    printf("%s: kernels compared with the reference:", w->step);
    for (int t = 0; t < w->n_targets; t++)
        for (int mode = w->mode0; mode < w->mode1; mode++) {
            const mxp_cvt_kernel *ks[MAX_KERNELS];
            size_t nk = kernels_for(w->targets[t], (mxp_rounding)mode, ks);
            for (size_t k = 0; k < nk; k++)
                printf(" %s/%s", ks[k]->name + 4, mxp_rounding_name((mxp_rounding)mode));
            mxp_x16_lut_tables tab;
            const mxp_kernel *lut = mode < SR ? lut_for(w->targets[t], (mxp_rounding)mode, (mxp_overflow)w->ov0, &tab)
                                              : NULL;
            if (lut)
                printf(" %s(%s)/%s", lut->name + 4, mxp_dtype_name(w->targets[t]),
                       mxp_rounding_name((mxp_rounding)mode));
        }
    printf("\n");
    fflush(stdout);
    current = w;
    atomic_store(&chunks_done, 0);
    atomic_store(&mismatches, 0);
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    unsigned long long bad = atomic_load(&mismatches);
    if (stride == 1)
        printf("\n%s: all 2^32 float32 patterns", w->step);
    else
        printf("\n%s: %llu float32 patterns (stride %llu)", w->step, (unsigned long long)n_patterns,
               (unsigned long long)stride);
    printf(" x %d targets x %d modes x %d overflow policies (", w->n_targets, w->mode1 - w->mode0, w->ov1 - w->ov0);
    for (int ov = w->ov0; ov < w->ov1; ov++)
        printf("%s%s", ov > w->ov0 ? ", " : "", mxp_overflow_name((mxp_overflow)ov));
    printf("), %llu mismatches\n", bad);
    fflush(stdout);
    return bad;
}

/* The sweep over these targets, keeping those named on the command line
 * (dtype names; all when none is named). */
static sweep make_sweep(const char *step, const mxp_dtype *t, int n, int mode0, int mode1, int ov0, int ov1,
                        uint64_t oracle_seed, int argc, char **argv, int first_name)
{
    sweep w = { step, { MXP_DTYPE_INVALID }, 0, mode0, mode1, ov0, ov1, SEED, oracle_seed };
    for (int i = 0; i < n; i++) {
        int keep = first_name >= argc;
        for (int a = first_name; a < argc && !keep; a++)
            keep = mxp_dtype_from_name(argv[a]) == t[i];
        if (keep)
            w.targets[w.n_targets++] = t[i];
    }
    return w;
}

static int usage(void)
{
    fprintf(stderr, "usage: exhaustive_f32 [--steps DIGITS (1-6; default 123)] [--stride N (odd)] "
                    "[--kernels SUBSTRING] [dtype ...]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *steps = "123";
    int a = 1;
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
            steps = argv[++a];
            if (!*steps || strspn(steps, "123456") != strlen(steps))
                return usage();
        } else if (strcmp(argv[a], "--kernels") == 0 && a + 1 < argc) {
            only = argv[++a];
        } else if (strcmp(argv[a], "--stride") == 0 && a + 1 < argc) {
            char *end;
            stride = strtoull(argv[++a], &end, 10);
            /* odd: k * stride mod 2^32 takes every residue once, no pattern twice */
            if (*end || stride == 0 || stride % 2 == 0 || stride >> 32)
                return usage();
        } else {
            return usage();
        }
    }
    for (int i = a; i < argc; i++)
        if (mxp_dtype_from_name(argv[i]) == MXP_DTYPE_INVALID)
            return usage();
    n_patterns = ((1ull << 32) + stride - 1) / stride;
    if (stride > 1) { /* enough chunks for both threads */
        chunk_len = n_patterns / 256;
        chunk_len = chunk_len < 1024 ? 1024 : chunk_len > CHUNK ? CHUNK : chunk_len;
    }
    /* step 1 covers the deterministic modes of steps 2, 4 and 6 */
    const sweep sweeps[6] = {
        { "step 1", { MXP_DTYPE_INVALID }, 0, 0, 0, 0, 0, 0, 0 },
        make_sweep("step 2", targets, COUNT(targets), 0, N_MODES, INF, INF + 1, 2024, argc, argv, a),
        make_sweep("step 3", sr_targets, COUNT(sr_targets), SR, SR + 1, 0, N_OV, 0, argc, argv, a),
        make_sweep("step 4", sat_targets, COUNT(sat_targets), 0, N_MODES, SAT, SAT + 1, 4048, argc, argv, a),
        make_sweep("step 5", new_sr_targets, COUNT(new_sr_targets), SR, SR + 1, 0, N_OV, 0, argc, argv, a),
        make_sweep("step 6", int_targets, COUNT(int_targets), 0, SR + 1, 0, N_OV, 6072, argc, argv, a),
    };
    int any = 0;
    for (int s = 1; s < 6; s++)
        any |= strchr(steps, '1' + s) && sweeps[s].n_targets;
    if (!any) {
        fprintf(stderr, "exhaustive_f32: no target named is in steps %s\n", steps);
        return 2;
    }
    if (strchr(steps, '1')) {
        size_t bad = 0, checked = 0;
        for (int s = 1; s < 6; s++)
            if (strchr(steps, '1' + s) && sweeps[s].mode0 < SR)
                bad += oracle_step(&sweeps[s], &checked);
        printf("step 1: reference equals the MPFR oracle on %zu stratified conversions (%zu differ)\n", checked,
               bad);
        if (bad)
            return 1;
    }
    unsigned long long bad = 0;
    for (int s = 1; s < 6; s++)
        if (strchr(steps, '1' + s))
            bad += run_sweep(&sweeps[s]);
    printf("%s: %llu mismatches\n", bad ? "FAILED" : "PASSED", bad);
    printf("%d passed, %d failed\n", bad ? 0 : 1, bad ? 1 : 0);
    return bad != 0;
}
