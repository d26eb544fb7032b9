/* mxp bench gemm: loading and calling the peers (see bench_gemm_peers.h). */
#define _POSIX_C_SOURCE 200809L /* dlopen, dlsym, setenv */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gemm_peers.h"

/* dlsym's object pointer as a function pointer, the POSIX way. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers must fit a void *");
#define LOAD_SYM(lib, fp, name)                \
    do {                                       \
        void *sym_ = dlsym((lib), (name));     \
        memcpy(&(fp), &sym_, sizeof(fp));      \
    } while (0)

blas_peer openblas;
dnnl_peer onednn;

static void set_env_threads(const char *name, int threads)
{
    char v[16];
    snprintf(v, sizeof v, "%d", threads);
    setenv(name, v, 1);
}

void load_openblas(int threads)
{
    static const char *const paths[] = {
        "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", /* Debian's libopenblas0-pthread */
        "libopenblas.so.0",
    };
    if (openblas.tried)
        return;
    openblas.tried = 1;
    set_env_threads("OPENBLAS_NUM_THREADS", threads); /* read when the library loads */
    if (threads > 1) /* idle threads spin briefly, not through the next implementation's run */
        setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0] && !openblas.lib; i++) {
        void *lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            continue;
        const char *(*config)(void) = NULL;
        LOAD_SYM(lib, config, "openblas_get_config"); /* libblas.so.3 finds it in libopenblas.so.0 */
        if (!config) { /* some other BLAS under that name */
            dlclose(lib);
            continue;
        }
        openblas.lib = lib;
        openblas.path = paths[i];
        LOAD_SYM(lib, openblas.sgemm, "cblas_sgemm");
        LOAD_SYM(lib, openblas.dgemm, "cblas_dgemm");
        void (*set_threads)(int) = NULL;
        int (*get_threads)(void) = NULL;
        const char *(*corename)(void) = NULL;
        LOAD_SYM(lib, set_threads, "openblas_set_num_threads");
        LOAD_SYM(lib, get_threads, "openblas_get_num_threads");
        LOAD_SYM(lib, corename, "openblas_get_corename");
        if (set_threads)
            set_threads(threads);
        openblas.threads = get_threads ? get_threads() : 0;
        /* "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64": name, version, core */
        char version[32] = "";
        sscanf(config(), "OpenBLAS %31s", version);
        snprintf(openblas.about, sizeof openblas.about, "OpenBLAS %s %s", version, corename ? corename() : "");
    }
}

static int load_onednn_v2(dnnl_peer *d)
{
    LOAD_SYM(d->lib, d->md_init_by_tag, "dnnl_memory_desc_init_by_tag");
    LOAD_SYM(d->lib, d->matmul_desc_init, "dnnl_matmul_desc_init");
    LOAD_SYM(d->lib, d->pd_create, "dnnl_primitive_desc_create");
    return d->md_init_by_tag && d->matmul_desc_init && d->pd_create;
}

static int load_onednn_v3(dnnl_peer *d)
{
    LOAD_SYM(d->lib, d->md_create_with_tag, "dnnl_memory_desc_create_with_tag");
    LOAD_SYM(d->lib, d->md_destroy, "dnnl_memory_desc_destroy");
    LOAD_SYM(d->lib, d->matmul_pd_create, "dnnl_matmul_primitive_desc_create");
    return d->md_create_with_tag && d->md_destroy && d->matmul_pd_create;
}

void load_onednn(int threads)
{
    static const char *const paths[] = { "libdnnl.so.2", "libdnnl.so.3" };
    dnnl_peer *d = &onednn;
    if (d->tried)
        return;
    d->tried = 1;
    set_env_threads("OMP_NUM_THREADS", threads); /* Debian's oneDNN runs on OpenMP (libgomp) */
    if (threads > 1) /* idle OpenMP threads sleep instead of spinning through the others' runs */
        setenv("OMP_WAIT_POLICY", "passive", 0);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0] && !d->lib; i++) {
        if ((d->lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
            d->path = paths[i];
    }
    if (!d->lib)
        return;
    const int *version = NULL; /* dnnl_version_t starts with int major, minor, patch */
    const int *(*get_version)(void) = NULL;
    LOAD_SYM(d->lib, get_version, "dnnl_version");
    if (get_version && (version = get_version()) != NULL) {
        d->major = version[0];
        d->minor = version[1];
        d->patch = version[2];
    }
    LOAD_SYM(d->lib, d->sgemm, "dnnl_sgemm");
    LOAD_SYM(d->lib, d->gemm_u8s8s32, "dnnl_gemm_u8s8s32");
    LOAD_SYM(d->lib, d->engine_create, "dnnl_engine_create");
    LOAD_SYM(d->lib, d->stream_create, "dnnl_stream_create");
    LOAD_SYM(d->lib, d->stream_wait, "dnnl_stream_wait");
    LOAD_SYM(d->lib, d->pd_query, "dnnl_primitive_desc_query");
    LOAD_SYM(d->lib, d->pd_destroy, "dnnl_primitive_desc_destroy");
    LOAD_SYM(d->lib, d->primitive_create, "dnnl_primitive_create");
    LOAD_SYM(d->lib, d->primitive_execute, "dnnl_primitive_execute");
    LOAD_SYM(d->lib, d->primitive_destroy, "dnnl_primitive_destroy");
    LOAD_SYM(d->lib, d->memory_create, "dnnl_memory_create");
    LOAD_SYM(d->lib, d->memory_destroy, "dnnl_memory_destroy");
    int ok = d->engine_create && d->stream_create && d->stream_wait && d->pd_destroy && d->primitive_create &&
             d->primitive_execute && d->primitive_destroy && d->memory_create && d->memory_destroy;
    ok = ok && (d->major == 2 ? load_onednn_v2(d) : d->major == 3 ? load_onednn_v3(d) : 0);
    if (!ok || d->engine_create(&d->engine, DNNL_CPU, 0) != 0 ||
        d->stream_create(&d->stream, d->engine, DNNL_STREAM_DEFAULT) != 0) {
        d->engine = NULL; /* dnnl_sgemm alone still works */
    }
    void (*omp_set)(int) = NULL;
    int (*omp_max)(void) = NULL;
    LOAD_SYM(d->lib, omp_set, "omp_set_num_threads"); /* found in libgomp, which libdnnl loaded */
    LOAD_SYM(d->lib, omp_max, "omp_get_max_threads");
    if (omp_set)
        omp_set(threads);
    d->threads = omp_max ? omp_max() : 0;
    snprintf(d->about, sizeof d->about, "oneDNN %d.%d.%d", d->major, d->minor, d->patch);
}

const char openblas_missing[] = "OpenBLAS not found: apt-get install libopenblas0-pthread";
const char onednn_missing[] = "oneDNN not found: apt-get install libdnnl2";


void dnnl_matmul_destroy(dnnl_matmul *mm)
{
    dnnl_peer *d = &onednn;
    for (int i = 0; i < 3; i++) {
        if (mm->mem[i])
            d->memory_destroy(mm->mem[i]);
        if (mm->md3[i])
            d->md_destroy(mm->md3[i]);
    }
    if (mm->prim)
        d->primitive_destroy(mm->prim);
    if (mm->pd)
        d->pd_destroy(mm->pd);
    memset(mm, 0, sizeof *mm);
}

/* Returns NULL or why the primitive is not there. */
const char *dnnl_matmul_create(dnnl_matmul *mm, size_t m, size_t n, size_t k, void *a, void *b, void *c)
{
    dnnl_peer *d = &onednn;
    const int64_t dims[3][2] = { { (int64_t)m, (int64_t)k }, { (int64_t)k, (int64_t)n }, { (int64_t)m, (int64_t)n } };
    const int types[3] = { DNNL_BF16, DNNL_BF16, DNNL_F32 };
    void *handles[3] = { a, b, c };
    const void *md[3] = { NULL, NULL, NULL };
    memset(mm, 0, sizeof *mm);
    if (!d->lib)
        return onednn_missing;
    if (!d->engine)
        return "oneDNN: no CPU engine, or an API version this tool does not know";
    dnnl_status st = 0;
    if (d->major == 2) {
        static dnnl_md_v2 md2[3];
        static dnnl_matmul_desc_v2 desc;
        for (int i = 0; i < 3 && st == 0; i++) {
            st = d->md_init_by_tag(&md2[i], 2, dims[i], types[i], DNNL_TAG_AB);
            md[i] = &md2[i];
        }
        if (st == 0)
            st = d->matmul_desc_init(&desc, md[0], md[1], NULL, md[2]);
        if (st == 0)
            st = d->pd_create(&mm->pd, &desc, NULL, d->engine, NULL);
    } else {
        for (int i = 0; i < 3 && st == 0; i++) {
            st = d->md_create_with_tag(&mm->md3[i], 2, dims[i], types[i], DNNL_TAG_AB);
            md[i] = mm->md3[i];
        }
        if (st == 0)
            st = d->matmul_pd_create(&mm->pd, d->engine, md[0], md[1], NULL, md[2], NULL);
    }
    if (st != 0) {
        mm->pd = NULL;
        dnnl_matmul_destroy(mm);
        return "oneDNN has no bf16 matmul for this CPU";
    }
    for (int i = 0; i < 3 && st == 0; i++)
        st = d->memory_create(&mm->mem[i], md[i], d->engine, handles[i]);
    if (st == 0)
        st = d->primitive_create(&mm->prim, mm->pd);
    if (st != 0) {
        dnnl_matmul_destroy(mm);
        return "oneDNN: creating the bf16 matmul failed";
    }
    /* The query's number changed in 3.x: ask only the version known here. */
    mm->impl = NULL;
    if (d->major == 2 && d->pd_query && d->pd_query(mm->pd, DNNL_QUERY_IMPL_INFO_STR_V2, 0, &mm->impl) != 0)
        mm->impl = NULL;
    return NULL;
}

