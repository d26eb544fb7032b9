/* Hostile arguments for every public function of include/mxp/ headers: NULL
 * pointers, zero, negative and overflowing sizes, enum values out of range,
 * leading dimensions too small, shapes with negative dimensions, bad ndim.
 * Each case runs in a forked child (an alarm in it turns a hang into a
 * failure) and must return an error status with a sentence in
 * mxp_last_error(), or the documented error value for functions that return
 * pointers or values — never a signal, an abort, a sanitizer report or a
 * hang.  Every failing case is reported with its function and case.
 *
 * The cases are in this file (core: common, dtype, cpu, profile, alloc,
 * threads, convert) and in test_api_hostile_array.c (array, io),
 * test_api_hostile_ops.c (ops, gemm), test_api_hostile_nn.c (nn) and test_api_hostile_quant.c (quant,
 * mx, analysis, train), test_api_hostile_plugin.c (plugin, profile).
 * test_api_hostile_covers_every_public_function
 * reads the MXP_API declarations of include/mxp/ headers: a public function
 * without a case fails it.  (Misaligned buffers are another test's.) */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid, alarm */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/api_hostile.h"

#if defined(__SANITIZE_ADDRESS__)
/* A library that asks for an absurd block must get NULL (and say
 * MXP_ERR_NO_MEMORY), as from the real allocator, not ASan's abort. */
__attribute__((visibility("default"))) const char *__asan_default_options(void); /* the build hides symbols */
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

enum { CHILD_ALARM_S = 20 };

hfix H;

/* ---- verdicts (in the child) --------------------------------------------- */

bool hcase(hctx *c, const char *fn, const char *what)
{
    const int i = c->index++;
    if (c->target < 0) {
        c->seen(c, fn, what);
        return false;
    }
    if (i != c->target)
        return false;
    c->ran = true;
    mxp_clear_error();
    return true;
}

#if defined(__GNUC__)
static void verdict(hctx *c, int v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
static void verdict(hctx *c, int v, const char *fmt, ...)
{
    c->verdict = v;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
}

static bool has_message(void)
{
    const char *m = mxp_last_error();
    return m && m[0];
}

void hstatus(hctx *c, mxp_status s)
{
    if (s == MXP_OK)
        verdict(c, HV_OK_RETURNED, "returned MXP_OK");
    else if ((unsigned)s >= MXP_STATUS_COUNT)
        verdict(c, HV_BAD_STATUS, "returned %d, no mxp_status", (int)s);
    else if (!has_message())
        verdict(c, HV_NO_MESSAGE, "returned %s with mxp_last_error() empty", mxp_status_str(s));
    else
        verdict(c, HV_PASS, "%s: %s", mxp_status_str(s), mxp_last_error());
}

void hany(hctx *c, mxp_status s)
{
    if (s == MXP_OK)
        verdict(c, HV_PASS, "MXP_OK");
    else
        hstatus(c, s);
}

void hint(hctx *c, long long got, long long want)
{
    if (got != want)
        verdict(c, HV_WRONG_VALUE, "returned %lld, documented %lld", got, want);
}

void hstr(hctx *c, const char *got, const char *want)
{
    if (!got || strcmp(got, want) != 0)
        verdict(c, HV_WRONG_VALUE, "returned %s%s%s, documented \"%s\"", got ? "\"" : "", got ? got : "NULL",
                got ? "\"" : "", want);
}

void hnull(hctx *c, const void *p)
{
    if (p)
        verdict(c, HV_WRONG_VALUE, "returned %p, documented NULL", p);
}

void hnonnull(hctx *c, const void *p)
{
    if (!p)
        verdict(c, HV_WRONG_VALUE, "returned NULL");
}

void hnan(hctx *c, double x)
{
    if (!isnan(x))
        verdict(c, HV_WRONG_VALUE, "returned %g, documented NaN", x);
}

/* ---- the core group ------------------------------------------------------ */

static void *null_alloc(void *ctx, size_t size, size_t align)
{
    (void)ctx, (void)size, (void)align;
    return NULL;
}

static void null_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx, (void)ptr, (void)size;
}

/* mxp_malloc(64) with allocator a set (a NULL alloc or free is the default). */
static void *malloc_with(const mxp_allocator *a)
{
    mxp_set_allocator(a);
    void *p = mxp_malloc(64);
    mxp_free(p);
    return p;
}

static char long_name[5000];

void hostile_core(hctx *c)
{
    const mxp_convert_opts bad_round = { .rounding = (mxp_rounding)9999 };
    const mxp_convert_opts neg_round = { .rounding = (mxp_rounding)-1 };
    const mxp_convert_opts bad_ovf = { .overflow = (mxp_overflow)9999 };
    float *f = H.buf_f32;
    uint8_t *u = H.buf_u8;

    /* common.h */
    NONNUL("status 9999 (never NULL)", mxp_status_str, (mxp_status)9999);
    NONNUL("status -1 (never NULL)", mxp_status_str, (mxp_status)-1);
    NONNUL("MXP_STATUS_COUNT (never NULL)", mxp_status_str, MXP_STATUS_COUNT);
    NOARGS_NONNUL(mxp_last_error);
    NOARGS(mxp_clear_error);
    NOARGS_NONNUL(mxp_version);

    /* dtype.h */
    NUL("dtype 9999", mxp_dtype_get_traits, BAD_DT);
    NUL("dtype -1", mxp_dtype_get_traits, NEG_DT);
    NUL("dtype 0", mxp_dtype_get_traits, MXP_DTYPE_INVALID);
    NUL("MXP_DTYPE_COUNT", mxp_dtype_get_traits, MXP_DTYPE_COUNT);
    NUL("MXP_QINT4 (no array dtype)", mxp_dtype_get_traits, MXP_QINT4);
    STR("dtype 9999", "invalid", mxp_dtype_name, BAD_DT);
    STR("dtype -1", "invalid", mxp_dtype_name, NEG_DT);
    STR("MXP_DTYPE_COUNT", "invalid", mxp_dtype_name, MXP_DTYPE_COUNT);
    VAL("name NULL", MXP_DTYPE_INVALID, mxp_dtype_from_name, NULL);
    VAL("name \"\"", MXP_DTYPE_INVALID, mxp_dtype_from_name, "");
    VAL("name \"float32 \" (trailing space)", MXP_DTYPE_INVALID, mxp_dtype_from_name, "float32 ");
    VAL("name of 4999 characters", MXP_DTYPE_INVALID, mxp_dtype_from_name, long_name);
    VAL("dtype 9999", false, mxp_dtype_is_valid, BAD_DT);
    VAL("dtype -1", false, mxp_dtype_is_valid, NEG_DT);
    VAL("MXP_DTYPE_COUNT", false, mxp_dtype_is_valid, MXP_DTYPE_COUNT);
    VAL("dtype 9999", 0, mxp_dtype_itemsize, BAD_DT);
    VAL("dtype -1", 0, mxp_dtype_itemsize, NEG_DT);
    VAL("a 9999", MXP_DTYPE_INVALID, mxp_promote_types, BAD_DT, MXP_F32);
    VAL("b -1", MXP_DTYPE_INVALID, mxp_promote_types, MXP_F32, NEG_DT);
    VAL("both 0", MXP_DTYPE_INVALID, mxp_promote_types, MXP_DTYPE_INVALID, MXP_DTYPE_INVALID);
    VAL("from 9999", false, mxp_can_cast, BAD_DT, MXP_F32, MXP_CASTING_UNSAFE);
    VAL("to -1", false, mxp_can_cast, MXP_F32, NEG_DT, MXP_CASTING_UNSAFE);
    VAL("casting 9999", false, mxp_can_cast, MXP_F32, MXP_F32, (mxp_casting)9999);
    VAL("casting -1", false, mxp_can_cast, MXP_F32, MXP_F32, (mxp_casting)-1);

    /* cpu.h */
    NOARGS(mxp_cpu_features);
    NOARGS_NONNUL(mxp_cpu_features_string);
    NOARGS_NONNUL(mxp_cpu_brand);
    NOARGS(mxp_cpu_l3_bytes);
    NOARGS_NONNUL(mxp_cpu_vendor);
    NOARGS(mxp_cpu_family);
    NOARGS(mxp_cpu_model);
    NOARGS_NONNUL(mxp_cpu_uarch);
    NOARGS(mxp_isa_supported);
    NOARGS(mxp_get_isa);
    NOARGS(mxp_isa_current);
    ERR("level 9999", mxp_set_isa, (mxp_isa)9999);
    ERR("level -1", mxp_set_isa, (mxp_isa)-1);
    ERR("MXP_ISA_COUNT", mxp_set_isa, MXP_ISA_COUNT);
    STR("level 9999", "invalid", mxp_isa_name, (mxp_isa)9999);
    STR("level -1", "invalid", mxp_isa_name, (mxp_isa)-1);
    VAL("name NULL", MXP_ISA_COUNT, mxp_isa_from_name, NULL);
    VAL("name \"\"", MXP_ISA_COUNT, mxp_isa_from_name, "");
    VAL("name \"avx3\"", MXP_ISA_COUNT, mxp_isa_from_name, "avx3");
    STR("op 9999", "invalid", mxp_peak_op_name, (mxp_peak_op)9999);
    STR("op -1", "invalid", mxp_peak_op_name, (mxp_peak_op)-1);
    NUL("op 9999", mxp_peak_kernel_name, (mxp_peak_op)9999);
    NUL("op -1", mxp_peak_kernel_name, (mxp_peak_op)-1);
    VAL("op 9999", 0, mxp_peak_gflops, (mxp_peak_op)9999, 1);
    VAL("op -1", 0, mxp_peak_gflops, (mxp_peak_op)-1, 1);
    VAL("reps 0", 0, mxp_peak_gflops, MXP_PEAK_F32_FMA, 0);
    VAL("reps -1", 0, mxp_peak_gflops, MXP_PEAK_F32_FMA, -1);

    /* profile.h */
    STR("verdict 9999", "invalid", mxp_verdict_name, (mxp_verdict)9999);
    STR("verdict -1", "invalid", mxp_verdict_name, (mxp_verdict)-1);
    if (hcase(c, "mxp_profile_begin", "begun twice (profiles do not nest)")) {
        mxp_profile_begin();
        hstatus(c, mxp_profile_begin());
    }
    if (hcase(c, "mxp_profile_end", "none running"))
        hstatus(c, mxp_profile_end());
    NOARGS(mxp_profile_active);
    NOARGS(mxp_profile_reset);
    NOARGS(mxp_profile_count);
    ERR("m NULL", mxp_profile_get_machine, NULL);
    ERR("index -1", mxp_profile_entry_at, -1, &(mxp_profile_entry){ 0 });
    ERR("index INT_MAX", mxp_profile_entry_at, INT_MAX, &(mxp_profile_entry){ 0 });
    ERR("e NULL", mxp_profile_entry_at, 0, NULL);
    ERR("f NULL", mxp_profile_write, NULL, MXP_PROFILE_TABLE);
    ERR("format 9999", mxp_profile_write, stderr, (mxp_profile_format)9999);
    ERR("format -1", mxp_profile_write, stderr, (mxp_profile_format)-1);
    ERR("path NULL", mxp_profile_save, NULL, MXP_PROFILE_JSON);
    ERR("path \"\"", mxp_profile_save, "", MXP_PROFILE_JSON);
    ERR("format 9999", mxp_profile_save, "/nonexistent-dir/p.json", (mxp_profile_format)9999);

    /* alloc.h */
    RUN("NULL (restores the default)", mxp_set_allocator, NULL);
    if (hcase(c, "mxp_set_allocator", "alloc and free NULL (the default), then mxp_malloc(64)"))
        hnonnull(c, malloc_with(&(mxp_allocator){ 0 }));
    if (hcase(c, "mxp_set_allocator", "alloc NULL, free set (the default), then mxp_malloc(64)"))
        hnonnull(c, malloc_with(&(mxp_allocator){ NULL, null_free, NULL }));
    if (hcase(c, "mxp_malloc", "size 64 from an allocator that returns NULL"))
        hnull(c, malloc_with(&(mxp_allocator){ null_alloc, null_free, NULL }));
    ERR("align 0", mxp_set_alignment, 0);
    ERR("align 8 (below 16)", mxp_set_alignment, 8);
    ERR("align 48 (no power of two)", mxp_set_alignment, 48);
    ERR("align 8192 (above 4096)", mxp_set_alignment, 8192);
    ERR("align SIZE_MAX", mxp_set_alignment, SIZE_MAX);
    NOARGS(mxp_get_alignment);
    NOARGS(mxp_alignment);
    RUN("no hostile value (a bool): false", mxp_set_pool, false);
    NOARGS(mxp_get_pool);
    RUN("out NULL", mxp_get_memory_stats, NULL);
    NOARGS(mxp_reset_memory_stats);
    RUN("out NULL", mxp_memory_stats_get, NULL);
    NOARGS(mxp_memory_stats_reset);
    RUN("n UINT64_MAX", mxp_set_alloc_fail_after, UINT64_MAX);
    RUN("no hostile value (a bool): true", mxp_set_hugepages, true);
    NOARGS(mxp_hugepages_enabled);
    ERR("bytes 0", mxp_set_hugepage_threshold, 0);
    ERR("bytes 2 MiB - 1", mxp_set_hugepage_threshold, ((size_t)2 << 20) - 1);
    NOARGS(mxp_hugepage_threshold);
    /* any size is a threshold (0: the default again; SIZE_MAX: never) */
    RUN("bytes SIZE_MAX (never), then 0 (the default)", mxp_set_stream_threshold, SIZE_MAX);
    mxp_set_stream_threshold(0);
    NOARGS(mxp_stream_threshold);
    NOARGS_NONNUL(mxp_hugepages_system_mode);
    NOARGS(mxp_release_workspaces);
    NUL("size SIZE_MAX", mxp_malloc, SIZE_MAX);
    NUL("size SIZE_MAX - 64 (the header overflows)", mxp_malloc, SIZE_MAX - 64);
    NUL("size PTRDIFF_MAX", mxp_malloc, (size_t)PTRDIFF_MAX);
    RUN("ptr NULL", mxp_free, NULL);

    /* threads.h */
    ERR("n -1", mxp_set_num_threads, -1);
    ERR("n INT_MIN", mxp_set_num_threads, INT_MIN);
    ERR("n MXP_MAX_THREADS + 1", mxp_set_num_threads, MXP_MAX_THREADS + 1);
    ERR("n INT_MAX", mxp_set_num_threads, INT_MAX);
    NOARGS(mxp_get_num_threads);
    NOARGS(mxp_shutdown);

    /* convert.h */
    ERR("dst NULL, n 4", mxp_convert, NULL, MXP_F32, f, MXP_F32, 4, NULL);
    ERR("src NULL, n 4", mxp_convert, f, MXP_F32, NULL, MXP_F32, 4, NULL);
    ERR("dst_type 9999", mxp_convert, f, BAD_DT, f + 8, MXP_F32, 4, NULL);
    ERR("dst_type -1", mxp_convert, f, NEG_DT, f + 8, MXP_F32, 4, NULL);
    ERR("src_type 0", mxp_convert, f, MXP_F32, f + 8, MXP_DTYPE_INVALID, 4, NULL);
    ERR("src_type MXP_QINT4", mxp_convert, f, MXP_F32, f + 8, MXP_QINT4, 4, NULL);
    ERR("n SIZE_MAX (bytes overflow)", mxp_convert, f, MXP_F32, f + 8, MXP_F32, SIZE_MAX, NULL);
    ERR("n SIZE_MAX / 2 for float32 (bytes overflow)", mxp_convert, f, MXP_F32, u, MXP_U8, SIZE_MAX / 2, NULL);
    ERR("rounding 9999", mxp_convert, f, MXP_BF16, f + 8, MXP_F32, 4, &bad_round);
    ERR("rounding -1", mxp_convert, f, MXP_BF16, f + 8, MXP_F32, 4, &neg_round);
    ERR("overflow 9999", mxp_convert, f, MXP_BF16, f + 8, MXP_F32, 4, &bad_ovf);
    ERR("dst one byte into src (overlap)", mxp_convert, u + 1, MXP_F32, u, MXP_F32, 4, NULL);
    ERR("widening in place (dst == src)", mxp_convert, f, MXP_F64, f, MXP_F32, 4, NULL);
    ERR("dst NULL, n 4", mxp_convert_strided, NULL, MXP_F32, 4, f, MXP_F32, 4, 4, NULL);
    ERR("src NULL, n 4", mxp_convert_strided, f, MXP_F32, 4, NULL, MXP_F32, 4, 4, NULL);
    ERR("dst_type 9999", mxp_convert_strided, f, BAD_DT, 4, f + 8, MXP_F32, 4, 4, NULL);
    ERR("src_type -1", mxp_convert_strided, f, MXP_F32, 4, f + 8, NEG_DT, 4, 4, NULL);
    ERR("dst_stride 0, n 2", mxp_convert_strided, f, MXP_F32, 0, f + 8, MXP_F32, 4, 2, NULL);
    ERR("n SIZE_MAX", mxp_convert_strided, f, MXP_F32, 4, f + 8, MXP_F32, 4, SIZE_MAX, NULL);
    ERR("dst_stride PTRDIFF_MAX, n 2 (offset leaves the address space)", mxp_convert_strided, f, MXP_F32,
        PTRDIFF_MAX, f + 8, MXP_F32, 4, 2, NULL);
    ERR("src_stride PTRDIFF_MIN, n 3", mxp_convert_strided, f, MXP_F32, 4, f + 8, MXP_F32, PTRDIFF_MIN, 3, NULL);
    ERR("rounding 9999", mxp_convert_strided, f, MXP_BF16, 2, f + 8, MXP_F32, 4, 4, &bad_round);
    STR("rounding 9999", "invalid", mxp_rounding_name, (mxp_rounding)9999);
    STR("rounding -1", "invalid", mxp_rounding_name, (mxp_rounding)-1);
    VAL("name NULL", MXP_ROUNDING_COUNT, mxp_rounding_from_name, NULL);
    VAL("name \"\"", MXP_ROUNDING_COUNT, mxp_rounding_from_name, "");
    VAL("name of 4999 characters", MXP_ROUNDING_COUNT, mxp_rounding_from_name, long_name);
    STR("overflow 9999", "invalid", mxp_overflow_name, (mxp_overflow)9999);
    STR("overflow -1", "invalid", mxp_overflow_name, (mxp_overflow)-1);
    VAL("name NULL", MXP_OVERFLOW_COUNT, mxp_overflow_from_name, NULL);
    VAL("name \"\"", MXP_OVERFLOW_COUNT, mxp_overflow_from_name, "");
    RUN("no hostile value (every float is valid): NaN", mxp_f32_to_bf16, NAN);
    RUN("no hostile value (every pattern is valid): 0xffff", mxp_bf16_to_f32, 0xffff);
    RUN("no hostile value (every float is valid): -inf", mxp_f32_to_f16, -INFINITY);
    RUN("no hostile value (every pattern is valid): 0xffff", mxp_f16_to_f32, 0xffff);
    RUN("no hostile value (every float is valid): NaN", mxp_f32_to_e4m3, NAN);
    RUN("no hostile value (every pattern is valid): 0xff", mxp_e4m3_to_f32, 0xff);
    RUN("no hostile value (every float is valid): FLT_MAX", mxp_f32_to_e5m2, FLT_MAX);
    RUN("no hostile value (every pattern is valid): 0xff", mxp_e5m2_to_f32, 0xff);
    STR("dst_type 9999", "invalid", mxp_convert_kernel_name, BAD_DT, MXP_F32, NULL);
    STR("src_type -1", "invalid", mxp_convert_kernel_name, MXP_F32, NEG_DT, NULL);
    STR("rounding 9999", "invalid", mxp_convert_kernel_name, MXP_BF16, MXP_F32, &bad_round);
    VAL("dtype 9999", 0, mxp_packed_bytes, BAD_DT, 8);
    VAL("float32: not sub-byte", 0, mxp_packed_bytes, MXP_F32, 8);
    VAL("n SIZE_MAX", 0, mxp_packed_bytes, MXP_S4, SIZE_MAX);
    ERR("dtype -1", mxp_pack, H.buf_u8, H.buf_u8 + 64, NEG_DT, 8);
    ERR("dst NULL, n 8", mxp_pack, NULL, H.buf_u8, MXP_E2M1, 8);
    ERR("src NULL, n 8", mxp_pack, H.buf_u8, NULL, MXP_E2M1, 8);
    ERR("n SIZE_MAX", mxp_pack, H.buf_u8, H.buf_u8 + 64, MXP_S2, SIZE_MAX);
    ERR("dst == src", mxp_pack, H.buf_u8, H.buf_u8, MXP_E2M1, 8);
    ERR("dtype 9999", mxp_unpack, H.buf_u8, H.buf_u8 + 64, BAD_DT, 8);
    ERR("dst NULL, n 8", mxp_unpack, NULL, H.buf_u8, MXP_E3M2, 8);
    ERR("src NULL, n 8", mxp_unpack, H.buf_u8, NULL, MXP_E3M2, 8);
    ERR("dst overlapping src", mxp_unpack, H.buf_u8 + 2, H.buf_u8, MXP_U4, 8);
}

/* ---- fixtures (in the parent) -------------------------------------------- */

static mxp_array *make(mxp_dtype dt, int ndim, const int64_t *shape, double first)
{
    mxp_array *a = NULL, *b = NULL;
    int64_t size = 1;
    for (int i = 0; i < ndim; i++)
        size *= shape[i];
    assert_int_equal(mxp_array_arange(&a, dt, first, first + (double)size, 1), MXP_OK);
    assert_int_equal(mxp_array_reshape_copy(&b, a, ndim, shape), MXP_OK);
    mxp_array_free(a);
    return b;
}

static void make_fixtures(void)
{
    memset(long_name, 'x', sizeof long_name - 1);
    H.f32_23 = make(MXP_F32, 2, (int64_t[]){ 2, 3 }, 1);
    H.f32_32 = make(MXP_F32, 2, (int64_t[]){ 3, 2 }, 1);
    H.f32_4 = make(MXP_F32, 1, (int64_t[]){ 4 }, -2);
    H.f32_5 = make(MXP_F32, 1, (int64_t[]){ 5 }, -2);
    H.f64_4 = make(MXP_F64, 1, (int64_t[]){ 4 }, 1);
    H.s8_4 = make(MXP_S8, 1, (int64_t[]){ 4 }, -2);
    H.u8_4 = make(MXP_U8, 1, (int64_t[]){ 4 }, 1);
    H.u8_23 = make(MXP_U8, 2, (int64_t[]){ 2, 3 }, 1);
    H.s8_32 = make(MXP_S8, 2, (int64_t[]){ 3, 2 }, -3);
    H.s8_big = make(MXP_S8, 1, (int64_t[]){ 4 }, 100);
    H.u8_big = make(MXP_U8, 1, (int64_t[]){ 4 }, 200);
    assert_int_equal(mxp_array_scalar(&H.f32_0d, 1.5, MXP_F32), MXP_OK);
    assert_int_equal(mxp_array_empty(&H.f32_empty, MXP_F32, 1, (int64_t[]){ 0 }), MXP_OK);
    assert_int_equal(mxp_array_broadcast_to(&H.readonly_4, H.f32_4, 1, (int64_t[]){ 4 }), MXP_OK);
    assert_false(mxp_array_flags(H.readonly_4) & MXP_ARRAY_WRITEABLE);
    assert_int_equal(mxp_calibrate_minmax(H.f32_4, MXP_S8, true, -1, 0, &H.qp_s8), MXP_OK);
    assert_int_equal(mxp_quantize_tensor(&H.qt_u8_23, H.f32_23, NULL, MXP_U8, -1), MXP_OK);
    assert_int_equal(mxp_quantize_tensor(&H.qt_s8_32, H.f32_32, NULL, MXP_S8, -1), MXP_OK);
    assert_int_equal(mxp_quantize_tensor(&H.qt_s8_w, H.f32_23, NULL, MXP_S8, -1), MXP_OK);
    assert_int_equal(mxp_optimizer_create(&H.sgd, MXP_OPTIM_SGD, NULL), MXP_OK);
    assert_int_equal(mxp_loss_scaler_create(&H.scaler, NULL), MXP_OK);
    assert_int_equal(mxp_autocast_create(&H.autocast, "bf16"), MXP_OK);
    assert_int_equal(mxp_monitor_create(&H.monitor, NULL), MXP_OK);
    assert_int_equal(mxp_monitor_record(H.monitor, 0, "w", MXP_ROLE_WEIGHT, H.f32_4, NULL), MXP_OK);
    assert_int_equal(mxp_observer_create(&H.obs_minmax, MXP_CALIB_MINMAX, MXP_S8, true, -1, NULL), MXP_OK);
    assert_int_equal(mxp_observer_update(H.obs_minmax, H.f32_4), MXP_OK);
    assert_int_equal(mxp_observer_create(&H.obs_fresh, MXP_CALIB_MINMAX, MXP_S8, true, -1, NULL), MXP_OK);
    for (size_t i = 0; i < sizeof H.buf_f32 / sizeof H.buf_f32[0]; i++)
        H.buf_f32[i] = (float)i - 100.0f;
    for (size_t i = 0; i < sizeof H.buf_u8; i++)
        H.buf_u8[i] = (uint8_t)i;
}

static void free_fixtures(void)
{
    mxp_array *arrays[] = { H.f32_23, H.f32_32, H.f32_4, H.f32_5, H.f64_4, H.s8_4, H.u8_4, H.u8_23, H.s8_32,
                            H.f32_0d, H.f32_empty, H.readonly_4, H.s8_big, H.u8_big };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mxp_array_free(arrays[i]);
    mxp_qparams_free(&H.qp_s8);
    mxp_qtensor_free(H.qt_u8_23);
    mxp_qtensor_free(H.qt_s8_32);
    mxp_qtensor_free(H.qt_s8_w);
    mxp_optimizer_free(H.sgd);
    mxp_loss_scaler_free(H.scaler);
    mxp_autocast_free(H.autocast);
    mxp_monitor_free(H.monitor);
    mxp_observer_free(H.obs_minmax);
    mxp_observer_free(H.obs_fresh);
    memset(&H, 0, sizeof H);
}

/* ---- the runner (in the parent) ------------------------------------------ */

typedef void (*hgroup)(hctx *c);
static const hgroup groups[] = { hostile_core, hostile_array, hostile_ops, hostile_nn, hostile_quant, hostile_train,
                                  hostile_plugin };
enum { NGROUPS = sizeof groups / sizeof groups[0] };

typedef struct hentry {
    const char *fn, *what;
    int group, index;
} hentry;

static hentry *entries;
static size_t nentries, capentries;
static int listing_group;

static void seen(hctx *c, const char *fn, const char *what)
{
    if (nentries == capentries) {
        capentries = capentries ? 2 * capentries : 1024;
        entries = realloc(entries, capentries * sizeof *entries);
        assert_non_null(entries);
    }
    entries[nentries++] = (hentry){ fn, what, listing_group, c->index - 1 };
}

static void list_cases(void)
{
    if (nentries)
        return;
    for (int g = 0; g < NGROUPS; g++) {
        listing_group = g;
        hctx c = { .target = -1, .seen = seen };
        groups[g](&c);
    }
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT (abort)";
    case SIGALRM: return "SIGALRM (hung)";
    default: return "a signal";
    }
}

/* Runs entry e in a child; returns true when it passed, else prints why. */
static bool run_entry(const hentry *e)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        /* cmocka's handlers would turn a crash into a failed test that goes on running */
        static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS };
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);
        alarm(CHILD_ALARM_S);
        hctx c = { .target = e->index };
        groups[e->group](&c);
        if (!c.ran)
            verdict(&c, HV_NOT_REACHED, "case %d not reached", e->index);
        const ssize_t w = write(fds[1], c.detail, strlen(c.detail));
        (void)w;
        close(fds[1]);
        exit(c.verdict); /* not _exit: LeakSanitizer and --coverage run at exit */
    }
    close(fds[1]);
    char detail[sizeof ((hctx *)0)->detail + 1];
    size_t len = 0;
    for (ssize_t r; len + 1 < sizeof detail && (r = read(fds[0], detail + len, sizeof detail - 1 - len)) != 0;) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
    }
    detail[len] = '\0';
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        assert_int_equal(errno, EINTR);
    if (WIFEXITED(st) && WEXITSTATUS(st) == HV_PASS)
        return true;
    char why[320];
    if (WIFSIGNALED(st))
        snprintf(why, sizeof why, "killed by %s (signal %d)", signal_name(WTERMSIG(st)), WTERMSIG(st));
    else if (WEXITSTATUS(st) >= HV_OK_RETURNED && WEXITSTATUS(st) <= HV_NOT_REACHED)
        snprintf(why, sizeof why, "%s", detail);
    else
        snprintf(why, sizeof why, "exited %d (a sanitizer report or exit() inside mxp: see stderr)",
                 WEXITSTATUS(st));
    print_error("HOSTILE %s [%s]: %s\n", e->fn, e->what, why);
    return false;
}

static void test_api_hostile_every_case_fails_cleanly(void **state)
{
    (void)state;
    list_cases();
    make_fixtures();
    size_t failed = 0;
    for (size_t i = 0; i < nentries; i++)
        failed += !run_entry(&entries[i]);
    free_fixtures();
    size_t nfn = 0;
    for (size_t i = 0; i < nentries; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(entries[j].fn, entries[i].fn) != 0;
        nfn += first;
    }
    print_message("hostile arguments: %zu cases over %zu functions, %zu failed\n", nentries, nfn, failed);
    if (failed)
        fail_msg("%zu of %zu hostile-argument cases crashed, hung, returned MXP_OK or left no message", failed,
                 nentries);
}

/* The names declared MXP_API in include/mxp/ headers. */
static size_t public_functions(char names[][64], size_t cap)
{
    const char *dir = MXP_TESTS_DIR "/../include/mxp";
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const size_t l = strlen(de->d_name);
        if (l < 3 || strcmp(de->d_name + l - 2, ".h") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *fp = fopen(path, "r");
        assert_non_null(fp);
        static char text[1 << 20];
        const size_t len = fread(text, 1, sizeof text - 1, fp);
        assert_true(len < sizeof text - 1);
        text[len] = '\0';
        fclose(fp);
        for (const char *p = text; (p = strstr(p, "MXP_API")); p += 7) {
            const char *line = p;
            while (line > text && line[-1] != '\n')
                line--;
            while (*line == ' ')
                line++;
            if (*line == '#') /* the macro's own definition */
                continue;
            const char *paren = strchr(p, '(');
            assert_non_null(paren);
            const char *end = paren;
            while (end > p && end[-1] == ' ')
                end--;
            const char *start = end;
            while (start > p && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                                 (start[-1] >= 'A' && start[-1] <= 'Z') || (start[-1] >= '0' && start[-1] <= '9')))
                start--;
            assert_true(end > start && (size_t)(end - start) < 64);
            assert_true(n < cap);
            memcpy(names[n], start, (size_t)(end - start));
            names[n][end - start] = '\0';
            n++;
        }
    }
    closedir(d);
    return n;
}

static void test_api_hostile_covers_every_public_function(void **state)
{
    (void)state;
    list_cases();
    static char names[1024][64];
    const size_t n = public_functions(names, 1024);
    assert_true(n >= 200); /* the parser found the API (219 functions when written) */
    size_t missing = 0, stale = 0;
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t j = 0; j < nentries && !found; j++)
            found = strcmp(entries[j].fn, names[i]) == 0;
        if (!found) {
            print_error("%s is public (include/mxp/) but has no hostile-argument case\n", names[i]);
            missing++;
        }
    }
    for (size_t j = 0; j < nentries; j++) {
        bool found = false;
        for (size_t i = 0; i < n && !found; i++)
            found = strcmp(entries[j].fn, names[i]) == 0;
        bool first = true;
        for (size_t k = 0; k < j && first; k++)
            first = strcmp(entries[k].fn, entries[j].fn) != 0;
        if (!found && first) {
            print_error("%s has hostile-argument cases but is not declared MXP_API in include/mxp/\n",
                        entries[j].fn);
            stale++;
        }
    }
    print_message("%zu public functions, %zu without cases, %zu covered names not public\n", n, missing, stale);
    assert_int_equal(missing, 0);
    assert_int_equal(stale, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_hostile_covers_every_public_function),
        cmocka_unit_test(test_api_hostile_every_case_fails_cleanly),
    };
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(entries);
    return rc;
}
