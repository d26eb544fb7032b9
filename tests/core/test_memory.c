/* Huge pages for large buffers and the GEMM workspaces kept between calls.
 *
 * Huge pages: with the switch on, a block of at least the threshold from
 * the default allocator lies in 2 MiB-aligned memory that carries the
 * kernel's "hg" flag (MADV_HUGEPAGE, /proc/self/smaps VmFlags) when the
 * kernel's THP mode is madvise or always (skipped otherwise); with it off,
 * or below the threshold, or from a caller's allocator, nothing is advised.
 * A freed block is kept and handed out again for a block of about its
 * size, its pages still there (no page fault to write it), until
 * mxp_release_workspaces; at most a sixteenth of the memory (256 MiB to
 * 1 GiB) is kept.
 *
 * Workspaces: repeated and alternating GEMM calls (float, with and without
 * an accumulator workspace; int8) allocate nothing after the first call of
 * the largest size, give the same bits as with fresh workspaces, and
 * mxp_release_workspaces / mxp_shutdown give every byte back. */
#define _GNU_SOURCE /* getline */
#include <setjmp.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "mxp.h"
#include "core/alloc-internal.h"

enum { MIB = 1 << 20 };

/* The VmFlags line of the mapping of /proc/self/smaps that holds p, in
 * flags (empty if none is found); *anon_huge gets its AnonHugePages kB. */
static void mapping_flags(const void *p, char *flags, size_t cap, long *anon_huge)
{
    flags[0] = '\0';
    *anon_huge = -1;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return;
    char *line = NULL;
    size_t len = 0;
    int inside = 0;
    const uintptr_t a = (uintptr_t)p;
    while (getline(&line, &len, f) > 0) {
        unsigned long lo, hi;
        char dash;
        if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-' && strchr(line, ' ') &&
            strchr(line, ' ') > strchr(line, '-')) {
            inside = a >= lo && a < hi;
            continue;
        }
        if (inside && !strncmp(line, "AnonHugePages:", 14))
            *anon_huge = strtol(line + 14, NULL, 10);
        if (inside && !strncmp(line, "VmFlags:", 8)) {
            snprintf(flags, cap, "%s", line + 8);
            break;
        }
    }
    free(line);
    fclose(f);
}

static int has_flag(const char *flags, const char *flag)
{
    char padded[600];
    snprintf(padded, sizeof padded, " %s ", flags);
    char *nl = strchr(padded, '\n');
    if (nl)
        *nl = ' ';
    char want[8];
    snprintf(want, sizeof want, " %s ", flag);
    return strstr(padded, want) != NULL;
}

static int thp_usable(void)
{
    const char *mode = mxp_hugepages_system_mode();
    return !strcmp(mode, "madvise") || !strcmp(mode, "always");
}

static int restore(void **state)
{
    (void)state;
    mxp_set_hugepages(true);
    mxp_set_hugepage_threshold(4u * MIB);
    mxp_set_allocator(NULL);
    mxp_set_num_threads(0);
    mxp_set_alloc_fail_after(0);
    return 0;
}

/* First in the file: nothing has been advised in this process yet, so a
 * flag found here would be this block's. */
static void test_hugepages_off_advises_nothing(void **state)
{
    (void)state;
    mxp_set_hugepages(false);
    assert_false(mxp_hugepages_enabled());
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    unsigned char *p = mxp_malloc(8u * MIB);
    assert_non_null(p);
    memset(p, 1, 8u * MIB);
    mxp_memory_stats_get(&after);
    assert_int_equal(after.hugepage_allocations, before.hugepage_allocations);
    char flags[512];
    long huge;
    mapping_flags(p + 4u * MIB, flags, sizeof flags, &huge);
    if (flags[0] && has_flag(flags, "hg")) {
        print_error("MXP huge pages off, but the mapping has VmFlags:%s", flags);
        fail();
    }
    mxp_free(p);
    mxp_set_hugepages(true);
}

static void test_hugepages_on_aligns_and_advises_large_blocks(void **state)
{
    (void)state;
    mxp_set_hugepages(true);
    assert_true(mxp_hugepages_enabled());
    assert_int_equal(mxp_hugepage_threshold(), 4u * MIB);
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    const size_t size = 9u * MIB + 123;
    unsigned char *p = mxp_malloc(size);
    assert_non_null(p);
    memset(p, 2, size);
    mxp_memory_stats_get(&after);
    assert_int_equal(after.hugepage_allocations, before.hugepage_allocations + 1);
    /* the block starts on a 2 MiB boundary: the user bytes follow the header */
    const uintptr_t start = (uintptr_t)p & ~(uintptr_t)(2 * MIB - 1);
    assert_true((uintptr_t)p - start <= 4096);
    if (thp_usable()) {
        char flags[512];
        long huge;
        mapping_flags(p + 4u * MIB, flags, sizeof flags, &huge);
        if (!has_flag(flags, "hg")) {
            print_error("THP %s: the block's mapping has VmFlags:%s", mxp_hugepages_system_mode(), flags);
            fail();
        }
        print_message("THP %s: mapping advised (hg), AnonHugePages %ld kB\n", mxp_hugepages_system_mode(), huge);
    } else {
        print_message("THP mode %s: the smaps check is skipped\n", mxp_hugepages_system_mode());
    }
    mxp_free(p);
    /* below the threshold: not advised */
    mxp_memory_stats_get(&before);
    p = mxp_malloc(4u * MIB - 4096);
    assert_non_null(p);
    mxp_memory_stats_get(&after);
    assert_int_equal(after.hugepage_allocations, before.hugepage_allocations);
    mxp_free(p);
}

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static void test_hugepage_blocks_kept_and_reused(void **state)
{
    (void)state;
    mxp_set_hugepages(true);
    mxp_release_workspaces();
    mxp_memory_stats before = { 0 }, after = { 0 };
    const size_t size = 12u * MIB;
    unsigned char *p = mxp_malloc(size);
    assert_non_null(p);
    memset(p, 3, size);
    mxp_memory_stats_get(&before);
    mxp_free(p);
    mxp_memory_stats_get(&after);
    assert_int_equal(after.current_bytes, before.current_bytes - size);
    assert_true(after.hugepage_cache_bytes >= before.hugepage_cache_bytes + size);
    /* a block of about the size: the same pages, nothing to fault in */
    unsigned char *q = mxp_malloc(size - 100 * 1024);
    assert_ptr_equal(q, p);
    const long faults = minor_faults();
    memset(q, 4, size - 100 * 1024);
    const long new_faults = minor_faults() - faults;
    mxp_memory_stats_get(&after);
    assert_int_equal(after.hugepage_cache_hits, before.hugepage_cache_hits + 1);
    if (new_faults > 8) {
        print_error("writing a reused 12 MiB block took %ld page faults\n", new_faults);
        fail();
    }
    /* much smaller: a block of its own (the kept one would waste too much) */
    unsigned char *r = mxp_malloc(5u * MIB);
    assert_non_null(r);
    mxp_free(q);
    mxp_free(r);
    mxp_memory_stats_get(&after);
    assert_true(after.hugepage_cache_bytes >= 17u * MIB);
    mxp_release_workspaces();
    mxp_memory_stats_get(&after);
    assert_int_equal(after.hugepage_cache_bytes, 0);
    /* at most four are kept */
    void *blocks[6];
    for (int i = 0; i < 6; i++)
        assert_non_null(blocks[i] = mxp_malloc((5u + (size_t)i) * MIB));
    for (int i = 0; i < 6; i++)
        mxp_free(blocks[i]);
    mxp_memory_stats_get(&after);
    assert_true(after.hugepage_cache_bytes >= (7u + 8 + 9 + 10) * MIB); /* the newest four */
    assert_true(after.hugepage_cache_bytes < (7u + 8 + 9 + 10 + 5) * MIB);
    mxp_shutdown();
    mxp_memory_stats_get(&after);
    assert_int_equal(after.hugepage_cache_bytes, 0);
}

/* The kept bytes' limit: a sixteenth of the memory between 256 MiB and
 * 1 GiB; a block up to it is kept (a float32 array of 64M elements and its
 * header on a machine of 4.5 GiB and more), a larger one is unmapped.  The
 * blocks are never touched: address space only. */
static void test_hugepage_cache_limit(void **state)
{
    (void)state;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    assert_true(pages > 0 && page > 0);
    const double sixteenth = (double)pages * (double)page / 16;
    const double want = sixteenth < 256.0 * MIB ? 256.0 * MIB : sixteenth > 1024.0 * MIB ? 1024.0 * MIB : sixteenth;
    const size_t limit = mxp_hugepage_cache_limit();
    assert_true((double)limit > want - (double)page * 16 && (double)limit <= want);
    mxp_set_hugepages(true);
    mxp_release_workspaces();
    mxp_memory_stats st = { 0 };
    const size_t big = (size_t)256 * MIB + 4096; /* 64M float32 and a header */
    void *p = mxp_malloc(big);
    assert_non_null(p);
    mxp_free(p);
    mxp_memory_stats_get(&st);
    if (limit >= big + 4096)
        assert_true(st.hugepage_cache_bytes >= big);
    else
        assert_int_equal(st.hugepage_cache_bytes, 0);
    void *q = mxp_malloc(big);
    assert_non_null(q);
    mxp_free(q);
    mxp_release_workspaces();
    void *r = mxp_malloc(limit + MIB); /* over the limit: not kept */
    assert_non_null(r);
    mxp_free(r);
    mxp_memory_stats_get(&st);
    assert_int_equal(st.hugepage_cache_bytes, 0);
}

static void test_hugepage_threshold_is_checked_and_used(void **state)
{
    (void)state;
    assert_int_equal(mxp_set_hugepage_threshold(MIB), MXP_ERR_INVALID_ARGUMENT);
    assert_string_equal(mxp_last_error(), "huge-page threshold 1048576 bytes is below one huge page (2 MiB)");
    assert_int_equal(mxp_hugepage_threshold(), 4u * MIB);
    assert_int_equal(mxp_set_hugepage_threshold(2u * MIB), MXP_OK);
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    void *p = mxp_malloc(3u * MIB);
    assert_non_null(p);
    mxp_memory_stats_get(&after);
    assert_int_equal(after.hugepage_allocations, before.hugepage_allocations + 1);
    mxp_free(p);
    const char *mode = mxp_hugepages_system_mode();
    assert_true(!strcmp(mode, "always") || !strcmp(mode, "madvise") || !strcmp(mode, "never") ||
                !strcmp(mode, "unavailable"));
}

/* A caller's allocator: asked for the block as mxp_malloc computes it, with
 * the configured alignment; mxp advises none of its memory. */
typedef struct counting { int calls; size_t last_align; } counting;

static void *counting_alloc(void *ctx, size_t size, size_t align)
{
    counting *c = ctx;
    c->calls++;
    c->last_align = align;
    return aligned_alloc(align, (size + align - 1) / align * align);
}

static void counting_free(void *ctx, void *p, size_t size)
{
    (void)ctx;
    (void)size;
    free(p);
}

static void test_hugepages_leave_a_callers_allocator_alone(void **state)
{
    (void)state;
    counting c = { 0, 0 };
    const mxp_allocator a = { counting_alloc, counting_free, &c };
    mxp_set_allocator(&a);
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    void *p = mxp_malloc(8u * MIB);
    assert_non_null(p);
    mxp_memory_stats_get(&after);
    assert_int_equal(c.calls, 1);
    assert_int_equal(c.last_align, mxp_alignment());
    assert_int_equal(after.hugepage_allocations, before.hugepage_allocations);
    mxp_free(p);
    mxp_set_allocator(NULL);
}

/* ---- workspaces ------------------------------------------------------------ */

typedef struct shape { size_t m, n, k; mxp_dtype ab, c; } shape;

static const shape shapes[] = {
    { 64, 64, 64, MXP_F32, MXP_F32 },    /* packed, C accumulates */
    { 300, 200, 700, MXP_F32, MXP_F32 }, /* larger: the workspace grows */
    { 8, 500, 300, MXP_F32, MXP_F32 },   /* small M: B in place, A packed */
    { 97, 130, 70, MXP_F32, MXP_F16 },   /* an accumulator workspace, rounded into C */
    { 120, 140, 260, MXP_BF16, MXP_BF16 },
    { 90, 100, 200, MXP_F64, MXP_F64 },
    { 70, 96, 128, MXP_U8, MXP_S32 },    /* int8: packing and offsets */
    { 70, 96, 128, MXP_U8, MXP_F32 },    /* int8: an int32 workspace, dequantized */
    { 1, 300, 200, MXP_F32, MXP_F32 },   /* M = 1: GEMV's two vectors */
    { 1, 96, 128, MXP_U8, MXP_S32 },     /* the int8 GEMV */
};
enum { SHAPES = sizeof shapes / sizeof shapes[0] };

static void *inputs[SHAPES][2];

static void fill(void *p, mxp_dtype t, size_t count, uint64_t seed)
{
    for (size_t i = 0; i < count; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const double v = (double)((int64_t)(seed >> 33) % 2001 - 1000) / 256.0;
        if (t == MXP_U8)
            ((uint8_t *)p)[i] = (uint8_t)(seed >> 56);
        else if (t == MXP_S8)
            ((int8_t *)p)[i] = (int8_t)(seed >> 56);
        else
            assert_int_equal(mxp_convert((unsigned char *)p + i * mxp_dtype_itemsize(t), t, &v, MXP_F64, 1, NULL),
                             MXP_OK);
    }
}

static mxp_dtype b_type(const shape *s)
{
    return s->ab == MXP_U8 ? MXP_S8 : s->ab;
}

static void make_inputs(void)
{
    for (int i = 0; i < SHAPES; i++) {
        const shape *s = &shapes[i];
        if (inputs[i][0])
            continue;
        inputs[i][0] = malloc(s->m * s->k * mxp_dtype_itemsize(s->ab));
        inputs[i][1] = malloc(s->k * s->n * mxp_dtype_itemsize(b_type(s)));
        assert_non_null(inputs[i][0]);
        assert_non_null(inputs[i][1]);
        fill(inputs[i][0], s->ab, s->m * s->k, 11 + (uint64_t)i);
        fill(inputs[i][1], b_type(s), s->k * s->n, 77 + (uint64_t)i);
    }
}

static void run(int i, void *c)
{
    const shape *s = &shapes[i];
    memset(c, 0, s->m * s->n * mxp_dtype_itemsize(s->c));
    const mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, s->m, s->n, s->k, 1.0, inputs[i][0], s->ab, s->k,
                                   inputs[i][1], b_type(s), s->n, 0.0, c, s->c, s->n, NULL);
    if (st != MXP_OK) {
        print_error("shape %d: %s\n", i, mxp_last_error());
        fail();
    }
}

static size_t c_bytes(int i)
{
    return shapes[i].m * shapes[i].n * mxp_dtype_itemsize(shapes[i].c);
}

/* Each shape once with fresh workspaces (released before each), then all
 * of them in turn, forwards and backwards, three rounds: the same bits,
 * and from the second round on no allocation at all. */
static void check_reuse(int threads)
{
    make_inputs();
    assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
    void *fresh[SHAPES], *c = malloc(2 * MIB);
    assert_non_null(c);
    for (int i = 0; i < SHAPES; i++) {
        fresh[i] = malloc(c_bytes(i));
        assert_non_null(fresh[i]);
        mxp_release_workspaces();
        run(i, fresh[i]);
    }
    mxp_memory_stats before = { 0 }, after = { 0 };
    for (int round = 0; round < 3; round++) {
        mxp_memory_stats_get(&before);
        for (int j = 0; j < 2 * SHAPES; j++) {
            const int i = j < SHAPES ? j : 2 * SHAPES - 1 - j;
            run(i, c);
            if (memcmp(c, fresh[i], c_bytes(i)) != 0) {
                print_error("%d threads, round %d: shape %d differs from its fresh-workspace result\n", threads,
                            round, i);
                fail();
            }
        }
        mxp_memory_stats_get(&after);
        if (round > 0 && after.allocations != before.allocations) {
            print_error("%d threads, round %d: %llu allocations (want 0: workspaces reused)\n", threads, round,
                        (unsigned long long)(after.allocations - before.allocations));
            fail();
        }
        assert_true(after.workspace_reuses > before.workspace_reuses);
        assert_int_equal(after.current_bytes, before.current_bytes); /* idle workspaces are not live bytes */
    }
    assert_true(after.workspace_bytes > 0);
    mxp_release_workspaces();
    mxp_memory_stats_get(&after);
    assert_int_equal(after.workspace_bytes, 0);
    for (int i = 0; i < SHAPES; i++)
        free(fresh[i]);
    free(c);
}

static void test_workspaces_reused_one_thread(void **state)
{
    (void)state;
    check_reuse(1);
}

static void test_workspaces_reused_two_threads(void **state)
{
    (void)state;
    check_reuse(2);
}

static void test_workspaces_released_by_shutdown(void **state)
{
    (void)state;
    make_inputs();
    void *c = malloc(c_bytes(1));
    assert_non_null(c);
    run(1, c);
    mxp_memory_stats s = { 0 };
    mxp_memory_stats_get(&s);
    assert_true(s.workspace_bytes > 0);
    const uint64_t live = s.current_bytes;
    mxp_shutdown();
    mxp_memory_stats_get(&s);
    assert_int_equal(s.workspace_bytes, 0);
    assert_int_equal(s.current_bytes, live);
    run(1, c); /* and the next call makes new ones */
    mxp_memory_stats_get(&s);
    assert_true(s.workspace_bytes > 0);
    free(c);
}

/* The test mode for allocation failures sees every allocation a call can
 * make: kept workspaces are not used while it is on. */
static void test_workspaces_bypassed_by_the_failure_test_mode(void **state)
{
    (void)state;
    make_inputs();
    void *c = malloc(c_bytes(3));
    assert_non_null(c);
    run(3, c); /* workspaces now kept */
    mxp_set_alloc_fail_after(1);
    const shape *s = &shapes[3];
    const mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, s->m, s->n, s->k, 1.0, inputs[3][0], s->ab, s->k,
                                   inputs[3][1], b_type(s), s->n, 0.0, c, s->c, s->n, NULL);
    mxp_set_alloc_fail_after(0);
    assert_int_equal(st, MXP_ERR_NO_MEMORY);
    free(c);
}

/* Blocks made by another allocator are not handed out after a switch. */
static void test_workspaces_follow_the_allocator(void **state)
{
    (void)state;
    make_inputs();
    void *c = malloc(c_bytes(1));
    assert_non_null(c);
    run(1, c); /* kept: the default allocator's */
    counting k = { 0, 0 };
    const mxp_allocator a = { counting_alloc, counting_free, &k };
    mxp_set_allocator(&a);
    run(1, c);
    assert_true(k.calls > 0); /* the new allocator's blocks, not the kept ones */
    const int calls = k.calls;
    run(1, c);
    assert_int_equal(k.calls, calls); /* and those are kept in turn */
    mxp_release_workspaces();
    mxp_set_allocator(NULL);
    free(c);
}

/* A thread's held workspaces (mxp_workspace_hold): a put keeps the block
 * with the thread and the next get of at most its size takes it again, no
 * allocation and no idle slot touched; two out at once are both held; a
 * larger get replaces the one not out; holds do not nest; unhold gives
 * them back to the idle workspaces (current bytes as before); the failure
 * test mode holds nothing. */
static void test_workspace_hold(void **state)
{
    (void)state;
    mxp_release_workspaces();
    mxp_memory_stats s0 = { 0 }, s1 = { 0 };
    mxp_memory_stats_get(&s0);
    const bool took = mxp_workspace_hold();
    assert_true(took);
    assert_false(mxp_workspace_hold()); /* no nesting */
    mxp_workspace_unhold(false);        /* the inner "hold": nothing */
    void *a = mxp_workspace_get(1000), *b = mxp_workspace_get(500); /* two out at once */
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_not_equal(a, b);
    mxp_workspace_put(b);
    mxp_workspace_put(a);
    mxp_memory_stats_get(&s1);
    assert_int_equal(s1.workspace_bytes, 0); /* held, not idle */
    const uint64_t allocs = s1.allocations;
    for (int i = 0; i < 100; i++) {
        void *x = mxp_workspace_get(900), *y = mxp_workspace_get(400);
        assert_ptr_equal(x, a);
        assert_ptr_equal(y, b);
        mxp_workspace_put(y);
        mxp_workspace_put(x);
    }
    mxp_memory_stats_get(&s1);
    assert_int_equal(s1.allocations, allocs);
    void *big = mxp_workspace_get(1 << 20); /* larger: it replaces a held one (not out) */
    assert_ptr_not_equal(big, a);
    mxp_workspace_put(big);
    assert_ptr_equal(mxp_workspace_get(1 << 19), big);
    mxp_workspace_put(big);
    mxp_workspace_unhold(took);
    mxp_memory_stats_get(&s1);
    assert_int_equal(s1.current_bytes, s0.current_bytes);
    assert_true(s1.workspace_bytes > (1 << 20)); /* back among the idle ones */
    void *c = mxp_workspace_get(1 << 20); /* no longer held: from the idle ones, kept by nobody */
    mxp_workspace_put(c);
    mxp_set_alloc_fail_after(1000);
    assert_false(mxp_workspace_hold());
    mxp_set_alloc_fail_after(0);
    mxp_release_workspaces();
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < SHAPES; i++) {
        free(inputs[i][0]);
        free(inputs[i][1]);
    }
    mxp_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_hugepages_off_advises_nothing, restore),
        cmocka_unit_test_teardown(test_hugepages_on_aligns_and_advises_large_blocks, restore),
        cmocka_unit_test_teardown(test_hugepage_blocks_kept_and_reused, restore),
        cmocka_unit_test_teardown(test_hugepage_cache_limit, restore),
        cmocka_unit_test_teardown(test_hugepage_threshold_is_checked_and_used, restore),
        cmocka_unit_test_teardown(test_hugepages_leave_a_callers_allocator_alone, restore),
        cmocka_unit_test_teardown(test_workspaces_reused_one_thread, restore),
        cmocka_unit_test_teardown(test_workspaces_reused_two_threads, restore),
        cmocka_unit_test_teardown(test_workspaces_released_by_shutdown, restore),
        cmocka_unit_test_teardown(test_workspaces_bypassed_by_the_failure_test_mode, restore),
        cmocka_unit_test_teardown(test_workspaces_follow_the_allocator, restore),
        cmocka_unit_test_teardown(test_workspace_hold, restore),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
