/* Conversions split over threads (from 1 MiB moved) give the bits and
 * counters of one thread, whatever the thread count: every mode (stochastic rounding with an
 * index offset included), both overflow policies, counters on and off,
 * contiguous and through mxp_convert_strided, at every ISA level. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "convert/convert-config.h"
#include "mxp.h"

/* 2M + 37 elements: 12 MiB for float32 -> bfloat16, so 3 shares, and
 * share boundaries that are not a multiple of the vector length. */
enum { N = (2 << 20) + 37 };

static unsigned char *src, *one, *many;

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Mostly values near 1 (so rounding happens everywhere), some raw bit
 * patterns (NaN, infinities, subnormals, overflow). */
static void fill(mxp_dtype t, size_t n)
{
    uint64_t s = 12345 + (uint64_t)t;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next(&s);
        if (t == MXP_F32) {
            float v = (float)((double)(r >> 11) * 0x1p-53 * 600.0 - 300.0);
            uint32_t b;
            memcpy(&b, &v, 4);
            if (i % 16 == 5)
                b = (uint32_t)(r >> 7);
            memcpy(src + 4 * i, &b, 4);
        } else if (t == MXP_F64) {
            double v = (double)(r >> 11) * 0x1p-53 * 600.0 - 300.0;
            uint64_t b;
            memcpy(&b, &v, 8);
            if (i % 16 == 5)
                b = next(&s);
            memcpy(src + 8 * i, &b, 8);
        } else {
            memcpy(src + i * mxp_dtype_itemsize(t), &r, mxp_dtype_itemsize(t));
        }
    }
}

static void check_thread_counts(unsigned modes, int thread_counts)
{
    const struct { mxp_dtype src, dst; } pairs[] = {
        { MXP_F32, MXP_BF16 }, { MXP_F32, MXP_F16 }, { MXP_F32, MXP_E4M3 }, { MXP_F32, MXP_E5M2 },
        { MXP_F32, MXP_S8 },   { MXP_F64, MXP_BF16 }, { MXP_F64, MXP_F32 }, { MXP_BF16, MXP_F32 },
        { MXP_S8, MXP_F32 },   { MXP_F32, MXP_F64 },
        /* one-pass, table and float16-odd kernels of the cross pairs */
        { MXP_BF16, MXP_E4M3 }, { MXP_F16, MXP_S8 }, { MXP_E4M3, MXP_BF16 }, { MXP_E5M2, MXP_F64 },
        { MXP_F64, MXP_E4M3 },
    };
    const int threads[] = { 3, 2, 7 };
    size_t bad = 0, runs = 0;
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const mxp_dtype st = pairs[k].src, dt = pairs[k].dst;
        const size_t ds = mxp_dtype_itemsize(dt);
        /* sizes where the split applies: 2 or 3 shares of >= 4 MiB (streaming stores in each) */
        const size_t big = (size_t)N * 6 / (mxp_dtype_itemsize(st) + ds);
        fill(st, big);
        /* the split happens: 2 threads here, up to 4 shares */
        assert_int_equal(mxp_set_num_threads(7), MXP_OK);
        const int shares = mxp_cvt_threads(one, dt, src, st, big);
        assert_true(shares >= 2 && shares <= 3);
        assert_int_equal(mxp_cvt_threads(src, dt, src, st, big), ds != mxp_dtype_itemsize(st) ? 1 : shares);
        /* below 4 MiB moved (no streaming stores): shares of >= 512 KiB; below 1 MiB one thread */
        assert_int_equal(mxp_cvt_threads(one, dt, src, st, big / 5), 4);
        assert_int_equal(mxp_cvt_threads(one, dt, src, st, big / 16), 1);
        for (int small = 0; small < 2; small++) {
            const size_t n = small ? big / 5 : big;
            for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++) {
                if (!(modes >> mode & 1u))
                    continue;
                for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                    for (int counted = 0; counted < 2; counted++) {
                        if (counted && (mode != MXP_ROUND_STOCHASTIC || ov != MXP_OVERFLOW_INF))
                            continue; /* the counting path is the slow reference */
                        mxp_convert_flags f1 = { 0 }, fn = { 0 };
                        mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = (mxp_overflow)ov,
                                               .seed = 99, .index_offset = (1ull << 32) - 1000 };
                        o.flags = counted ? &f1 : NULL;
                        assert_int_equal(mxp_set_num_threads(1), MXP_OK);
                        assert_int_equal(mxp_convert(one, dt, src, st, n, &o), MXP_OK);
                        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
                            if ((int)t >= thread_counts)
                                break;
                            assert_int_equal(mxp_set_num_threads(threads[t]), MXP_OK);
                            memset(&fn, 0, sizeof fn);
                            o.flags = counted ? &fn : NULL;
                            memset(many, 0xa5, n * ds);
                            if (t % 2)
                                assert_int_equal(mxp_convert_strided(many, dt, (ptrdiff_t)ds, src, st,
                                                                     (ptrdiff_t)mxp_dtype_itemsize(st), n, &o),
                                                 MXP_OK);
                            else
                                assert_int_equal(mxp_convert(many, dt, src, st, n, &o), MXP_OK);
                            runs++;
                            if (memcmp(one, many, n * ds) != 0) {
                                size_t i = 0;
                                while (!memcmp(one + i * ds, many + i * ds, ds))
                                    i++;
                                print_error("%s -> %s %s/%s, %d threads: element %zu differs from 1 thread\n",
                                            mxp_dtype_name(st), mxp_dtype_name(dt), mxp_rounding_name((mxp_rounding)mode),
                                            mxp_overflow_name((mxp_overflow)ov), threads[t], i);
                                bad++;
                            }
                            if (counted && memcmp(&f1, &fn, sizeof f1) != 0) {
                                print_error("%s -> %s %s, %d threads: counters differ (inexact %llu vs %llu)\n",
                                            mxp_dtype_name(st), mxp_dtype_name(dt), mxp_rounding_name((mxp_rounding)mode),
                                            threads[t], (unsigned long long)fn.inexact, (unsigned long long)f1.inexact);
                                bad++;
                            }
                        }
                        if (counted) /* the data makes every counter move */
                            assert_true(f1.inexact > 0 || st == MXP_S8 || dt == MXP_F64 || st == MXP_BF16 || st == MXP_E4M3);
                    }
                }
            }
        }
    }
    mxp_set_num_threads(0);
    print_message("%zu multi-threaded runs compared\n", runs);
    if (bad)
        fail_msg("%zu results depend on the thread count", bad);
}

static void test_bits_and_counters_do_not_depend_on_the_thread_count(void **state)
{
    (void)state;
    check_thread_counts((1u << MXP_ROUNDING_COUNT) - 1, 3);
}

/* The same at every lower ISA level the machine has (the kernels differ):
 * stochastic rounding, 3 threads. */
static void test_every_isa_level(void **state)
{
    (void)state;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        if (mxp_get_isa() != (mxp_isa)isa)
            continue; /* MXP_ISA caps it */
        print_message("ISA level %s\n", mxp_isa_name((mxp_isa)isa));
        if (isa == (int)mxp_isa_supported())
            break; /* the first test ran at the top level */
        check_thread_counts(1u << MXP_ROUND_STOCHASTIC, 1);
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
}

/* In place: narrowing stays on one thread, equal sizes split; same bits. */
static void test_in_place_matches_out_of_place(void **state)
{
    (void)state;
    const size_t n = N;
    fill(MXP_F32, n);
    mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 5 };
    assert_int_equal(mxp_set_num_threads(4), MXP_OK);
    assert_int_equal(mxp_convert(one, MXP_BF16, src, MXP_F32, n, &o), MXP_OK);
    memcpy(many, src, n * 4);
    assert_int_equal(mxp_convert(many, MXP_BF16, many, MXP_F32, n, &o), MXP_OK);
    assert_memory_equal(one, many, n * 2);
    /* float32 -> int32 in place, same size */
    assert_int_equal(mxp_convert(one, MXP_S32, src, MXP_F32, n, &o), MXP_OK);
    memcpy(many, src, n * 4);
    assert_int_equal(mxp_convert(many, MXP_S32, many, MXP_F32, n, &o), MXP_OK);
    assert_memory_equal(one, many, n * 4);
    mxp_set_num_threads(0);
}

static int setup(void **state)
{
    (void)state;
    src = malloc((size_t)N * 8);
    one = malloc((size_t)N * 8);
    many = malloc((size_t)N * 8);
    return !src || !one || !many;
}

static int teardown(void **state)
{
    (void)state;
    free(src);
    free(one);
    free(many);
    return 0;
}

int main(void)
{
    /* the sizes here were chosen for streaming stores from 4 MiB moved: pinned,
       so that the streaming paths are covered whatever the machine's L3 */
    mxp_set_stream_threshold(4u << 20);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bits_and_counters_do_not_depend_on_the_thread_count),
        cmocka_unit_test(test_in_place_matches_out_of_place),
        cmocka_unit_test(test_every_isa_level),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
