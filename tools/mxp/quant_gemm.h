/* mxp quant-gemm: the checks on the --a/--b inputs (quant_gemm.c), apart
 * from the command so that a fuzz target (tests/fuzz/fuzz_quant_gemm_inputs.c)
 * runs the same code on the same bytes. */
#ifndef MXP_TOOLS_QUANT_GEMM_H
#define MXP_TOOLS_QUANT_GEMM_H

#include <stddef.h>

#include "mxp.h"

/* x as read from `opt` (--a or --b) at `name` must be a 2-d, nonempty
 * float32 or float64 array; *out is its float32 copy (C order, float64
 * rounded once).  On failure *out is NULL, a sentence naming opt and
 * name is in err and the status is MXP_ERR_FORMAT (or the copy's). */
mxp_status quant_gemm_operand(const char *opt, const char *name, const mxp_array *x, mxp_array **out, char *err,
                              size_t err_size);
/* A's columns are B's rows (both from quant_gemm_operand); else
 * MXP_ERR_SHAPE and a sentence in err. */
mxp_status quant_gemm_operands_agree(const mxp_array *a, const mxp_array *b, char *err, size_t err_size);

#endif
