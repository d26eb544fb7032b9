/* mxp — the allocator every mxp buffer comes from, and memory statistics. */
#ifndef MXP_ALLOC_H
#define MXP_ALLOC_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A caller-supplied allocator.  alloc returns size bytes aligned to align
 * (a power of two) or NULL; free gets back the same pointer and size. */
typedef struct mxp_allocator {
    void *(*alloc)(void *ctx, size_t size, size_t align);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} mxp_allocator;

/* Replaces the allocator for buffers allocated from now on (NULL restores
 * the default, aligned_alloc-based one).  Buffers remember who allocated
 * them, so switching with live arrays is safe. */
MXP_API void mxp_set_allocator(const mxp_allocator *allocator);

/* Alignment of new buffers in bytes: a power of two, 16 .. 4096.  Default 64. */
MXP_API mxp_status mxp_set_alignment(size_t align);
MXP_API size_t mxp_get_alignment(void);
/* The old name of mxp_get_alignment, kept as an alias. */
MXP_API size_t mxp_alignment(void);

/* A cache of freed buffers reused by size (off by default).  Turning it
 * off releases what it holds. */
MXP_API void mxp_set_pool(bool enabled);
MXP_API bool mxp_get_pool(void); /* whether the pool is on */

typedef struct mxp_memory_stats {
    uint64_t current_bytes;   /* live buffer bytes */
    uint64_t peak_bytes;
    uint64_t allocations;
    uint64_t frees;
    uint64_t pool_hits;       /* allocations served from the pool */
    uint64_t pool_bytes;      /* bytes held by the pool now */
    uint64_t bytes_copied;    /* by array copies of the same dtype */
    uint64_t bytes_converted; /* source bytes through array dtype conversions */
} mxp_memory_stats;

/* The statistics now (out NULL: nothing). */
MXP_API void mxp_get_memory_stats(mxp_memory_stats *out);
/* Resets the counters (not current/pool bytes) and sets peak = current. */
MXP_API void mxp_reset_memory_stats(void);
/* The old names of the two above, kept as aliases. */
MXP_API void mxp_memory_stats_get(mxp_memory_stats *out);
MXP_API void mxp_memory_stats_reset(void);

/* Test mode: the nth allocation from now (1 = the next) and the ones after
 * it fail; 0 turns it off.  Lets tests check that every failure path
 * returns MXP_ERR_NO_MEMORY and leaks nothing. */
MXP_API void mxp_set_alloc_fail_after(uint64_t n);

/* Raw buffers from the current allocator, with the statistics. */
MXP_API void *mxp_malloc(size_t size);
MXP_API void mxp_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
