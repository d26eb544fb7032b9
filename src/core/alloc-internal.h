/* Internal: allocator statistics fed by the array layer. */
#ifndef MXP_CORE_ALLOC_INTERNAL_H
#define MXP_CORE_ALLOC_INTERNAL_H

#include "mxp/alloc.h"

/* Counts bytes copied (same dtype) or converted (source bytes). */
void mxp_stats_add_copied(uint64_t bytes, bool converted);

/* Releases the blocks the pool caches (the pool stays on if it was). */
void mxp_alloc_release_cache(void);

#endif
