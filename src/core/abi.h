/* The ABI of the public structs (docs/abi.md): each options or report
 * struct begins with `size_t struct_size`, 0 meaning this release's layout
 * (the layout of MXP_1.0: a later release keeps 0 meaning that one), or
 * the sizeof of the layout the caller was built with.  Every entry point
 * that takes such a struct checks it here, in one place, before anything
 * else reads it. */
#ifndef MXP_CORE_ABI_H
#define MXP_CORE_ABI_H

#include "mxp.h"

/* A struct embedded in a public struct, with a struct_size of its own
 * (mxp_convert_opts in mxp_gemm_opts): it follows the outer struct's
 * layout, so its struct_size must be 0 or `size`, the sizeof it has there,
 * and the library never writes that field. */
typedef struct mxp_abi_embedded {
    size_t offset; /* of the embedded struct in the outer one */
    size_t size;
    const char *name; /* "convert", "row.report" */
} mxp_abi_embedded;

/* One public struct: its name, this release's sizeof, the sizes of the
 * earlier layouts still accepted (each a prefix of the next: fields are
 * only ever appended, at or beyond the earlier sizeof) and the structs
 * embedded in it (in every layout that reaches past them). */
typedef struct mxp_abi_layout {
    const char *name;
    size_t size;
    const size_t *older; /* ascending, all < size */
    int n_older;
    const mxp_abi_embedded *embedded;
    int n_embedded;
} mxp_abi_layout;

extern const mxp_abi_layout mxp_abi_convert_opts, mxp_abi_gemm_opts, mxp_abi_memory_stats;
extern const mxp_abi_layout mxp_abi_ops_opts, mxp_abi_reduce_opts, mxp_abi_print_opts, mxp_abi_gemm_safe_opts;
extern const mxp_abi_layout mxp_abi_observer_opts, mxp_abi_optimizer_opts, mxp_abi_loss_scaler_opts;
extern const mxp_abi_layout mxp_abi_monitor_opts;
extern const mxp_abi_layout mxp_abi_conv_opts, mxp_abi_pool_opts;
extern const mxp_abi_layout mxp_abi_op_call_opts, mxp_abi_op_check_opts, mxp_abi_op_check_report;
extern const mxp_abi_layout mxp_abi_profile_machine, mxp_abi_profile_entry, mxp_abi_fft_opts;
extern const mxp_abi_layout mxp_abi_gemm_safe_report, mxp_abi_compare_report, mxp_abi_roundtrip_row;
extern const mxp_abi_layout mxp_abi_advice, mxp_abi_tensor_stats;

/* The most a struct_size may exceed this release's layout by (the bytes
 * beyond must then be zero); more is refused without reading them. */
#define MXP_ABI_MAX_EXTRA 4096

/* Checks the struct at p (NULL: nothing to check) described by l and gives
 * in *n how many bytes of it the library reads or writes: l->size for 0,
 * an earlier layout's size, or l->size for a larger struct whose bytes
 * beyond l->size are all zero; the embedded structs within *n must have a
 * struct_size of 0 or their size there.  Anything else is
 * MXP_ERR_INVALID_ARGUMENT with a sentence naming `where` (the entry point)
 * and `what` ("opts"). */
mxp_status mxp_abi_check(const void *p, const mxp_abi_layout *l, const char *where, const char *what, size_t *n);

/* An array of count structs at p (NULL or count 0: nothing to check), the
 * caller's rows: each is checked as mxp_abi_check and must carry the
 * struct_size of the first, whose layout they all have; *stride is the
 * distance between them (that struct_size, l->size for 0). */
mxp_status mxp_abi_check_array(const void *p, size_t count, const mxp_abi_layout *l, const char *where,
                               const char *what, size_t *n, size_t *stride);

/* An options struct read through *opts: checked as mxp_abi_check; an
 * earlier layout or a larger struct is copied into local (l->size bytes,
 * the fields an earlier layout lacks zero: their defaults; struct_size
 * l->size), and *opts then points there, so that the code after the entry
 * point sees this release's layout only, even in a copy of the struct it
 * hands to another entry point. */
mxp_status mxp_abi_in(const void **opts, void *local, const mxp_abi_layout *l, const char *where, const char *what);

/* A report the library fills: `full` (this release's layout, filled by the
 * library) is copied into the caller's struct at out (NULL: nothing), the
 * n bytes mxp_abi_check gave, except the struct_size fields, the caller's
 * and those of the structs embedded in it, which stay the caller's. */
void mxp_abi_out(void *out, const void *full, size_t n, const mxp_abi_layout *l);
/* The same for an array of count reports, as mxp_abi_check_array gave n
 * and stride (full: count structs of this release's layout). */
void mxp_abi_out_array(void *out, const void *full, size_t count, size_t n, size_t stride, const mxp_abi_layout *l);

/* In an entry point: opts (a `const mxp_<name> *` parameter, name e.g.
 * convert_opts) checked and, for an earlier layout, redirected to a local
 * copy; on a bad size the entry point returns `ret` (MXP_ABI_IN: the
 * status). */
#define MXP_ABI_IN_RET(opts, name, where, ret)                                          \
    mxp_##name opts##_abi_local_;                                                       \
    do {                                                                                \
        const void *abi_p_ = (opts);                                                    \
        mxp_status abi_st_ = mxp_abi_in(&abi_p_, &opts##_abi_local_, &mxp_abi_##name, where, #opts); \
        if (abi_st_ != MXP_OK)                                                          \
            return ret;                                                                 \
        (opts) = abi_p_;                                                                \
    } while (0)
#define MXP_ABI_IN(opts, name, where) MXP_ABI_IN_RET(opts, name, where, abi_st_)
/* The same in an entry point that gives an object through out (NULL
 * allowed): *out is NULL after a refused struct, as after any error. */
#define MXP_ABI_IN_OUT(opts, name, where, out) \
    MXP_ABI_IN_RET(opts, name, where, ((out) ? (void)(*(out) = NULL) : (void)0, abi_st_))

/* In an entry point: the report out (a `mxp_<name> *` parameter, NULL
 * allowed) checked, nothing written to it on a bad size (the entry point
 * returns `ret`); out##_abi_n_ is then the n for mxp_abi_out. */
#define MXP_ABI_OUT_RET(out, name, where, ret)                                           \
    size_t out##_abi_n_;                                                                \
    do {                                                                                \
        if (mxp_abi_check((out), &mxp_abi_##name, where, #out, &out##_abi_n_) != MXP_OK) \
            return ret;                                                                 \
    } while (0)
#define MXP_ABI_OUT(out, name, where) MXP_ABI_OUT_RET(out, name, where, MXP_ERR_INVALID_ARGUMENT)

/* The same for an array of count reports: out##_abi_n_ and
 * out##_abi_stride_ for mxp_abi_out_array. */
#define MXP_ABI_OUT_ARRAY(out, count, name, where)                                      \
    size_t out##_abi_n_, out##_abi_stride_;                                             \
    do {                                                                                \
        if (mxp_abi_check_array((out), (count), &mxp_abi_##name, where, #out, &out##_abi_n_, \
                                &out##_abi_stride_) != MXP_OK)                          \
            return MXP_ERR_INVALID_ARGUMENT;                                            \
    } while (0)

#endif
