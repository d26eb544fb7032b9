/* mxp — operator plugins: operators from a compiled shared library, called
 * like mxp's own and checked against a float64 reference (docs/plugins.md).
 *
 * A plugin is a shared object that exports ONE function,
 *
 *     MXP_PLUGIN_EXPORT int mxp_plugin_register(mxp_plugin_host *host);
 *
 * which calls host->declare(host, &def) once per operator and returns 0
 * (or calls host->set_error and returns nonzero).  The plugin needs only
 * this header: it does not link libmxp (host->convert gives it mxp's
 * conversions).  mxp checks every declaration after the function returns
 * and adds all of the plugin's operators or none. */
#ifndef MXP_PLUGIN_H
#define MXP_PLUGIN_H

#include <stdint.h>

#include "array.h"
#include "convert.h"
#include "cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of the structs below; a plugin built for another version is
 * refused (its declarations name the version they were built for). */
#define MXP_PLUGIN_ABI_VERSION 1
#define MXP_OP_MAX_INPUTS 8
#define MXP_OP_MAX_NAME 64 /* bytes, with the terminating NUL */

#if defined(_WIN32)
#define MXP_PLUGIN_EXPORT __declspec(dllexport)
#else
#define MXP_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef enum mxp_op_kind {
    MXP_OP_ELEMENTWISE = 1, /* out[i] = f(a[i], b[i], ...), inputs broadcast */
    MXP_OP_REDUCTION = 2,   /* one input; one output per row along an axis */
    MXP_OP_GENERAL = 3      /* any inputs to one output whose shape a function gives */
} mxp_op_kind;

/* A dense C-order tensor handed to a general operator. */
typedef struct mxp_op_tensor {
    void *data;
    mxp_dtype dtype;
    int ndim;
    const int64_t *shape;
} mxp_op_tensor;

/* Kernels.  Every pointer is aligned to its dtype; kernels must be
 * thread-safe (elementwise and reduction kernels are called from mxp's
 * threads on disjoint parts) and must not keep pointers after returning.
 * ctx is the declaration's ctx.
 *
 * elementwise: out[i] = f(in[0][i], ..., in[k-1][i]) for i < n, every
 *   array contiguous, of the kernel signature's dtypes.
 * reduce: out[r] = f(in[r n], ..., in[r n + n - 1]) for r < rows: rows
 *   contiguous rows of n >= 1 elements, one output element each.
 * general: out (allocated by mxp, the shape the shape function gave) from
 *   n_in dense inputs; 0, or nonzero after host->set_error (the call then
 *   fails with MXP_ERR_INVALID_ARGUMENT and that sentence). */
typedef void (*mxp_op_elementwise_fn)(void *out, const void *const *in, size_t n, void *ctx);
typedef void (*mxp_op_reduce_fn)(void *out, const void *in, size_t rows, size_t n, void *ctx);
typedef int (*mxp_op_general_fn)(mxp_op_tensor *out, const mxp_op_tensor *in, int n_in, void *ctx);
typedef union mxp_op_fn {
    mxp_op_elementwise_fn elementwise;
    mxp_op_reduce_fn reduce;
    mxp_op_general_fn general;
} mxp_op_fn;

/* A general operator's output shape from its inputs' (in[i].data is NULL
 * here): 0 with *out_ndim (<= MXP_MAXDIMS) and out_shape[] set, or nonzero
 * after host->set_error for inputs it does not take. */
typedef int (*mxp_op_shape_fn)(int *out_ndim, int64_t *out_shape, const mxp_op_tensor *in, int n_in, void *ctx);

/* One kernel: a signature in mxp's dtype names, inputs then output,
 * "float32,float32->float32" (aliases such as "f32" and "bf16" too), and
 * the least ISA level it needs.  Several kernels may share a signature:
 * a call takes the one with the highest level not above mxp_get_isa(), so
 * MXP_ISA=scalar selects the portable one. */
typedef struct mxp_op_kernel {
    const char *signature;
    mxp_isa isa;
    mxp_op_fn fn;
} mxp_op_kernel;

typedef struct mxp_op_def {
    uint32_t abi_version;      /* MXP_PLUGIN_ABI_VERSION */
    uint32_t struct_size;      /* sizeof(mxp_op_def) */
    const char *name;          /* [a-z_][a-z0-9_]*, shorter than MXP_OP_MAX_NAME */
    const char *doc;           /* one line (may be NULL) */
    mxp_op_kind kind;
    int n_inputs;              /* 1 .. MXP_OP_MAX_INPUTS (reductions: 1) */
    const mxp_op_kernel *kernels;
    int n_kernels;             /* >= 1 */
    mxp_op_fn reference;       /* optional: the same kind of kernel on float64
                                  (every input and the output), as exact as
                                  the plugin can make it: mxp check op's oracle */
    mxp_op_shape_fn shape;     /* general operators: required; else NULL */
    const char *check_shapes;  /* general operators: the inputs' shapes for
                                  mxp check op, "64x384,64x384" (NULL: none) */
    void *ctx;                 /* passed to every kernel of this operator */
} mxp_op_def;

/* What mxp gives the registration function (the plugin must not keep it
 * beyond the call, except to call convert from its kernels). */
typedef struct mxp_plugin_host {
    uint32_t abi_version; /* the host's MXP_PLUGIN_ABI_VERSION */
    uint32_t struct_size; /* sizeof(mxp_plugin_host) */
    /* 0, or -1 when the declaration is refused (the registration then
     * fails whatever the plugin returns; the reason is kept). */
    int (*declare)(struct mxp_plugin_host *host, const mxp_op_def *def);
    /* The plugin's sentence for a failure (registration or a general
     * kernel or shape function: this thread's error). */
    void (*set_error)(struct mxp_plugin_host *host, const char *message);
    /* mxp_convert with nearest-even rounding: n contiguous elements; 0 or -1. */
    int (*convert)(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n);
    void *state; /* the host's */
} mxp_plugin_host;

typedef int (*mxp_plugin_register_fn)(mxp_plugin_host *host);
#define MXP_PLUGIN_REGISTER_SYMBOL "mxp_plugin_register"
/* What the plugin defines (declared here so that its definition is checked
 * against this type; libmxp has no such function). */
MXP_PLUGIN_EXPORT int mxp_plugin_register(mxp_plugin_host *host);

/* ---- the host side: loading, listing, calling --------------------------- */

/* Loads the shared library at path (dlopen, symbols local), calls its
 * mxp_plugin_register and adds its operators; *n_ops (may be NULL) gets how
 * many.  All or nothing: a missing symbol, a library that is not a
 * plugin, another ABI version, a bad declaration, a name another plugin
 * (or the same one twice) declared, a failing
 * registration: MXP_ERR_INVALID_ARGUMENT naming the file and the reason,
 * and nothing added.  Loading the same file again adds nothing and gives
 * its count.  Plugins stay loaded until the process ends. */
MXP_API mxp_status mxp_ops_load(const char *path, int *n_ops);

/* A loaded operator's description (pointers valid until the process ends). */
typedef struct mxp_op_info {
    size_t struct_size;   /* 0: this release's layout, or sizeof(mxp_op_info) */
    const char *name;
    const char *doc;      /* "" when the plugin gave none */
    const char *library;  /* the path it was loaded from */
    mxp_op_kind kind;
    int n_inputs;
    int n_kernels;
    int has_reference;
    const char *check_shapes; /* "" when none */
} mxp_op_info;

MXP_API int mxp_op_count(void);
MXP_API mxp_status mxp_op_info_at(int index, mxp_op_info *info);
MXP_API mxp_status mxp_op_info_by_name(const char *name, mxp_op_info *info);
/* Kernel k of an operator: its signature ("bfloat16,bfloat16->bfloat16"),
 * its dtypes and ISA level (any pointer may be NULL). */
MXP_API mxp_status mxp_op_kernel_at(const char *name, int k, const char **signature, mxp_dtype *in_types,
                                    mxp_dtype *out_type, mxp_isa *isa);
MXP_API const char *mxp_op_kind_name(mxp_op_kind kind); /* "elementwise", "reduction", "general" */

#define MXP_OP_ALL_AXES (-1000) /* a reduction over every axis (to a scalar) */

/* Zero-initialized (or NULL): the signature the inputs' dtypes select, its
 * output dtype, reductions along the last axis. */
typedef struct mxp_op_call_opts {
    size_t struct_size;       /* 0: this release's layout, or sizeof(mxp_op_call_opts) */
    mxp_dtype out_dtype;      /* 0: the kernel's; else its result converted */
    int axis;                 /* reductions: the axis (negative counts from the end;
                                 MXP_OP_ALL_AXES); 0 is axis 0 only with set_axis */
    int set_axis;             /* nonzero: axis is given (else the last axis) */
    int keepdims;             /* reductions: keep the reduced axis with length 1 */
    const char *signature;    /* NULL, or force this kernel signature */
    mxp_convert_opts convert; /* how the result is converted to out_dtype */
} mxp_op_call_opts;

/* Calls a loaded operator on n_in arrays into a new C-contiguous array.
 * The kernel: one whose input dtypes equal the arrays' exactly, else the
 * first declared to which every array converts safely (mxp_can_cast
 * MXP_CASTING_SAFE; inputs are then converted exactly block by block).
 * Elementwise inputs broadcast (NumPy rules); elementwise and reduction
 * work is split over mxp's threads. */
MXP_API mxp_status mxp_op_call(mxp_array **out, const char *name, const mxp_array *const *in, int n_in,
                               const mxp_op_call_opts *opts);
/* The same into an existing array of the result's shape (its dtype is the
 * output dtype: opts->out_dtype must be 0 or equal); out must not overlap
 * an input unless it is that input exactly (elementwise only). */
MXP_API mxp_status mxp_op_call_into(mxp_array *out, const char *name, const mxp_array *const *in, int n_in,
                                    const mxp_op_call_opts *opts);

/* ---- precision verification -------------------------------------------- */

enum { MXP_OP_CHECK_BINS = 12 };

typedef struct mxp_op_check_opts {
    size_t struct_size;     /* 0: this release's layout, or sizeof(mxp_op_check_opts) */
    const char *signature;  /* NULL: every kernel signature of the operator */
    const char *reference;  /* NULL: the plugin's float64 reference; or a
                               built-in elementwise function ("gelu",
                               "gelu_tanh", "exp" ...) */
    uint64_t samples;       /* 0: 1,000,000 random inputs where not exhaustive */
    uint64_t seed;
} mxp_op_check_opts;

/* One kernel signature against the reference: inputs (every bit pattern
 * of an 8- or 16-bit input type when the patterns of all inputs number at
 * most 2^24; else edge values and random patterns), converted exactly to
 * float64 for the reference, whose result is rounded once (nearest even)
 * to the kernel's output dtype; distances in units in the last place of
 * the output dtype (0: the correctly rounded result). */
typedef struct mxp_op_check_report {
    size_t struct_size;        /* 0: this release's layout, or sizeof(mxp_op_check_report) */
    char signature[96];
    mxp_isa isa;               /* the kernel's level that ran */
    uint64_t count;            /* outputs compared */
    int exhaustive;            /* every input pattern was tried */
    double max_ulp;            /* over outputs that are finite in both */
    double mean_ulp;
    uint64_t histogram[MXP_OP_CHECK_BINS]; /* 0, 1, 2, (2,4], (4,8] ... (256,512], more */
    uint64_t nan_mismatch;     /* NaN in one result but not the other */
    uint64_t inf_mismatch;     /* an infinity (or its sign) in one but not the other */
    double worst_in[MXP_OP_MAX_INPUTS]; /* the inputs of the largest distance (elementwise) */
    double worst_got, worst_want;
    uint64_t worst_index;      /* its position among the inputs tried */
    double kernel_ns, reference_ns; /* per output element, median of a few runs */
} mxp_op_check_report;

/* Fills reports[0 .. *n_reports) (capacity cap; one per kernel signature
 * checked).  MXP_ERR_INVALID_ARGUMENT when the operator has no reference
 * and none is named, or a named one does not fit its kind. */
MXP_API mxp_status mxp_op_check(const char *name, const mxp_op_check_opts *opts, mxp_op_check_report *reports,
                                int cap, int *n_reports);

/* The ulp distance of got from want in dtype t (float types; both finite):
 * the count of representable values between them, as mxp_op_check
 * counts (for a Python reference, mxp.check_op). */
MXP_API mxp_status mxp_op_check_compare(const void *got, const void *want, mxp_dtype t, size_t n,
                                        mxp_op_check_report *report);

#ifdef __cplusplus
}
#endif

#endif
