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

/* Set struct_size (0: this release's layout) before the call: the library
 * fills only the fields within it (docs/abi.md). */
typedef struct mxp_memory_stats {
    size_t struct_size;       /* 0 or sizeof(mxp_memory_stats) */
    uint64_t current_bytes;   /* live buffer bytes */
    uint64_t peak_bytes;
    uint64_t allocations;
    uint64_t frees;
    uint64_t pool_hits;       /* allocations served from the pool */
    uint64_t pool_bytes;      /* bytes held by the pool now */
    uint64_t bytes_copied;    /* by array copies of the same dtype */
    uint64_t bytes_converted; /* source bytes through array dtype conversions */
    uint64_t workspace_bytes; /* idle GEMM workspaces kept for the next call (not in current_bytes) */
    uint64_t workspace_reuses; /* workspaces a call took from those kept, instead of allocating */
    uint64_t hugepage_allocations; /* blocks mapped 2 MiB-aligned and advised as huge pages */
    uint64_t hugepage_cache_bytes; /* freed huge-page blocks kept for reuse (not in current_bytes) */
    uint64_t hugepage_cache_hits;  /* allocations served by one of those, its pages already there */
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

/* Huge pages.  Blocks of at least the threshold (default 4 MiB) from the
 * default allocator are mappings of mxp's own (mmap), 2 MiB-aligned, their
 * whole 2 MiB pages advised with madvise(MADV_HUGEPAGE), so that the
 * kernel maps them in 2 MiB pages when its transparent huge pages are in
 * "madvise" or "always" mode (one page fault and one TLB entry per 2 MiB).
 * Up to 4 freed ones (a sixteenth of the memory, 256 MiB to 1 GiB) are kept and reused for a block of about
 * their size, pages and all (mxp_release_workspaces and mxp_shutdown give
 * them back).  On by default;
 * MXP_HUGEPAGES=0 or 1 in the environment (read once; another value is
 * ignored with a message on stderr), then mxp_set_hugepages, decide.
 * Memory of an allocator set with mxp_set_allocator is never advised (it
 * is not mxp's): such an allocator can madvise its own blocks. */
MXP_API void mxp_set_hugepages(bool enabled);
MXP_API bool mxp_hugepages_enabled(void);
/* Bytes from which a block is advised: at least 2 MiB, else
 * MXP_ERR_INVALID_ARGUMENT. */
MXP_API mxp_status mxp_set_hugepage_threshold(size_t bytes);
MXP_API size_t mxp_hugepage_threshold(void);
/* The kernel's transparent huge page mode: "always", "madvise", "never",
 * or "unavailable" (no /sys/kernel/mm/transparent_hugepage/enabled). */
MXP_API const char *mxp_hugepages_system_mode(void);

/* Streaming stores: a conversion, cast or row operation (take, the float32
 * norms) whose call moves at least this many bytes (read + written; each
 * thread's share counts alone) writes its output with streaming
 * (non-temporal) stores, which skip reading the output's lines first and
 * leave the caches to the inputs; below it, plain stores leave the output
 * in the cache for its next reader.  Default: half of one L3 instance
 * (mxp_cpu_l3_bytes, mxp/cpu.h) within [4 MiB, 64 MiB], or
 * MXP_STREAM_BYTES in the environment (bytes, K/M/G suffixes; read once;
 * another value is ignored with a message on stderr).
 * mxp_set_stream_threshold(bytes) overrides both (0: back to them; 1:
 * always; SIZE_MAX: never).  Only speed depends on it, never a result. */
MXP_API void mxp_set_stream_threshold(size_t bytes);
MXP_API size_t mxp_stream_threshold(void);

/* GEMM keeps its packing buffers and accumulator workspaces between calls
 * (one per call running at once, grown when a larger call needs more), so
 * that a call does not allocate and fault in fresh pages.  This releases
 * the idle ones and the freed huge-page blocks kept for reuse (mxp_shutdown
 * does too); memory_stats.workspace_bytes and hugepage_cache_bytes say what
 * they hold. */
MXP_API void mxp_release_workspaces(void);

/* Raw buffers from the current allocator, with the statistics. */
MXP_API void *mxp_malloc(size_t size);
MXP_API void mxp_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
