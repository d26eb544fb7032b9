/* make check-exhaustive: every one of the 2^32 float32 patterns to float16,
 * bfloat16, float8_e4m3fn, float8_e5m2, int8 and uint8 by stochastic
 * rounding (one seed, element i drawing index i), both overflow policies,
 * every SIMD kernel this machine has against the reference converter, bit
 * for bit, in two threads.  Prints a progress line. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "mxp.h"

enum { CHUNK = 1 << 20, THREADS = 2, MAX_KERNELS = 8 };

static const mxp_dtype targets[] = { MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8 };
enum { N_TARGETS = sizeof targets / sizeof targets[0] };
static const uint64_t seed = 0x5eed5eed12345678ull;

static atomic_ullong chunks_done, mismatches;

static uint64_t load(const void *buf, size_t i, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, (const unsigned char *)buf + i * size, size);
    return v;
}

static size_t kernels_for(mxp_dtype t, const mxp_cvt_kernel **out)
{
    size_t n = 0, count;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&count);
    for (size_t i = 0; i < count && n < MAX_KERNELS; i++)
        if (ks[i].dst == t && ks[i].src == MXP_F32 && (ks[i].modes >> MXP_ROUND_STOCHASTIC & 1u) &&
            ks[i].isa <= mxp_isa_supported())
            out[n++] = &ks[i];
    return n;
}

static void *worker(void *arg)
{
    const uint64_t first = (uint64_t)(uintptr_t)arg, total_chunks = (1ull << 32) / CHUNK;
    uint32_t *src = malloc(CHUNK * 4);
    uint16_t *want = malloc(CHUNK * 2), *got = malloc(CHUNK * 2);
    for (uint64_t c = first; c < total_chunks; c += THREADS) {
        for (uint32_t i = 0; i < CHUNK; i++)
            src[i] = (uint32_t)(c * CHUNK + i);
        for (int t = 0; t < N_TARGETS; t++) {
            const size_t ds = mxp_dtype_itemsize(targets[t]);
            const mxp_cvt_kernel *ks[MAX_KERNELS];
            const size_t nk = kernels_for(targets[t], ks);
            for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                mxp_cvt_params p = { MXP_ROUND_STOCHASTIC, (mxp_overflow)ov, seed, c * CHUNK, NULL };
                mxp_convert_ref(want, targets[t], src, MXP_F32, CHUNK, &p);
                for (size_t k = 0; k < nk; k++) {
                    ks[k]->fn(got, src, CHUNK, &p);
                    if (memcmp(want, got, CHUNK * ds) == 0)
                        continue;
                    for (uint32_t i = 0; i < CHUNK; i++) {
                        uint64_t a = load(want, i, ds), b = load(got, i, ds);
                        if (a != b && atomic_fetch_add(&mismatches, 1) < 10)
                            fprintf(stderr, "\n%s %s: f32 0x%08x: kernel 0x%llx, reference 0x%llx\n", ks[k]->name,
                                    mxp_overflow_name((mxp_overflow)ov), src[i], (unsigned long long)b,
                                    (unsigned long long)a);
                    }
                }
            }
        }
        unsigned long long done = atomic_fetch_add(&chunks_done, 1) + 1;
        if (done * 1000 / total_chunks != (done - 1) * 1000 / total_chunks) {
            printf("\r%5.1f%% of 2^32 float32 patterns, %llu mismatches", 100.0 * (double)done / (double)total_chunks,
                   (unsigned long long)atomic_load(&mismatches));
            fflush(stdout);
        }
    }
    free(src);
    free(want);
    free(got);
    return NULL;
}

int main(void)
{
    printf("stochastic rounding, kernels compared with the reference:");
    for (int t = 0; t < N_TARGETS; t++) {
        const mxp_cvt_kernel *ks[MAX_KERNELS];
        size_t nk = kernels_for(targets[t], ks);
        for (size_t k = 0; k < nk; k++)
            printf(" %s", ks[k]->name + 4);
    }
    printf("\n");
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    unsigned long long bad = atomic_load(&mismatches);
    printf("\n%s: all 2^32 float32 patterns x %d targets x %d overflow policies, stochastic, %llu mismatches\n",
           bad ? "FAILED" : "PASSED", N_TARGETS, MXP_OVERFLOW_COUNT, bad);
    printf("%d passed, %d failed\n", bad ? 0 : 1, bad ? 1 : 0);
    return bad != 0;
}
