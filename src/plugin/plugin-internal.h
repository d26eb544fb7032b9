/* Internal: the table of operators loaded from plugins (load.c), read by
 * the calls (call.c) and the precision checks (check.c). */
#ifndef MXP_PLUGIN_INTERNAL_H
#define MXP_PLUGIN_INTERNAL_H

#include "mxp/plugin.h"

/* One kernel, its signature parsed. */
typedef struct mxp_op_kernel_entry {
    char signature[96]; /* canonical: "bfloat16,bfloat16->bfloat16" */
    mxp_dtype in[MXP_OP_MAX_INPUTS];
    mxp_dtype out;
    mxp_isa isa;
    mxp_op_fn fn;
} mxp_op_kernel_entry;

/* One operator.  Entries are only ever appended (plugins stay loaded), so a
 * reader that saw the count may use every entry below it without a lock. */
typedef struct mxp_op_entry {
    char name[MXP_OP_MAX_NAME];
    char prof_name[MXP_OP_MAX_NAME + 3]; /* "op:NAME", the profiler's kind */
    char *doc;
    const char *library; /* shared by the library's operators */
    char *check_shapes;
    mxp_op_kind kind;
    int n_inputs;
    int n_kernels;
    mxp_op_kernel_entry *kernels;
    mxp_op_fn reference;
    mxp_op_shape_fn shape;
    void *ctx;
} mxp_op_entry;

/* *e = the operator named name, or an error. */
mxp_status mxp_op_find(const char *name, const mxp_op_entry **e);
/* The same without an error: NULL when there is none. */
const mxp_op_entry *mxp_op_lookup(const char *name);

/* Parses "a,b->c" (mxp's dtype names and short names) for n inputs into
 * in[] and out, canonical text into canon[cap]; MXP_OK or an error
 * sentence naming `what`. */
mxp_status mxp_op_parse_signature(const char *sig, int n, mxp_dtype *in, mxp_dtype *out, char *canon, size_t cap,
                                  const char *what);

/* *k = the kernel for these input dtypes (and signature, when not NULL):
 * exact dtypes first, else the first declared that every input converts
 * to safely; among kernels of that signature the highest ISA level not
 * above mxp_get_isa().  MXP_ERR_UNSUPPORTED naming the signatures when
 * none; MXP_ERR_INVALID_ARGUMENT for a signature that does not parse. */
mxp_status mxp_op_pick_kernel(const mxp_op_entry *e, const mxp_dtype *types, int n, const char *signature,
                              const mxp_op_kernel_entry **k);

/* The plugin's error sentence of this thread (set_error), "" when none;
 * cleared by mxp_plugin_error_clear. */
const char *mxp_plugin_error(void);
void mxp_plugin_error_clear(void);

#endif
