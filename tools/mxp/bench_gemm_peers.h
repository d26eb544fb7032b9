/* mxp bench gemm: the peers (OpenBLAS, oneDNN), loaded with dlopen so mxp
 * itself never links them.  bench_gemm_peers.c; used by bench_gemm.c. */
#ifndef MXP_BENCH_GEMM_PEERS_H
#define MXP_BENCH_GEMM_PEERS_H

#include <stddef.h>
#include <stdint.h>


enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };

typedef struct blas_peer {
    int tried;
    void *lib;
    const char *path;
    void (*sgemm)(int, int, int, int, int, int, float, const float *, int, const float *, int, float, float *, int);
    void (*dgemm)(int, int, int, int, int, int, double, const double *, int, const double *, int, double, double *,
                  int);
    int threads; /* as OpenBLAS reports it, 0 if it cannot */
    char about[96];
} blas_peer;

/* The oneDNN C API, declared here with the few types it needs so the build
 * does not need libdnnl-dev.  Version 2 (Debian 12: libdnnl.so.2) keeps
 * memory and operation descriptors in structs the caller owns: opaque,
 * generously sized buffers here (696 and 2800 bytes in 2.6).  Version 3
 * made them handles. */
typedef int dnnl_status; /* dnnl_success = 0 */
typedef struct dnnl_arg { int arg; void *memory; } dnnl_arg; /* dnnl_exec_arg_t */
enum {
    DNNL_CPU = 1,                            /* dnnl_cpu */
    DNNL_STREAM_DEFAULT = 1,                 /* dnnl_stream_default_flags */
    DNNL_BF16 = 2, DNNL_F32 = 3,             /* dnnl_data_type_t */
    DNNL_TAG_AB = 3,                         /* dnnl_ab: row-major 2-D */
    DNNL_ARG_SRC = 1, DNNL_ARG_DST = 17, DNNL_ARG_WEIGHTS = 33,
    DNNL_QUERY_IMPL_INFO_STR_V2 = 8,         /* dnnl_query_impl_info_str in 2.x */
};
typedef union dnnl_md_v2 { max_align_t align; unsigned char bytes[4096]; } dnnl_md_v2;
typedef union dnnl_matmul_desc_v2 { max_align_t align; unsigned char bytes[16384]; } dnnl_matmul_desc_v2;

typedef struct dnnl_peer {
    int tried;
    void *lib;
    const char *path;
    int major, minor, patch;
    void *engine, *stream;
    int threads; /* OpenMP's max threads, 0 if unknown */
    char about[96];
    dnnl_status (*sgemm)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t, const float *,
                         int64_t, float, float *, int64_t);
    dnnl_status (*gemm_u8s8s32)(char, char, char, int64_t, int64_t, int64_t, float, const uint8_t *, int64_t,
                                uint8_t, const int8_t *, int64_t, int8_t, float, int32_t *, int64_t, const int32_t *);
    dnnl_status (*engine_create)(void **engine, int kind, size_t index);
    dnnl_status (*stream_create)(void **stream, void *engine, unsigned flags);
    dnnl_status (*stream_wait)(void *stream);
    dnnl_status (*pd_query)(const void *pd, int what, int index, void *result);
    dnnl_status (*pd_destroy)(void *pd);
    dnnl_status (*primitive_create)(void **prim, const void *pd);
    dnnl_status (*primitive_execute)(const void *prim, void *stream, int nargs, const dnnl_arg *args);
    dnnl_status (*primitive_destroy)(void *prim);
    dnnl_status (*memory_create)(void **mem, const void *md, void *engine, void *handle);
    dnnl_status (*memory_destroy)(void *mem);
    /* 2.x */
    dnnl_status (*md_init_by_tag)(void *md, int ndims, const int64_t *dims, int data_type, int tag);
    dnnl_status (*matmul_desc_init)(void *desc, const void *src, const void *weights, const void *bias,
                                    const void *dst);
    dnnl_status (*pd_create)(void **pd, const void *op_desc, const void *attr, void *engine, const void *hint);
    /* 3.x */
    dnnl_status (*md_create_with_tag)(void **md, int ndims, const int64_t *dims, int data_type, int tag);
    dnnl_status (*md_destroy)(void *md);
    dnnl_status (*matmul_pd_create)(void **pd, void *engine, const void *src, const void *weights, const void *bias,
                                    const void *dst, const void *attr);
} dnnl_peer;

/* The bf16 matmul primitive for one shape, on the caller's buffers. */
typedef struct dnnl_matmul {
    void *pd, *prim, *mem[3];
    void *md3[3]; /* 3.x descriptors */
    const char *impl;
} dnnl_matmul;


extern blas_peer openblas;
void load_onednn(int threads);
extern const char onednn_missing[];
void load_openblas(int threads);
extern const char openblas_missing[];
void dnnl_matmul_destroy(dnnl_matmul *mm);
const char *dnnl_matmul_create(dnnl_matmul *mm, size_t m, size_t n, size_t k, void *a, void *b, void *c);
extern dnnl_peer onednn;

#endif
