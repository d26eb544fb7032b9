/* What the SIMD conversion and table-lookup kernels share about their loops:
 * MXP_INLINE, when their stores bypass the cache, and the loop itself.
 *
 * A kernel gives the loop two steps: a full one (whole-vector loads and
 * stores, streaming ones when asked) and a part one (fewer elements: the
 * head converted before aligned streaming stores, and the tail; masked or
 * through a buffer).  They are always-inline functions passed by address:
 * the loop is inlined into the kernel, the addresses are constants there,
 * and the compiler inlines the steps into the calls as if written out (the
 * same code as a loop written in each kernel). */
#ifndef MXP_KERNELS_STREAM_LOOP_H
#define MXP_KERNELS_STREAM_LOOP_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mxp/alloc.h"

#ifndef MXP_INLINE
#define MXP_INLINE static inline __attribute__((always_inline))
#endif

/* Whether a call that moves `bytes` (read + written) writes by streaming
 * (non-temporal) stores: from mxp_stream_threshold() on (mxp/alloc.h; by
 * default half the L3, src/core/stream.c). */
MXP_INLINE int mxp_streams(size_t bytes)
{
    return bytes >= mxp_stream_threshold();
}

/* How far ahead (bytes) a streaming loop prefetches its source.  Without
 * it, an Intel Xeon (AVX-512, a 480 MiB L3 seen from a 2-core VM) read a
 * cold source at ~8 GB/s in these loops against memcpy's ~11: float32 ->
 * bfloat16 over 1 GiB went 0.58x -> 0.88x memcpy (mxp bench convert --n
 * 256M); 1 KiB helped less, 4 KiB as much. */
#ifndef MXP_STREAM_PREFETCH
#define MXP_STREAM_PREFETCH 2048
#endif

/* Prefetches the lines of [p + MXP_STREAM_PREFETCH, ... + bytes): one per
 * 64 bytes (bytes a constant after inlining: the loop unrolls). */
MXP_INLINE void mxp_stream_prefetch(const void *p, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 64)
        _mm_prefetch((const char *)p + MXP_STREAM_PREFETCH + o, _MM_HINT_T0);
}

/* bytes from src to dst, the whole 64-byte lines of dst by streaming
 * stores (SSE2, every x86-64 CPU), the partial lines at either end by
 * memcpy: for copies whose output is not read again soon (gathers of
 * megabytes).  The caller fences (_mm_sfence) before dst is read
 * elsewhere.  Twin: memcpy (the same bytes). */
MXP_INLINE void mxp_stream_copy(void *dst, const void *src, size_t bytes)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    size_t i = (64 - (uintptr_t)d % 64) % 64;
    i = i < bytes ? i : bytes;
    memcpy(d, s, i);
    for (; i + 64 <= bytes; i += 64) {
        const __m128i *from = (const __m128i *)(const void *)(s + i);
        __m128i *to = (__m128i *)(void *)(d + i);
        const __m128i a = _mm_loadu_si128(from), b = _mm_loadu_si128(from + 1);
        const __m128i c = _mm_loadu_si128(from + 2), e = _mm_loadu_si128(from + 3);
        _mm_stream_si128(to, a);
        _mm_stream_si128(to + 1, b);
        _mm_stream_si128(to + 2, c);
        _mm_stream_si128(to + 3, e);
    }
    memcpy(d + i, s + i, bytes - i);
}

typedef struct mxp_stream_plan {
    int stream;  /* full steps store with streaming stores */
    size_t head; /* elements converted first, so that their end is aligned (0 unless stream) */
} mxp_stream_plan;

/* n elements of in_size bytes read and out_size written to dst; streaming
 * stores need `align` bytes alignment. */
MXP_INLINE mxp_stream_plan mxp_stream_plan_for(const void *dst, size_t n, size_t in_size, size_t out_size,
                                               size_t align)
{
    mxp_stream_plan p = { mxp_streams(n * (in_size + out_size)) && (uintptr_t)dst % out_size == 0, 0 };
    if (p.stream) {
        const size_t head = ((align - (uintptr_t)dst % align) % align) / out_size;
        p.head = head < n ? head : n;
    }
    return p;
}

/* A loop's shape: bytes read and written per element, elements per full
 * step, and the alignment (bytes) its streaming stores need. */
typedef struct mxp_stream_shape {
    size_t in_size, out_size, step, align;
} mxp_stream_shape;

/* full: elements [i, i + step), whole vectors, streaming stores when asked;
 * part: elements [i, i + count), count < step (the head and the tail). */
typedef void mxp_stream_full_fn(void *dst, const void *src, size_t i, int stream, const void *ctx);
typedef void mxp_stream_part_fn(void *dst, const void *src, size_t i, size_t count, const void *ctx);

/* Elements [0, n), ctx passed through to the steps. */
MXP_INLINE void mxp_stream_loop(void *dst, const void *src, size_t n, mxp_stream_shape sh, mxp_stream_full_fn *full,
                                mxp_stream_part_fn *part, const void *ctx)
{
    const mxp_stream_plan sp = mxp_stream_plan_for(dst, n, sh.in_size, sh.out_size, sh.align);
    size_t i = sp.head;
    if (i)
        part(dst, src, 0, i, ctx);
    if (sp.stream) {
        for (; i + sh.step <= n; i += sh.step) {
            mxp_stream_prefetch((const char *)src + i * sh.in_size, sh.step * sh.in_size);
            full(dst, src, i, 1, ctx);
        }
    }
    for (; i + sh.step <= n; i += sh.step)
        full(dst, src, i, 0, ctx);
    if (i < n)
        part(dst, src, i, n - i, ctx);
    if (sp.stream)
        _mm_sfence();
}

#endif
