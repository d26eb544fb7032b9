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
 * are kept for the next block of their size (src/core/hugepage.c).  GEMM
 * workspaces (mxp_workspace_get/put) are kept between calls in a small
 * cache under the allocator's lock. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/abi.h"
#include "core/alloc-internal.h"
#include "core/error.h"

typedef struct hdr {
    void *base;
    size_t size, total, align; /* total: the length of the mapping for mxp's own (is_mapped) */
    mxp_allocator allocator;
    struct hdr *next; /* pool free list */
} hdr;

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
        mxp_huge_release(h->base, h->total);
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
    mxp_huge_stats(&now.hugepage_allocations, &now.hugepage_cache_bytes, &now.hugepage_cache_hits);
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
    memset(&stats, 0, sizeof stats);
    stats.current_bytes = stats.peak_bytes = cur;
    stats.pool_bytes = pool;
    stats.workspace_bytes = ws;
    pthread_mutex_unlock(&lock);
    mxp_huge_stats_reset();
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
        unsigned char *base = a.alloc == default_alloc ? mxp_huge_map(total, &mapped) : NULL;
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

/* mxp_workspace_hold: whether this thread holds, and its blocks (the
 * first gets', as many as were out at once, up to HELD) with whether a get
 * has each out */
enum { HELD = 4 };
static _Thread_local bool holding;
static _Thread_local void *held[HELD];
static _Thread_local bool held_out[HELD];

static void *workspace_get(size_t size);

void *mxp_workspace_get(size_t size)
{
    int slot = -1; /* a free slot, or a held block not out (smaller: it goes back) */
    for (int i = 0; holding && i < HELD; i++) {
        if (held[i] && !held_out[i] && header_of(held[i])->size >= size) {
            held_out[i] = true;
            return held[i];
        }
        if (slot < 0 && (!held[i] || !held_out[i]))
            slot = i;
    }
    void *p = workspace_get(size);
    if (slot >= 0 && p) { /* held from now on */
        void *old = held[slot];
        held[slot] = p, held_out[slot] = true;
        if (old)
            mxp_workspace_put(old);
    }
    return p;
}

static void *workspace_get(size_t size)
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
    for (int i = 0; holding && i < HELD; i++)
        if (ptr == held[i]) {
            held_out[i] = false;
            return;
        }
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

bool mxp_workspace_hold(void)
{
    pthread_mutex_lock(&lock);
    const bool testing = fail_after != 0; /* the failure test mode sees every allocation: no holding */
    pthread_mutex_unlock(&lock);
    if (holding || testing)
        return false;
    holding = true;
    return true;
}

void mxp_workspace_unhold(bool took)
{
    if (!took)
        return;
    holding = false;
    for (int i = 0; i < HELD; i++) {
        void *p = held_out[i] ? NULL : held[i]; /* one still out goes back when its caller puts it */
        held[i] = NULL, held_out[i] = false;
        mxp_workspace_put(p); /* NULL: nothing */
    }
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
    mxp_huge_drain(); /* after the workspaces: some of them land there */
}
