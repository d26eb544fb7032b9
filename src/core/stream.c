/* When the conversions and the row operations write their outputs with
 * streaming (non-temporal) stores: from mxp_stream_threshold() bytes moved
 * (read + written) by one kernel call (kernels/stream-loop.h,
 * mxp_streams).  Streaming stores skip reading each output line before it
 * is written and leave the caches to the inputs, which pays once the
 * arrays pass what the last-level cache holds; below that a plain store
 * leaves the output in the cache for whatever reads it next, and the
 * streaming one sends it to memory.  The default is half of one L3
 * instance (CPUID, mxp_cpu_l3_bytes), kept within [4 MiB, 64 MiB] (a VM
 * may report a whole socket's L3, or none).  Measured on an AMD EPYC Zen
 * 4 (32 MiB L3), one thread, AVX2 level, casts into an existing array in
 * alternation with memcpy of the source (glibc's memcpy stores plainly up
 * to 240 MB here): 4 M bfloat16 -> float8_e4m3 (12 MB moved) 0.64 -> 0.75x
 * memcpy, -> int4 0.91 -> 1.06x, float16 -> int4 0.67-0.82 -> 0.81-0.91x;
 * float32 rows of 4 M elements (33.5 MB moved) kept streaming: with plain
 * stores take fell 1.41 -> 0.72x memcpy, RMS norm 1.05 -> 0.63x. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "mxp/alloc.h"
#include "mxp/cpu.h"

enum { MIB = 1 << 20 };

static size_t stream_default;
static atomic_size_t stream_set; /* mxp_set_stream_threshold's; 0: the default */
static pthread_once_t stream_once = PTHREAD_ONCE_INIT;

/* "N", "NK", "NM", "NG" (binary), N decimal: *bytes; false otherwise. */
static bool parse_bytes(const char *s, size_t *bytes)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return false;
    const int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift)
        end++;
    if (*end || v == 0 || v > (SIZE_MAX >> shift))
        return false;
    *bytes = (size_t)v << shift;
    return true;
}

static void read_default(void)
{
    const size_t half = mxp_cpu_l3_bytes() / 2;
    stream_default = half < 4 * (size_t)MIB ? 4 * (size_t)MIB : half > 64 * (size_t)MIB ? 64 * (size_t)MIB : half;
    const char *env = getenv("MXP_STREAM_BYTES");
    size_t v;
    if (env && *env) {
        if (parse_bytes(env, &v))
            stream_default = v;
        else
            fprintf(stderr, "mxp: MXP_STREAM_BYTES='%.40s' is not a size in bytes (1 or more, K/M/G suffix); ignored\n",
                    env);
    }
}

size_t mxp_stream_threshold(void)
{
    const size_t set = atomic_load_explicit(&stream_set, memory_order_relaxed);
    if (set)
        return set;
    pthread_once(&stream_once, read_default);
    return stream_default;
}

void mxp_set_stream_threshold(size_t bytes)
{
    atomic_store(&stream_set, bytes);
}
