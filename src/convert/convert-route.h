/* Internal: conversions without a kernel of their own, as steps through a
 * wider type a block at a time (src/convert/convert-route.c). */
#ifndef MXP_CONVERT_ROUTE_H
#define MXP_CONVERT_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "convert/convert-config.h"

/* The elements a route (and convert.c's table builds) take at a time: in L1. */
enum { CHAIN_BLOCK = 1024 };

/* Whether the pair goes through two kernels via float32 (an exact source):
 * then the tables of 8-bit sources wait for more elements (convert.c). */
bool mxp_cvt_chain_exists(mxp_dtype dst_type, mxp_dtype src_type, mxp_rounding mode, mxp_isa isa);

/* Runs n elements by the first route the pair has at the current level:
 * false (nothing written) when it has none. */
bool mxp_cvt_route_run(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n,
                       const mxp_cvt_params *p);

/* The route's name for mxp_convert_kernel_name ("widen+narrow", "float64
 * loop+kernel", ...; a thread's buffer), or NULL. */
const char *mxp_cvt_route_name(mxp_dtype dst_type, mxp_dtype src_type, mxp_rounding mode, mxp_isa isa);

#endif
