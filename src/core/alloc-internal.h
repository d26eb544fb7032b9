/* Internal: allocator statistics fed by the array layer. */
#ifndef MXP_CORE_ALLOC_INTERNAL_H
#define MXP_CORE_ALLOC_INTERNAL_H

#include <stdbool.h>

#include "mxp/alloc.h"

/* Counts bytes copied (same dtype) or converted (source bytes). */
void mxp_stats_add_copied(uint64_t bytes, bool converted);

/* Releases the blocks the pool caches (the pool stays on if it was) and
 * the idle workspaces (mxp_shutdown). */
void mxp_alloc_release_cache(void);

/* The most bytes of freed huge-page blocks kept for reuse: a sixteenth of
 * the machine's memory, between 256 MiB and 1 GiB. */
size_t mxp_hugepage_cache_limit(void);

/* Huge-page blocks (src/core/hugepage.c).  mxp_huge_map: a 2 MiB-aligned
 * mapping of at least total bytes (*mapped: its length), a kept one of
 * about that size when there is one; NULL when huge pages are off or the
 * block is below the threshold (the caller then uses the allocator).
 * mxp_huge_release: keeps a mapping for reuse or unmaps it; mxp_huge_drain
 * unmaps the kept ones.  The statistics: blocks advised, bytes kept, reuses;
 * reset zeroes the counts (the bytes kept stay). */
void *mxp_huge_map(size_t total, size_t *mapped);
void mxp_huge_release(void *base, size_t len);
void mxp_huge_drain(void);
void mxp_huge_stats(uint64_t *allocations, uint64_t *kept_bytes, uint64_t *hits);
void mxp_huge_stats_reset(void);

/* Scratch kept between calls (GEMM packing buffers and accumulators): a
 * block of at least size bytes, from the idle workspaces when one is large
 * enough (not counted as an allocation), else newly allocated (with some
 * room to grow); NULL with MXP_ERR_NO_MEMORY set when that fails.  Give it
 * back with mxp_workspace_put (not mxp_free): it stays for the next call
 * until mxp_release_workspaces or mxp_shutdown.  While it is out, it is
 * the caller's alone and counts in current_bytes. */
void *mxp_workspace_get(size_t size);
void mxp_workspace_put(void *ptr);

/* A workspace held by this thread across many calls that each get and put
 * one (a batch of small GEMMs on a thread): between hold and unhold, the
 * first mxp_workspace_get's block stays with the thread when put, and the
 * next gets of at most its size take it again, without the allocator's
 * lock (two threads' gets and puts, 400 of each a call, contended for it).
 * Holds do not nest: hold returns false when this thread already holds,
 * and unhold(false) does nothing. */
bool mxp_workspace_hold(void);
void mxp_workspace_unhold(bool took);

#endif
