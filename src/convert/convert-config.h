/* Internal: the table of SIMD conversion kernels and how one is chosen. */
#ifndef MXP_CONVERT_CONFIG_H
#define MXP_CONVERT_CONFIG_H

#include <stdbool.h>

#include "kernels/cvt-kernel.h"
#include "core/dispatch.h"
#include "mxp/cpu.h"

/* Rounding modes a kernel implements, as a bit set of (1 << mxp_rounding). */
#define MXP_MODES_RNE (1u << MXP_ROUND_NEAREST_EVEN)
#define MXP_MODES_IEEE ((1u << MXP_ROUND_NEAREST_EVEN) | (1u << MXP_ROUND_TOWARD_ZERO) | \
                        (1u << MXP_ROUND_UP) | (1u << MXP_ROUND_DOWN))
#define MXP_MODES_ALL ((1u << MXP_ROUNDING_COUNT) - 1)
#define MXP_MODES_DETERMINISTIC (MXP_MODES_ALL & ~(1u << MXP_ROUND_STOCHASTIC))
#define MXP_MODES_SR (1u << MXP_ROUND_STOCHASTIC)
#define MXP_MODES_EXACT MXP_MODES_ALL /* widening: every mode gives the same result */

typedef struct mxp_cvt_kernel {
    mxp_dtype dst, src;
    mxp_isa isa;
    unsigned modes;
    mxp_cvt_fn fn;
    const char *name;
} mxp_cvt_kernel;

/* The most capable kernel at or below `isa` for the pair and mode, or NULL
 * (then the reference converter is used). */
const mxp_cvt_kernel *mxp_cvt_find(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa);

/* The mode that gives mode's bits for the pair: nearest even where no value
 * of src rounds into dst (see convert-config.c), else mode itself. */
mxp_rounding mxp_cvt_effective_mode(mxp_dtype dst, mxp_dtype src, mxp_rounding mode);

/* The same choice for a given microarchitecture (mxp_uarch's value), for
 * tests; and whether k was chosen over a higher level for this CPU. */
const mxp_cvt_kernel *mxp_cvt_find_for(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa, int uarch);
int mxp_cvt_is_preferred(const mxp_cvt_kernel *k);

/* Threads mxp_convert uses for n contiguous elements (convert.c): one per
 * 4 MiB moved, at most mxp_get_num_threads(); 1 for in-place narrowing. */
int mxp_cvt_threads(const void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n);

/* The byte table-lookup kernel at or below `isa` (8-bit sources to 8-bit
 * results, src/kernels/u8-lut, its list u8-lut-list.inc), or NULL; its
 * name.  With AVX512_VBMI (a feature beyond the levels, allowed from the
 * avx512 level on) the vpermi2b kernel, else the vpshufb one. */
typedef void (*mxp_cvt_lut8_fn)(void *dst, const void *src, size_t n, const uint8_t *table);
mxp_cvt_lut8_fn mxp_cvt_find_lut8(mxp_isa isa, const char **name);

/* The same for 16-bit and 32-bit results, and for 64-bit results whose
 * low 40 bits are 0 in every entry, or NULL. */
typedef void (*mxp_cvt_lut16_fn)(void *dst, const void *src, size_t n, const uint16_t *table);
mxp_cvt_lut16_fn mxp_cvt_find_lut16(mxp_isa isa, const char **name);
typedef void (*mxp_cvt_lut32_fn)(void *dst, const void *src, size_t n, const uint32_t *table);
mxp_cvt_lut32_fn mxp_cvt_find_lut32(mxp_isa isa, const char **name);
typedef void (*mxp_cvt_lut64_fn)(void *dst, const void *src, size_t n, const uint64_t *table);
mxp_cvt_lut64_fn mxp_cvt_find_lut64(mxp_isa isa, const char **name);

/* The byte-lane table kernel for 16-bit (bfloat16/float16) or 32-bit
 * (float32) sources -> the 8-bit float formats and small integers at or
 * below `isa` (src/kernels/x16-lut, x32-lut, their list x16-lut-list.inc;
 * AVX512_VBMI), or NULL; its name. */
struct mxp_x16_lut_tables;
typedef void (*mxp_cvt_x16_lut_fn)(void *dst, const void *src, size_t n, const struct mxp_x16_lut_tables *t);
mxp_cvt_x16_lut_fn mxp_cvt_find_x16_lut(mxp_isa isa, int bits, const char **name);

/* Fills t for dst_type <- src_type (bfloat16 or float16) in p's mode from
 * the reference converter, `rest` doing what the tables leave (infinities,
 * NaNs, huge values); false where the tables do not serve the pair or mode
 * (src/convert/convert-x16-lut.c, x16-lut-kernels.h). */
bool mxp_cvt_x16_lut_tables(struct mxp_x16_lut_tables *t, mxp_dtype dst_type, mxp_dtype src_type,
                           const mxp_cvt_params *p, mxp_cvt_fn rest);

/* The byte-lane kernel for src_type -> dst_type and the source its tables
 * are built for (*table_src), or NULL; its name.  float32 takes the
 * bfloat16 tables for the float targets. */
mxp_cvt_x16_lut_fn mxp_cvt_x16_lut_kernel(mxp_dtype dst_type, mxp_dtype src_type, mxp_dtype *table_src,
                                          const char **name);

/* t for n elements of dst_type <- src_type (the tables' source) in p's
 * mode, rest doing what they leave: cached tables for large enough n,
 * built and cached for larger ones; false where they do not serve. */
bool mxp_cvt_x16_lut_get(struct mxp_x16_lut_tables *t, mxp_dtype dst_type, mxp_dtype src_type,
                         const mxp_cvt_params *p, mxp_cvt_fn rest, size_t n);

/* The byte-lane table kernels in list order, for the tests. */
const mxp_kernel *mxp_cvt_x16_lut_kernels(size_t *count);

/* All kernels, for tests and `mxp info`. */
const mxp_cvt_kernel *mxp_cvt_kernels(size_t *count);

/* The table-lookup kernels (src/kernels/u8-lut-list.inc) in list order,
 * each row's tags and param its results' width in bits, for the tests. */
const mxp_kernel *mxp_cvt_lut_kernels(size_t *count);

#endif
