/* The ABI of the public structs (docs/abi.md): each options or report
 * struct begins with `size_t struct_size`, 0 meaning this release's layout
 * (the layout of MXP_1.0: a later release keeps 0 meaning that one), or
 * the sizeof of the layout the caller was built with.  Every entry point
 * that takes such a struct checks it here, in one place, before anything
 * else reads it. */
#ifndef MXP_CORE_ABI_H
#define MXP_CORE_ABI_H

#include "mxp.h"

/* One public struct: its name, this release's sizeof and the sizes of the
 * earlier layouts still accepted (each a prefix of the next: fields are
 * only ever appended, at or beyond the earlier sizeof). */
typedef struct mxp_abi_layout {
    const char *name;
    size_t size;
    const size_t *older; /* ascending, all < size */
    int n_older;
} mxp_abi_layout;

extern const mxp_abi_layout mxp_abi_convert_opts;
extern const mxp_abi_layout mxp_abi_gemm_opts;
extern const mxp_abi_layout mxp_abi_memory_stats;

/* The most a struct_size may exceed this release's layout by (the bytes
 * beyond must then be zero); more is refused without reading them. */
#define MXP_ABI_MAX_EXTRA 4096

/* Checks the struct at p (NULL: nothing to check) described by l and gives
 * in *n how many bytes of it the library reads or writes: l->size for 0,
 * an earlier layout's size, or l->size for a larger struct whose bytes
 * beyond l->size are all zero.  Anything else is MXP_ERR_INVALID_ARGUMENT
 * with a sentence naming `where` (the entry point) and `what` ("opts"). */
mxp_status mxp_abi_check(const void *p, const mxp_abi_layout *l, const char *where, const char *what, size_t *n);

/* An options struct read through *opts: checked as mxp_abi_check; an
 * earlier layout is copied into local (l->size bytes), the fields it lacks
 * zero (their defaults), and *opts then points there, so that the code
 * after the entry point reads this release's layout only. */
mxp_status mxp_abi_in(const void **opts, void *local, const mxp_abi_layout *l, const char *where, const char *what);

/* A struct embedded in another follows the outer struct's layout: its own
 * struct_size must be 0 or the size that layout gives it (`size`). */
mxp_status mxp_abi_check_embedded(size_t struct_size, size_t size, const char *where, const char *what);

/* A report the library fills: `full` (this release's layout, filled by the
 * library) is copied into the caller's struct at out, the n bytes
 * mxp_abi_check gave, except struct_size itself, which stays the caller's. */
void mxp_abi_out(void *out, const void *full, size_t n);

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

/* The convert options embedded in opts (which may be NULL), after
 * MXP_ABI_IN(opts, ...). */
#define MXP_ABI_EMBEDDED_CONVERT_RET(opts, where, ret)                                  \
    do {                                                                                \
        if ((opts) != NULL && mxp_abi_check_embedded((opts)->convert.struct_size, sizeof(mxp_convert_opts), \
                                                     where, #opts "->convert") != MXP_OK) \
            return ret;                                                                 \
    } while (0)
#define MXP_ABI_EMBEDDED_CONVERT(opts, where) MXP_ABI_EMBEDDED_CONVERT_RET(opts, where, MXP_ERR_INVALID_ARGUMENT)

#endif
