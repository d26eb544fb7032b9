/* The allocator: aligned buffers with a hidden header, statistics, an
 * optional size-keyed pool, and a fail-the-Nth-allocation test mode.
 *
 *   base                      ptr = base + prefix
 *   | ... padding ... | hdr | user bytes (size) |
 *
 * prefix is a multiple of the alignment large enough for the header, which
 * records what mxp_free needs (the allocator that made the block). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc-internal.h"
#include "core/error.h"

typedef struct hdr {
    void *base;
    size_t size, total, align;
    mxp_allocator allocator;
    struct hdr *next; /* pool free list */
} hdr;

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
}

void mxp_get_memory_stats(mxp_memory_stats *out)
{
    if (!out)
        return;
    pthread_mutex_lock(&lock);
    *out = stats;
    pthread_mutex_unlock(&lock);
}

void mxp_memory_stats_get(mxp_memory_stats *out) /* the old name */
{
    mxp_get_memory_stats(out);
}

void mxp_memory_stats_reset(void) /* the old name */
{
    mxp_reset_memory_stats();
}

void mxp_reset_memory_stats(void)
{
    pthread_mutex_lock(&lock);
    uint64_t cur = stats.current_bytes, pool = stats.pool_bytes;
    memset(&stats, 0, sizeof stats);
    stats.current_bytes = stats.peak_bytes = cur;
    stats.pool_bytes = pool;
    pthread_mutex_unlock(&lock);
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
        size_t total = prefix + (size ? size : 1);
        unsigned char *base = a.alloc(a.ctx, total, align);
        if (!base) {
            mxp_error(MXP_ERR_NO_MEMORY, "allocation of %zu bytes failed", size);
            return NULL;
        }
        h = (hdr *)(void *)(base + prefix - sizeof(hdr));
        h->base = base;
        h->size = size;
        h->total = total;
        h->align = align;
        h->allocator = a;
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
