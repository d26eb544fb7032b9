/* The allocator: aligned buffers with a hidden header, statistics, an
 * optional size-keyed pool, and a fail-the-Nth-allocation test mode.
 *
 *   base                      ptr = base + prefix
 *   | ... padding ... | hdr | user bytes (size) |
 *
 * prefix is a multiple of the alignment large enough for the header, which
 * records what mxp_free needs (the allocator that made the block).
 *
 * Large blocks of the default allocator are mxp's own mappings, 2 MiB-
 * aligned and advised as huge pages (MADV_HUGEPAGE), as NumPy advises its
 * large arrays: one fault maps 2 MiB instead of 4 KiB; a few freed ones
 * are kept for the next block of their size.  GEMM workspaces (mxp_workspace_get/put) are kept between
 * calls in a small cache under the same lock. */
#define _DEFAULT_SOURCE /* mmap, madvise, MADV_HUGEPAGE */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/abi.h"
#include "core/alloc-internal.h"
#include "core/error.h"

typedef struct hdr {
    void *base;
    size_t size, total, align; /* total: the length of the mapping for mxp's own (is_mapped) */
    mxp_allocator allocator;
    struct hdr *next; /* pool free list */
} hdr;

/* ---- huge pages ----------------------------------------------------------- */

enum { HUGE_PAGE = 2u << 20 };

static atomic_int huge_requested = -1;          /* -1: not set by mxp_set_hugepages */
static atomic_size_t huge_threshold = 4u << 20; /* bytes; see docs/architecture.md */
static int huge_env = -1;                       /* MXP_HUGEPAGES: 0, 1, or -1 unset/invalid */
static pthread_once_t huge_once = PTHREAD_ONCE_INIT;
/* On by default, except under AddressSanitizer, which does not see mxp's own
 * mappings: there every block comes from malloc, so overruns are caught. */
#if defined(__SANITIZE_ADDRESS__)
#define HUGE_DEFAULT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HUGE_DEFAULT 0
#endif
#endif
#ifndef HUGE_DEFAULT
#define HUGE_DEFAULT 1
#endif
static atomic_ullong huge_count;                /* allocations advised (stats.hugepage_allocations) */

/* Read once per process; a value other than 0 or 1 is ignored with one
 * message, as MXP_NUM_THREADS is (docs/reliability.md). */
static void read_huge_env(void)
{
    const char *env = getenv("MXP_HUGEPAGES");
    if (!env || !*env)
        return;
    if (!strcmp(env, "0") || !strcmp(env, "1"))
        huge_env = env[0] - '0';
    else
        fprintf(stderr, "mxp: MXP_HUGEPAGES='%.40s' is not 0 or 1; ignored\n", env);
}

void mxp_set_hugepages(bool enabled)
{
    atomic_store(&huge_requested, enabled ? 1 : 0);
}

bool mxp_hugepages_enabled(void)
{
    const int r = atomic_load(&huge_requested);
    if (r >= 0)
        return r;
    pthread_once(&huge_once, read_huge_env);
    return huge_env >= 0 ? huge_env : HUGE_DEFAULT;
}

mxp_status mxp_set_hugepage_threshold(size_t bytes)
{
    if (bytes < HUGE_PAGE)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "huge-page threshold %zu bytes is below one huge page (2 MiB)",
                         bytes);
    atomic_store(&huge_threshold, bytes);
    return MXP_OK;
}

size_t mxp_hugepage_threshold(void)
{
    return atomic_load(&huge_threshold);
}

const char *mxp_hugepages_system_mode(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    static const char *const modes[] = { "always", "madvise", "never" };
    for (int i = 0; i < 3; i++) {
        char want[16];
        snprintf(want, sizeof want, "[%s]", modes[i]);
        if (strstr(line, want))
            return modes[i];
    }
    return "unavailable";
}

/* The header stays 64 bytes (one prefix at the default alignment; a
 * pointer to the block's start keeps it "reachable" for leak checkers), so
 * mxp's own mappings are marked by the allocator's ctx, not by a field. */
_Static_assert(sizeof(hdr) <= 64, "the block header fits the default 64-byte prefix");
static char mapped_tag;

static bool is_mapped(const hdr *h)
{
    return h->allocator.ctx == &mapped_tag;
}

static void *default_alloc(void *ctx, size_t size, size_t align)
{
    (void)ctx;
    size_t rounded = (size + align - 1) / align * align;
    return aligned_alloc(align, rounded);
}

static void default_free(void *ctx, void *p, size_t size)
{
    (void)ctx;
    (void)size;
    free(p);
}

static const mxp_allocator default_allocator = { default_alloc, default_free, NULL };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mxp_allocator current = { default_alloc, default_free, NULL };
static size_t alignment = 64;
static bool pool_on;
static hdr *pool_head;
static uint64_t fail_after; /* 0: off */
static mxp_memory_stats stats;

enum { POOL_MAX_BYTES = 1u << 30 };

/* ---- huge-page blocks: mxp's own mappings, and the freed ones kept --------- */

/* A freed block of mxp's own is kept for the next block of about its size
 * (at most HUGE_CACHE_BLOCKS, mxp_hugepage_cache_limit() bytes; the oldest go first):
 * its pages stay mapped, so a new array of a size used before is written
 * at memory speed instead of faulting and zeroing every page again. */
enum { HUGE_CACHE_BLOCKS = 4 };
static struct { void *base; size_t len; } huge_cache[HUGE_CACHE_BLOCKS]; /* under lock, oldest first */
static int huge_cached;

/* The kept blocks' bytes at most: a sixteenth of the machine's memory,
 * between 256 MiB and 1 GiB (a float32 array of 64M elements, 256 MiB and
 * a header, is kept on a machine of 4.5 GiB and more). */
static size_t cache_limit;
static pthread_once_t cache_limit_once = PTHREAD_ONCE_INIT;

static void read_cache_limit(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t lo = (size_t)256 << 20, hi = (size_t)1 << 30;
    size_t v = lo;
    if (pages > 0 && page > 0 && (size_t)pages / 16 <= SIZE_MAX / (size_t)page)
        v = (size_t)pages / 16 * (size_t)page;
    cache_limit = v < lo ? lo : v > hi ? hi : v;
}

size_t mxp_hugepage_cache_limit(void)
{
    pthread_once(&cache_limit_once, read_cache_limit);
    return cache_limit;
}

static void huge_unmap(void *base, size_t len)
{
    munmap(base, len);
}

/* A 2 MiB-aligned mapping of at least total bytes (*mapped: its length),
 * whole 2 MiB pages advised; NULL when huge pages are off or the block is
 * small (the caller then uses the allocator). */
static void *huge_alloc(size_t total, size_t *mapped)
{
#ifdef MADV_HUGEPAGE
    if (total < atomic_load(&huge_threshold) || total > SIZE_MAX / 2 || !mxp_hugepages_enabled())
        return NULL;
    const size_t len = (total + 4095) / 4096 * 4096;
    pthread_mutex_lock(&lock);
    int best = -1;
    for (int i = 0; i < huge_cached; i++) /* the smallest that fits, wasting at most a quarter */
        if (huge_cache[i].len >= len && huge_cache[i].len - len <= len / 4 &&
            (best < 0 || huge_cache[i].len < huge_cache[best].len))
            best = i;
    if (best >= 0) {
        void *base = huge_cache[best].base;
        *mapped = huge_cache[best].len;
        stats.hugepage_cache_bytes -= *mapped;
        stats.hugepage_cache_hits++;
        for (int i = best; i + 1 < huge_cached; i++)
            huge_cache[i] = huge_cache[i + 1];
        huge_cached--;
        pthread_mutex_unlock(&lock);
        return base;
    }
    pthread_mutex_unlock(&lock);
    unsigned char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    unsigned char *start = m + ((HUGE_PAGE - (uintptr_t)m % HUGE_PAGE) % HUGE_PAGE);
    if (start > m)
        munmap(m, (size_t)(start - m));
    if (start + len < m + len + HUGE_PAGE)
        munmap(start + len, (size_t)(m + len + HUGE_PAGE - (start + len)));
    /* the tail after the last whole 2 MiB stays in 4 KiB pages (a 4 MiB
     * array with its header takes 4 MiB + 4 KiB, not 6 MiB); EINVAL
     * without THP: small pages, still correct */
    if (madvise(start, total / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE) == 0)
        atomic_fetch_add(&huge_count, 1);
    *mapped = len;
    return start;
#else
    (void)total;
    (void)mapped;
    return NULL;
#endif
}

static void huge_free(void *base, size_t len)
{
    void *drop[HUGE_CACHE_BLOCKS];
    size_t drop_len[HUGE_CACHE_BLOCKS];
    int dropped = 0;
    const size_t limit = mxp_hugepage_cache_limit(); /* read once, before the lock */
    pthread_mutex_lock(&lock);
    const bool keep = len <= limit;
    while (keep && (huge_cached == HUGE_CACHE_BLOCKS || stats.hugepage_cache_bytes + len > limit)) {
        drop[dropped] = huge_cache[0].base; /* the oldest */
        drop_len[dropped++] = huge_cache[0].len;
        stats.hugepage_cache_bytes -= huge_cache[0].len;
        for (int i = 0; i + 1 < huge_cached; i++)
            huge_cache[i] = huge_cache[i + 1];
        huge_cached--;
    }
    if (keep) {
        huge_cache[huge_cached].base = base;
        huge_cache[huge_cached++].len = len;
        stats.hugepage_cache_bytes += len;
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < dropped; i++)
        huge_unmap(drop[i], drop_len[i]);
    if (!keep)
        huge_unmap(base, len);
}

/* Unmaps the kept blocks. */
static void huge_drain(void)
{
    void *drop[HUGE_CACHE_BLOCKS];
    size_t drop_len[HUGE_CACHE_BLOCKS];
    pthread_mutex_lock(&lock);
    const int n = huge_cached;
    for (int i = 0; i < n; i++) {
        drop[i] = huge_cache[i].base;
        drop_len[i] = huge_cache[i].len;
    }
    huge_cached = 0;
    stats.hugepage_cache_bytes = 0;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        huge_unmap(drop[i], drop_len[i]);
}

/* fork: the lock is taken before and released after in both processes, so
 * that a child never inherits it held by a thread that does not exist
 * there (its first mxp_malloc would wait forever).  The lock is a leaf:
 * nothing else is locked or called while it is held, so taking it here
 * cannot deadlock with the other handlers.  Registered at load, before any
 * thread of the program can hold it. */
static void lock_before_fork(void) { pthread_mutex_lock(&lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void register_atfork(void)
{
    pthread_atfork(lock_before_fork, unlock_after_fork, unlock_after_fork);
}

void mxp_set_allocator(const mxp_allocator *a)
{
    pthread_mutex_lock(&lock);
    current = a && a->alloc && a->free ? *a : default_allocator;
    pthread_mutex_unlock(&lock);
}

mxp_status mxp_set_alignment(size_t align)
{
    if (align < 16 || align > 4096 || (align & (align - 1)))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "alignment %zu is not a power of two in 16..4096", align);
    pthread_mutex_lock(&lock);
    alignment = align;
    pthread_mutex_unlock(&lock);
    return MXP_OK;
}

size_t mxp_get_alignment(void)
{
    pthread_mutex_lock(&lock);
    size_t a = alignment;
    pthread_mutex_unlock(&lock);
    return a;
}

size_t mxp_alignment(void) /* the old name */
{
    return mxp_get_alignment();
}

static void release_block(hdr *h)
{
    if (is_mapped(h))
        huge_free(h->base, h->total);
    else
        h->allocator.free(h->allocator.ctx, h->base, h->total);
}

/* Empties the pool (under the lock), then releases its blocks. */
static void release_pooled(bool keep_on)
{
    pthread_mutex_lock(&lock);
    pool_on = keep_on ? pool_on : false;
    hdr *list = pool_head;
    pool_head = NULL;
    stats.pool_bytes = 0;
    pthread_mutex_unlock(&lock);
    while (list) {
        hdr *next = list->next;
        release_block(list);
        list = next;
    }
}

void mxp_set_pool(bool enabled)
{
    if (!enabled) {
        release_pooled(false);
        return;
    }
    pthread_mutex_lock(&lock);
    pool_on = true;
    pthread_mutex_unlock(&lock);
}

bool mxp_get_pool(void)
{
    pthread_mutex_lock(&lock);
    const bool on = pool_on;
    pthread_mutex_unlock(&lock);
    return on;
}

void mxp_alloc_release_cache(void)
{
    release_pooled(true);
    mxp_release_workspaces();
}

static void get_memory_stats(mxp_memory_stats *out, const char *where)
{
    size_t n;
    if (!out || mxp_abi_check(out, &mxp_abi_memory_stats, where, "out", &n) != MXP_OK)
        return; /* a bad struct_size: nothing written, mxp_last_error() says why */
    pthread_mutex_lock(&lock);
    mxp_memory_stats now = stats;
    pthread_mutex_unlock(&lock);
    now.hugepage_allocations = atomic_load(&huge_count);
    mxp_abi_out(out, &now, n, &mxp_abi_memory_stats);
}

void mxp_get_memory_stats(mxp_memory_stats *out)
{
    get_memory_stats(out, "mxp_get_memory_stats");
}

void mxp_memory_stats_get(mxp_memory_stats *out) /* the old name */
{
    get_memory_stats(out, "mxp_memory_stats_get");
}

void mxp_memory_stats_reset(void) /* the old name */
{
    mxp_reset_memory_stats();
}

void mxp_reset_memory_stats(void)
{
    pthread_mutex_lock(&lock);
    uint64_t cur = stats.current_bytes, pool = stats.pool_bytes, ws = stats.workspace_bytes;
    uint64_t huge = stats.hugepage_cache_bytes;
    memset(&stats, 0, sizeof stats);
    stats.current_bytes = stats.peak_bytes = cur;
    stats.pool_bytes = pool;
    stats.workspace_bytes = ws;
    stats.hugepage_cache_bytes = huge;
    pthread_mutex_unlock(&lock);
    atomic_store(&huge_count, 0);
}

void mxp_set_alloc_fail_after(uint64_t n)
{
    pthread_mutex_lock(&lock);
    fail_after = n;
    pthread_mutex_unlock(&lock);
}

void mxp_stats_add_copied(uint64_t bytes, bool converted)
{
    pthread_mutex_lock(&lock);
    if (converted)
        stats.bytes_converted += bytes;
    else
        stats.bytes_copied += bytes;
    pthread_mutex_unlock(&lock);
}

/* Takes a pooled block of exactly this size and alignment, if any. */
static hdr *pool_take(size_t size, size_t align)
{
    for (hdr **p = &pool_head; *p; p = &(*p)->next) {
        hdr *h = *p;
        if (h->size == size && h->align == align) {
            *p = h->next;
            stats.pool_bytes -= h->total;
            stats.pool_hits++;
            return h;
        }
    }
    return NULL;
}

void *mxp_malloc(size_t size)
{
    pthread_mutex_lock(&lock);
    if (fail_after && --fail_after == 0) {
        fail_after = 1; /* this one and every later one fail */
        pthread_mutex_unlock(&lock);
        mxp_error(MXP_ERR_NO_MEMORY, "allocation of %zu bytes failed (test mode)", size);
        return NULL;
    }
    const size_t align = alignment;
    const mxp_allocator a = current;
    hdr *h = pool_on && a.alloc == default_alloc ? pool_take(size, align) : NULL;
    pthread_mutex_unlock(&lock);
    if (!h) {
        size_t prefix = (sizeof(hdr) + align - 1) / align * align;
        if (size > SIZE_MAX - prefix - align) {
            mxp_error(MXP_ERR_SIZE_OVERFLOW, "allocation of %zu bytes is too large", size);
            return NULL;
        }
        size_t total = prefix + (size ? size : 1), mapped = 0;
        /* large blocks of the default allocator: mxp's own huge-page mapping */
        unsigned char *base = a.alloc == default_alloc ? huge_alloc(total, &mapped) : NULL;
        if (!base)
            base = a.alloc(a.ctx, total, align);
        if (!base) {
            mxp_error(MXP_ERR_NO_MEMORY, "allocation of %zu bytes failed", size);
            return NULL;
        }
        h = (hdr *)(void *)(base + prefix - sizeof(hdr));
        h->base = base;
        h->size = size;
        h->total = mapped ? mapped : total;
        h->align = align;
        h->allocator = a;
        if (mapped)
            h->allocator.ctx = &mapped_tag;
    }
    h->next = NULL;
    pthread_mutex_lock(&lock);
    stats.allocations++;
    stats.current_bytes += size;
    if (stats.current_bytes > stats.peak_bytes)
        stats.peak_bytes = stats.current_bytes;
    pthread_mutex_unlock(&lock);
    return (unsigned char *)h + sizeof(hdr);
}

void mxp_free(void *ptr)
{
    if (!ptr)
        return;
    hdr *h = (hdr *)(void *)((unsigned char *)ptr - sizeof(hdr));
    pthread_mutex_lock(&lock);
    stats.frees++;
    stats.current_bytes -= h->size;
    bool keep = pool_on && h->allocator.alloc == default_alloc && stats.pool_bytes + h->total <= POOL_MAX_BYTES;
    if (keep) {
        h->next = pool_head;
        pool_head = h;
        stats.pool_bytes += h->total;
    }
    pthread_mutex_unlock(&lock);
    if (!keep)
        release_block(h);
}

/* ---- workspaces: scratch kept between calls ------------------------------- */

/* Idle workspaces, under `lock`.  A call takes one (the smallest that is
 * large enough) and gives it back when it returns, so calls running at
 * once on several threads never share one; they are as many as the calls
 * that ever ran at once, at most WS_SLOTS are kept. */
enum { WS_SLOTS = 16 };
static const uint64_t WS_MAX_BYTES = (uint64_t)1 << 30;
static hdr *ws_idle[WS_SLOTS];
static int ws_count;

static hdr *header_of(void *ptr)
{
    return (hdr *)(void *)((unsigned char *)ptr - sizeof(hdr));
}

/* Removes idle workspace i (under the lock). */
static hdr *ws_remove(int i)
{
    hdr *h = ws_idle[i];
    ws_idle[i] = ws_idle[--ws_count];
    stats.workspace_bytes -= h->total;
    return h;
}

void *mxp_workspace_get(size_t size)
{
    hdr *drop = NULL;
    pthread_mutex_lock(&lock);
    if (!fail_after) { /* the test mode sees every allocation a call can make */
        int best = -1, small = -1, stale = -1;
        for (int i = 0; i < ws_count; i++) {
            const hdr *h = ws_idle[i];
            if (h->allocator.alloc != current.alloc || (h->allocator.ctx != current.ctx && !is_mapped(h)) ||
                h->align != alignment)
                stale = i; /* made by another allocator (or alignment): not handed out */
            else if (h->size >= size && (best < 0 || h->size < ws_idle[best]->size))
                best = i;
            else if (h->size < size && (small < 0 || h->size > ws_idle[small]->size))
                small = i;
        }
        /* one block released per call: a stale one, else (when none fits)
         * the largest that is too small, which the new one replaces */
        const int release = stale >= 0 ? stale : best < 0 ? small : -1;
        hdr *h = best >= 0 ? ws_idle[best] : NULL;
        if (release >= 0) {
            drop = ws_remove(release);
            stats.frees++;
        }
        if (h) {
            for (int i = 0; i < ws_count; i++) /* its index may have moved */
                if (ws_idle[i] == h)
                    ws_remove(i);
            stats.workspace_reuses++;
            stats.current_bytes += h->size;
            if (stats.current_bytes > stats.peak_bytes)
                stats.peak_bytes = stats.current_bytes;
            pthread_mutex_unlock(&lock);
            if (drop)
                release_block(drop);
            return (unsigned char *)h + sizeof(hdr);
        }
    }
    pthread_mutex_unlock(&lock);
    if (drop)
        release_block(drop);
    /* grown by an eighth, so that slowly growing sizes reuse it */
    const size_t grown = size <= SIZE_MAX / 9 * 8 ? size + size / 8 : size;
    return mxp_malloc(grown);
}

void mxp_workspace_put(void *ptr)
{
    if (!ptr)
        return;
    hdr *h = header_of(ptr), *evict = h;
    pthread_mutex_lock(&lock);
    stats.current_bytes -= h->size;
    if (stats.workspace_bytes + h->total <= WS_MAX_BYTES) {
        if (ws_count == WS_SLOTS) { /* full: the smallest goes */
            int small = 0;
            for (int i = 1; i < ws_count; i++)
                if (ws_idle[i]->size < ws_idle[small]->size)
                    small = i;
            evict = ws_idle[small]->size < h->size ? ws_remove(small) : h;
        } else {
            evict = NULL;
        }
        if (evict != h) {
            ws_idle[ws_count++] = h;
            stats.workspace_bytes += h->total;
        }
    }
    if (evict)
        stats.frees++;
    pthread_mutex_unlock(&lock);
    if (evict)
        release_block(evict);
}

void mxp_release_workspaces(void)
{
    hdr *list[WS_SLOTS];
    pthread_mutex_lock(&lock);
    const int n = ws_count;
    for (int i = 0; i < n; i++)
        list[i] = ws_idle[i];
    ws_count = 0;
    stats.workspace_bytes = 0;
    stats.frees += (uint64_t)n;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        release_block(list[i]);
    huge_drain(); /* after the workspaces: some of them land there */
}
