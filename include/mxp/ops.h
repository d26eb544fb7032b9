/* mxp — elementwise operations on arrays, with NumPy broadcasting and type
 * promotion.  See docs/ops.md. */
#ifndef MXP_OPS_H
#define MXP_OPS_H

#include "array.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operations are NumPy's ufuncs of the same names; docs/ops.md has the
 * result dtypes and the semantics of NaN, infinities, zeros and integers.
 * New operations are added before the COUNT values, so existing values stay. */
typedef enum mxp_binary_op {
    MXP_OP_ADD = 0,
    MXP_OP_SUBTRACT,
    MXP_OP_MULTIPLY,
    MXP_OP_DIVIDE,        /* true division: integer inputs give float64, as NumPy */
    MXP_OP_MAXIMUM,       /* NaN propagates */
    MXP_OP_MINIMUM,
    MXP_OP_POWER,
    MXP_OP_EQUAL,         /* comparisons give bool */
    MXP_OP_NOT_EQUAL,
    MXP_OP_LESS,
    MXP_OP_LESS_EQUAL,
    MXP_OP_GREATER,
    MXP_OP_GREATER_EQUAL,
    MXP_OP_FLOOR_DIVIDE,  /* floor(a / b), NumPy's (Python's) divmod; integers: b = 0 gives 0 */
    MXP_OP_REMAINDER,     /* a - b floor(a / b): the sign of b (np.remainder, Python's %) */
    MXP_OP_FMOD,          /* C fmod: the sign of a */
    MXP_OP_FMAX,          /* NaN ignored (NaN only when both are NaN) */
    MXP_OP_FMIN,
    MXP_OP_ARCTAN2,       /* arctan2(a, b) = the angle of (b, a) */
    MXP_OP_HYPOT,
    MXP_OP_COPYSIGN,
    MXP_OP_NEXTAFTER,     /* the neighbour of a toward b in the output dtype */
    MXP_OP_LOGICAL_AND,   /* logical operations give bool; NaN is true */
    MXP_OP_LOGICAL_OR,
    MXP_OP_LOGICAL_XOR,
    MXP_OP_LDEXP,         /* a * 2^b, b of an integer dtype (not uint64) */
    MXP_OP_LOGADDEXP,     /* log(e^a + e^b), without overflow (np.logaddexp) */
    MXP_OP_LOGADDEXP2,    /* log2(2^a + 2^b) */
    MXP_BINARY_OP_COUNT
} mxp_binary_op;

typedef enum mxp_unary_op {
    MXP_OP_NEGATIVE = 0,
    MXP_OP_ABS,
    MXP_OP_SQRT,
    MXP_OP_EXP,
    MXP_OP_LOG,
    MXP_OP_TANH,
    MXP_OP_SIGMOID,
    MXP_OP_RELU,
    MXP_OP_GELU,          /* x/2 (1 + erf(x / sqrt 2)) */
    MXP_OP_GELU_TANH,     /* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    MXP_OP_SILU,          /* x * sigmoid(x) */
    MXP_OP_POSITIVE,
    MXP_OP_SIGN,          /* -1, 0 (for both zeros: +0) or 1; NaN stays NaN */
    MXP_OP_RECIPROCAL,    /* 1/x; integers: 0 for |x| > 1 and for 0 */
    MXP_OP_SQUARE,
    MXP_OP_CBRT,
    MXP_OP_EXP2,
    MXP_OP_EXPM1,
    MXP_OP_LOG2,
    MXP_OP_LOG10,
    MXP_OP_LOG1P,
    MXP_OP_SIN,
    MXP_OP_COS,
    MXP_OP_TAN,
    MXP_OP_ARCSIN,
    MXP_OP_ARCCOS,
    MXP_OP_ARCTAN,
    MXP_OP_SINH,
    MXP_OP_COSH,
    MXP_OP_ARCSINH,
    MXP_OP_ARCCOSH,
    MXP_OP_ARCTANH,
    MXP_OP_FLOOR,
    MXP_OP_CEIL,
    MXP_OP_RINT,          /* to the nearest integer, ties to even */
    MXP_OP_TRUNC,
    MXP_OP_SPACING,       /* the gap from x to its neighbour away from zero, in the output dtype */
    MXP_OP_ISNAN,         /* predicates give bool */
    MXP_OP_ISINF,
    MXP_OP_ISFINITE,
    MXP_OP_SIGNBIT,
    MXP_OP_LOGICAL_NOT,
    MXP_OP_FREXP_MANTISSA, /* NumPy's frexp in two: m in [0.5, 1) with x = m 2^e, */
    MXP_OP_FREXP_EXPONENT, /* and e (int32; 0 for zeros, infinities and NaN) */
    MXP_OP_DEG2RAD,        /* x pi / 180 (np.deg2rad, np.radians) */
    MXP_OP_RAD2DEG,        /* x 180 / pi (np.rad2deg, np.degrees) */
    MXP_UNARY_OP_COUNT
} mxp_unary_op;

/* Zero-initialized (or NULL) means: the result dtype by NumPy's rules, round
 * to nearest even. */
typedef struct mxp_ops_opts {
    size_t struct_size;       /* 0: this release's layout, or sizeof(mxp_ops_opts); docs/abi.md */
    mxp_dtype out_dtype;      /* 0: promoted (comparisons: bool) */
    mxp_convert_opts convert; /* how the result is rounded to the output dtype */
} mxp_ops_opts;

/* out = a op b in a new C-contiguous array. */
MXP_API mxp_status mxp_binary(mxp_array **out, mxp_binary_op op, const mxp_array *a, const mxp_array *b,
                              const mxp_ops_opts *opts);
/* Writes into an existing array whose shape is the broadcast shape (its
 * dtype is the output dtype; opts->out_dtype must be 0 or equal). */
MXP_API mxp_status mxp_binary_into(mxp_array *out, mxp_binary_op op, const mxp_array *a, const mxp_array *b,
                                   const mxp_ops_opts *opts);
MXP_API mxp_status mxp_unary(mxp_array **out, mxp_unary_op op, const mxp_array *a, const mxp_ops_opts *opts);
MXP_API mxp_status mxp_unary_into(mxp_array *out, mxp_unary_op op, const mxp_array *a, const mxp_ops_opts *opts);

/* ---- Python-style scalar operands (docs/ops.md, "Scalar operands") ------ */

/* a op value, value a Python float (a * 0.5 is one call), and the other
 * forms: a Python int, the scalar first (value op a).  The result dtype is
 * NumPy 1.24's for a Python scalar (value-based): a float scalar with a
 * float array keeps the array's dtype unless the value overflows it
 * (float16 * 1e5 is float32); with an integer or bool array it gives
 * float64; an int scalar with an int array keeps the array's dtype if the
 * value fits (int8 + 1 is int8, int8 + 200 int16, uint8 - 1 ... see
 * mxp_scalar_int_result_type); bfloat16 and float8 keep their dtype for
 * any scalar within their range.  The scalar is rounded once to the result
 * dtype; then as mxp_binary(out, op, a, scalar, opts). */
MXP_API mxp_status mxp_binary_scalar(mxp_array **out, mxp_binary_op op, const mxp_array *a, double value,
                                     const mxp_ops_opts *opts);
MXP_API mxp_status mxp_binary_scalar_int(mxp_array **out, mxp_binary_op op, const mxp_array *a, int64_t value,
                                         const mxp_ops_opts *opts);
MXP_API mxp_status mxp_scalar_binary(mxp_array **out, mxp_binary_op op, double value, const mxp_array *a,
                                     const mxp_ops_opts *opts);
MXP_API mxp_status mxp_scalar_int_binary(mxp_array **out, mxp_binary_op op, int64_t value, const mxp_array *a,
                                         const mxp_ops_opts *opts);
/* np.result_type(array, value) for an array of dtype a with ndim
 * dimensions (0-d arrays take no part in value-based casting: the
 * scalar counts as float64 / int64) and a Python float or int;
 * MXP_DTYPE_INVALID for an invalid a. */
MXP_API mxp_dtype mxp_scalar_result_type(mxp_dtype a, int ndim, double value);
MXP_API mxp_dtype mxp_scalar_int_result_type(mxp_dtype a, int ndim, int64_t value);

/* a op b for two float64 values, the result a float64 (comparisons and
 * logical operations 0 or 1): the arithmetic of Python-style scalars (the
 * Python package's mxp.bfloat16(1.5) // 0.5, then rounded once to the
 * scalar's type).  Each operation as mxp_binary's float64 loop computes an
 * element (floor_divide and remainder as Python's divmod, the sign of b;
 * nextafter, spacing and ldexp in float64), but a NaN result is left as the
 * arithmetic makes it, not written as the canonical NaN, except remainder
 * by zero: the positive quiet NaN.  MXP_ERR_INVALID_ARGUMENT for an op
 * that is not one of mxp_binary_op's. */
MXP_API mxp_status mxp_binary_f64(double *out, mxp_binary_op op, double a, double b);

MXP_API const char *mxp_binary_op_name(mxp_binary_op op); /* "add", ... */
MXP_API const char *mxp_unary_op_name(mxp_unary_op op);   /* "gelu_tanh", ... */

/* What computes exp, log, tanh, sin, cos, sigmoid, silu, gelu and gelu_tanh
 * into float outputs of at most 32 bits at the current ISA level:
 * "sleef-avx512" or "sleef-avx2" (SLEEF's vector functions), or "libm"
 * (float64 libm per element: the scalar level, non-x86 machines, a build
 * without SLEEF).  docs/ops.md gives each one's accuracy. */
MXP_API const char *mxp_vector_math(void);

/* The result dtype of a op b (or op a with b == MXP_DTYPE_INVALID for
 * unary ops) without opts->out_dtype. */
MXP_API mxp_dtype mxp_binary_result_type(mxp_binary_op op, mxp_dtype a, mxp_dtype b);
MXP_API mxp_dtype mxp_unary_result_type(mxp_unary_op op, mxp_dtype a);

/* ---- 1-d strided loops (NumPy ufunc inner loops) ----------------------- */

/* out[i*out_stride] = a[i*a_stride] op b[i*b_stride] for i < n, with byte
 * strides (any sign, 0 allowed for inputs: a broadcast scalar), computed as
 * mxp_binary computes it for these dtypes and rounded once into out_type
 * with convert (NULL: nearest even).  For ufunc-style callers: no array
 * objects, no allocation on the hot path (stack scratch), in place allowed
 * when out and an input are the same elements (same pointer and stride,
 * itemsize(out) <= itemsize(input)); other overlap is MXP_ERR_OVERLAP. */
MXP_API mxp_status mxp_binary_strided(mxp_binary_op op, size_t n,
                                      void *out, mxp_dtype out_type, ptrdiff_t out_stride,
                                      const void *a, mxp_dtype a_type, ptrdiff_t a_stride,
                                      const void *b, mxp_dtype b_type, ptrdiff_t b_stride,
                                      const mxp_convert_opts *convert);
MXP_API mxp_status mxp_unary_strided(mxp_unary_op op, size_t n,
                                     void *out, mxp_dtype out_type, ptrdiff_t out_stride,
                                     const void *a, mxp_dtype a_type, ptrdiff_t a_stride,
                                     const mxp_convert_opts *convert);
/* Sum (or product) of n strided elements accumulated in acc_type (MXP_F32
 * or MXP_F64, or MXP_F16 / MXP_BF16 as mxp_reduce_opts.acc_dtype; the sum pairwise, the product left to right, as mxp_reduce
 * does), returned as a double (exact for the accumulator).  n = 0 gives 0
 * (a product: 1). */
MXP_API mxp_status mxp_sum_strided(double *result, const void *a, mxp_dtype a_type, ptrdiff_t a_stride, size_t n,
                                   mxp_dtype acc_type);
MXP_API mxp_status mxp_prod_strided(double *result, const void *a, mxp_dtype a_type, ptrdiff_t a_stride, size_t n,
                                    mxp_dtype acc_type);
/* Running values (NumPy's op.accumulate: np.cumsum, np.cumprod,
 * np.maximum.accumulate) of add, multiply, maximum, minimum, fmax or fmin
 * into a float out_type: kept in float64, each output rounded once from
 * it.  out[0] = *start op a[0] (start: one element of out_type, e.g. the
 * previous call's last output), or a[0] when start is NULL; out[i] =
 * out[i-1] op a[i].  out may be a, element for element.  (accumulate.c) */
MXP_API mxp_status mxp_accumulate_strided(mxp_binary_op op, size_t n, void *out, mxp_dtype out_type,
                                          ptrdiff_t out_stride, const void *a, mxp_dtype a_type, ptrdiff_t a_stride,
                                          const void *start);

/* ---- sorting ------------------------------------------------------------ */

/* NumPy's order, for every dtype: integers by value; floats from -inf to
 * +inf with -0 equal to +0 and every NaN (any sign or payload) last.
 * Stable: equal elements keep their order.  A radix sort on keys that
 * order as the values do: O(n), one or two passes for 8- and 16-bit types;
 * 2n * 16 bytes of scratch from mxp_malloc.  (src/ops/sort.c) */
MXP_API mxp_status mxp_sort_strided(void *a, mxp_dtype type, ptrdiff_t stride, size_t n);
/* index[i] = the position of the i-th element in that order (stable). */
MXP_API mxp_status mxp_argsort_strided(int64_t *index, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n);
/* The position of the first largest / smallest element, or of the first
 * NaN if there is one (NumPy's argmax/argmin); n = 0 is an error. */
MXP_API mxp_status mxp_argmax_strided(int64_t *index, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n);
MXP_API mxp_status mxp_argmin_strided(int64_t *index, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n);
/* The sort keys themselves: keys[i] < keys[j] (unsigned) exactly when
 * element i comes before element j in that order (NaNs share the largest
 * key; -0 and +0 one key).  For a comparison function or a lookup table. */
MXP_API mxp_status mxp_sort_keys(uint64_t *keys, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n);

/* ---- custom elementwise operators ---------------------------------------- */

/* A caller's elementwise kernel: n contiguous elements in, n out, of the
 * dtype it was registered for.  It must not fail; ctx is passed through. */
typedef void (*mxp_unary_kernel_fn)(void *out, const void *in, size_t n, void *ctx);

/* Registers fn under name for one dtype.  A kernel registered for MXP_F32
 * or MXP_F64 also serves every dtype without its own: mxp converts blocks
 * of the input exactly to that type, calls fn, and rounds the result once to
 * the output dtype (opts->out_dtype, else the input's float dtype, else
 * float64 for integers).  Registering a name and dtype again replaces it.
 * Up to 256 registrations. */
MXP_API mxp_status mxp_register_unary_op(const char *name, mxp_dtype dtype, mxp_unary_kernel_fn fn, void *ctx);
/* Removes every registration of name. */
MXP_API mxp_status mxp_unregister_op(const char *name);
/* Calls a registered operator like a built-in unary one. */
MXP_API mxp_status mxp_call_unary_op(mxp_array **out, const char *name, const mxp_array *a, const mxp_ops_opts *opts);

/* ---- reductions -------------------------------------------------------- */

typedef enum mxp_reduce_op {
    MXP_REDUCE_SUM = 0,
    MXP_REDUCE_MEAN,
    MXP_REDUCE_PROD,
    MXP_REDUCE_MAX,    /* NaN propagates (the first NaN wins) */
    MXP_REDUCE_MIN,
    MXP_REDUCE_ARGMAX, /* int64 index along one axis (or into the flattened array) */
    MXP_REDUCE_ARGMIN,
    MXP_REDUCE_NORM2,  /* sqrt(sum x^2) */
    MXP_REDUCE_VAR,    /* sum (x - mean)^2 / (n - ddof), two passes */
    MXP_REDUCE_STD,
    MXP_REDUCE_OP_COUNT
} mxp_reduce_op;

typedef enum mxp_sum_algorithm {
    MXP_SUM_PAIRWISE = 0, /* default: error grows as log n */
    MXP_SUM_KAHAN,        /* compensated: error independent of n */
    MXP_SUM_NAIVE         /* left to right in the accumulator type */
} mxp_sum_algorithm;

/* Zero-initialized (or NULL) means: all defaults (see docs/ops.md). */
typedef struct mxp_reduce_opts {
    size_t struct_size;         /* 0: this release's layout, or sizeof(mxp_reduce_opts); docs/abi.md */
    mxp_dtype acc_dtype;        /* 0: float32 for 8/16-bit floats, float64 for
                                   float32/float64 (float64 for norm2/var/std),
                                   int64/uint64 for integer sums.  MXP_F16 /
                                   MXP_BF16: inputs and every step rounded to
                                   that format (an emulation, docs/ops.md) */
    mxp_sum_algorithm algorithm;
    mxp_dtype out_dtype;        /* 0: the input's float type (float64 for
                                   integer means), int64 for integer sums and
                                   for argmax/argmin */
    bool keepdims;
    int64_t ddof;               /* var/std */
    mxp_convert_opts convert;   /* rounding of the result to out_dtype */
} mxp_reduce_opts;

/* Reduces a over the naxes axes listed (axes NULL: every axis; negative
 * axes count from the end).  argmax/argmin take one axis or all. */
MXP_API mxp_status mxp_reduce(mxp_array **out, mxp_reduce_op op, const mxp_array *a, int naxes, const int *axes,
                              const mxp_reduce_opts *opts);
MXP_API const char *mxp_reduce_op_name(mxp_reduce_op op); /* "sum", "argmax", ... */

/* ---- matrix multiplication --------------------------------------------- */

/* NumPy's matmul: a 1-d a is a row (1, k) and a 1-d b a column (k, 1), the
 * added axis removed from the result; arrays with more than 2 dimensions
 * are stacks of matrices in the last two axes, whose batch axes broadcast
 * (NumPy rules).  0-d inputs and a k that differs are MXP_ERR_SHAPE.  The
 * result dtype is mxp_promote_types(a, b), except uint8/int8 by int8: int32
 * (the quantized product, exact sums); each matrix is one mxp_gemm
 * (alpha 1, beta 0) with opts (NULL: defaults; its epilogue applies to
 * every matrix, and a bias needs opts->bias_len >= m or n, else
 * MXP_ERR_INVALID_ARGUMENT; stochastic rounding indexes the result's
 * elements in C order).  Integer inputs get whatever mxp_gemm does for those types.
 * C- and F-ordered matrices, transposed views and row slices are read in
 * place; other layouts are copied first.  See docs/ops.md. */
MXP_API mxp_status mxp_matmul(mxp_array **out, const mxp_array *a, const mxp_array *b, const mxp_gemm_opts *opts);
/* Writes into an existing array of the result's shape, in its dtype
 * (read-only: MXP_ERR_READONLY); inputs that overlap it are copied first. */
MXP_API mxp_status mxp_matmul_into(mxp_array *out, const mxp_array *a, const mxp_array *b,
                                   const mxp_gemm_opts *opts);
/* The shape of mxp_matmul's result for operands of these shapes (the rules
 * above): *ndim_out and shape_out (room for MXP_MAXDIMS).  MXP_ERR_SHAPE,
 * with mxp_matmul's sentence, for a 0-d operand, a k that differs or batch
 * axes that do not broadcast. */
MXP_API mxp_status mxp_matmul_shape(int *ndim_out, int64_t *shape_out, int ndim_a, const int64_t *shape_a,
                                    int ndim_b, const int64_t *shape_b);
/* One matrix C = A B (m x k by k x n, alpha 1, beta 0) with each matrix
 * given by its first element and the byte strides of its rows and columns
 * (any sign, 0 for a repeated row or column): NumPy's matmul inner loop
 * (python/src/matmul.c).  Each of A and B is read where it lies when
 * mxp_matmul would read it there (row- or column-major with a leading
 * dimension at least the row), else from a C-ordered copy; C is written in
 * place when row-major, as C^T = B^T A^T when column-major (float operands,
 * and opts without bias, scales, zero points or stochastic rounding), else
 * through a C-ordered copy.  Dtypes and opts as mxp_gemm takes them; m or n
 * 0 writes nothing. */
MXP_API mxp_status mxp_matmul_strided(size_t m, size_t n, size_t k, const void *a, mxp_dtype a_type, ptrdiff_t a_rs,
                                      ptrdiff_t a_cs, const void *b, mxp_dtype b_type, ptrdiff_t b_rs,
                                      ptrdiff_t b_cs, void *c, mxp_dtype c_type, ptrdiff_t c_rs, ptrdiff_t c_cs,
                                      const mxp_gemm_opts *opts);

/* batch GEMMs: C_i = alpha op(A_i) op(B_i) + beta C_i with X_i = x + i *
 * stride_x elements (stride_a or stride_b 0: one matrix for every i; C's
 * matrices must not overlap, nor a C_i its A_i, B_i, the bias or the
 * scales, else MXP_ERR_OVERLAP before any C_i is written; offsets that overflow:
 * MXP_ERR_SIZE_OVERFLOW).  A loop of mxp_gemm: the arguments are checked
 * as mxp_gemm checks them before any matrix is written; stochastic
 * rounding indexes C_0's elements, then C_1's, ...  An out-of-memory
 * failure partway leaves the earlier C_i written. */
MXP_API mxp_status mxp_gemm_strided_batched(size_t batch, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                            double alpha, const void *a, mxp_dtype a_type, size_t lda,
                                            ptrdiff_t stride_a, const void *b, mxp_dtype b_type, size_t ldb,
                                            ptrdiff_t stride_b, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                            ptrdiff_t stride_c, const mxp_gemm_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
