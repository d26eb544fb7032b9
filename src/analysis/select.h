/* Internal: exact order statistics of a stream of non-negative doubles
 * that can be replayed, found in passes over it with memory that does not
 * grow with its length (select.c).
 *
 * A non-negative double orders as its bit pattern read as an unsigned
 * integer, so a rank is found digit by digit, most significant first:
 *
 *   bit   63   62 ............ 47   46 ...... 35   34 ...... 23   ...   10 ... 0
 *         0    pass 0: 16 bits      pass 1: 12     pass 2: 12     ...   pass 5
 *
 * Pass 0 counts every value in 65536 buckets by bits 62..47, keeping each
 * bucket's smallest and largest value.  For each wanted rank, the bucket
 * that holds it becomes its prefix, and the next pass looks only at the
 * values with that prefix: when those buckets hold 2^19 values or fewer
 * in all, it collects them and the ranks are read from them sorted;
 * otherwise it counts them by their next 12 bits, and so on.  A rank is
 * also resolved as soon as its bucket holds one distinct value (smallest
 * == largest), and at the latest when all 63 bits are known.  So most
 * streams take two passes.  Memory: 1.5 MiB in pass 0; after, 96 KiB per
 * distinct prefix counted, or 4 MiB at most collected.  A short stream
 * (mxp_select_init's n) is collected at once. */
#ifndef MXP_ANALYSIS_SELECT_H
#define MXP_ANALYSIS_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "mxp/common.h"

enum { MXP_SELECT_RANKS = 8 };

typedef struct mxp_select_group {
    uint64_t prefix;           /* the bits above `shift` of every value counted */
    int shift, bits;           /* the digit counted: bits shift-bits .. shift-1 */
    uint64_t *count, *lo, *hi; /* 2^bits buckets: how many, smallest, largest */
    uint64_t *vals;            /* or, collecting: the values themselves */
    int64_t nvals, size;       /* collected so far, and how many there are */
    bool sorted;
} mxp_select_group;

typedef struct mxp_select {
    int pass;
    int ngroups;
    mxp_select_group group[MXP_SELECT_RANKS];
    int of[MXP_SELECT_RANKS];          /* each rank's group this pass; -1 once resolved */
    int64_t below[MXP_SELECT_RANKS];   /* values smaller than every value of that group */
    uint64_t value[MXP_SELECT_RANKS];  /* the resolved values' bits */
} mxp_select;

/* Ready for pass 0; n: how many values each pass gives at most (0: not
 * known).  A stream of at most MXP_SELECT_SMALL values is collected in
 * pass 0 and sorted: one pass, n * 8 bytes, no 1.5 MiB tables to clear.
 * MXP_ERR_NO_MEMORY, with nothing to free, on failure. */
enum { MXP_SELECT_SMALL = 1 << 16 };
mxp_status mxp_select_init(mxp_select *s, int64_t n);

/* The n values of this pass (every value, in any order, every pass). */
void mxp_select_add(mxp_select *s, const double *v, int64_t n);

/* One value that occurs count times. */
void mxp_select_add_counted(mxp_select *s, double v, int64_t count);

/* After a pass: settles what it can of ranks[0..nranks) (0-based, at
 * most MXP_SELECT_RANKS, the same in every call, each below the number of
 * values); *more says whether another pass is needed, with its tables
 * ready. */
mxp_status mxp_select_next(mxp_select *s, const int64_t *ranks, int nranks, bool *more);

/* Rank i's value once *more was false. */
double mxp_select_value(const mxp_select *s, int i);

void mxp_select_free(mxp_select *s);

#endif
