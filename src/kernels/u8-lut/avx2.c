/* dst[i] = table[src[i]] for 8-bit sources with AVX2: the 256 entries
 * copied once a call into a table of 32-bit slots (32- and 64-bit results:
 * the table itself), then eight source bytes widened to 32-bit indices and
 * looked up by one vpgatherdd (four by vpgatherdq for 64-bit results); 8-
 * and 16-bit results packed
 * back by vpackus (every entry fits its width: no saturation).  AVX2 has
 * no byte permute across a register (VBMI's vpermi2b), and sixteen
 * vpshufb with a compare and a blend each cost more than the gathers.
 * The tables are the reference converter's answers for all 256 source
 * patterns (src/convert/convert.c), so results equal the reference's by
 * construction; the twins are mxp_lut8_ref, mxp_lut16_ref and
 * mxp_lut64_ref (src/convert/convert-ref.c).  8-bit results from a table
 * that repeats every 16 entries take one vpshufb instead (below).  Each step reads its source
 * bytes before writing: the 8-bit kernel is safe in place. */
#include <immintrin.h>
#include <string.h>

#include "kernels/u8-lut-kernels.h"

#include "kernels/stream-loop.h"

/* Eight results from the eight bytes at s, as 32-bit lanes. */
MXP_INLINE __m256i gather8(const int32_t *t, const uint8_t *s)
{
    return _mm256_i32gather_epi32(t, _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)s)), 4);
}

MXP_INLINE void store256(void *d, __m256i r, int stream)
{
    if (stream)
        _mm256_stream_si256((__m256i *)d, r);
    else
        _mm256_storeu_si256((__m256i *)d, r);
}

/* ---- 8-bit results: 32 a step ---------------------------------------------- */

MXP_INLINE __m256i lookup32x8(const int32_t *t, const uint8_t *s)
{
    const __m256i a = _mm256_packus_epi32(gather8(t, s), gather8(t, s + 8));       /* 0-3 8-11 | 4-7 12-15 */
    const __m256i b = _mm256_packus_epi32(gather8(t, s + 16), gather8(t, s + 24)); /* 16-19 24-27 | 20-23 28-31 */
    /* bytes by 32-bit groups: 0-3 8-11 16-19 24-27 | 4-7 12-15 20-23 28-31 */
    const __m256i r = _mm256_packus_epi16(a, b);
    return _mm256_permutevar8x32_epi32(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

MXP_INLINE void lut8_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    store256((uint8_t *)dst + i, lookup32x8(ctx, (const uint8_t *)src + i), stream);
}

MXP_INLINE void lut8_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint8_t in[32] = { 0 }, out[32];
    memcpy(in, (const uint8_t *)src + i, count);
    _mm256_storeu_si256((__m256i *)(void *)out, lookup32x8(ctx, in));
    memcpy((uint8_t *)dst + i, out, count);
}

/* A table that repeats every 16 entries (the sources whose value is their
 * low four bits: int4, uint4, int2, uint2, int1, uint1, float4_e2m1fn --
 * the reference converter ignores the bits above) is one vpshufb on the
 * low nibbles: 32 results for two operations, not four gathers. */
MXP_INLINE void nib8_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)((const uint8_t *)src + i));
    store256((uint8_t *)dst + i, _mm256_shuffle_epi8(*(const __m256i *)ctx, _mm256_and_si256(v, _mm256_set1_epi8(15))),
             stream);
}

MXP_INLINE void nib8_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint8_t in[32] = { 0 }, out[32];
    memcpy(in, (const uint8_t *)src + i, count);
    nib8_full(out, in, 0, 0, ctx);
    memcpy((uint8_t *)dst + i, out, count);
}

void mxp_u8_lut_x8__avx2(void *dst, const void *src, size_t n, const uint8_t *table)
{
    int periodic = 1;
    for (int k = 16; k < 256 && periodic; k++)
        periodic = table[k] == table[k & 15];
    if (periodic) {
        const __m256i t16 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)table));
        mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 1, 32, 32 }, nib8_full, nib8_part, &t16);
        return;
    }
    int32_t t[256];
    for (int k = 0; k < 256; k++)
        t[k] = table[k];
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 1, 32, 32 }, lut8_full, lut8_part, t);
}

/* ---- 16-bit results: 16 a step ---------------------------------------------- */

MXP_INLINE __m256i lookup16x16(const int32_t *t, const uint8_t *s)
{
    const __m256i r = _mm256_packus_epi32(gather8(t, s), gather8(t, s + 8)); /* 0-3 8-11 | 4-7 12-15 */
    return _mm256_permute4x64_epi64(r, 0xd8);
}

MXP_INLINE void lut16_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    store256((uint16_t *)dst + i, lookup16x16(ctx, (const uint8_t *)src + i), stream);
}

MXP_INLINE void lut16_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint8_t in[16] = { 0 };
    uint16_t out[16];
    memcpy(in, (const uint8_t *)src + i, count);
    _mm256_storeu_si256((__m256i *)(void *)out, lookup16x16(ctx, in));
    memcpy((uint16_t *)dst + i, out, count * sizeof out[0]);
}

void mxp_u8_lut_x16__avx2(void *dst, const void *src, size_t n, const uint16_t *table)
{
    int32_t t[256];
    for (int k = 0; k < 256; k++)
        t[k] = table[k];
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 2, 16, 32 }, lut16_full, lut16_part, t);
}

/* ---- 32-bit results: 8 a step (the gather's own lanes) --------------------- */

MXP_INLINE void lut32_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    store256((uint32_t *)dst + i, gather8(ctx, (const uint8_t *)src + i), stream);
}

MXP_INLINE void lut32_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint8_t in[8] = { 0 };
    uint32_t out[8];
    memcpy(in, (const uint8_t *)src + i, count);
    _mm256_storeu_si256((__m256i *)(void *)out, gather8(ctx, in));
    memcpy((uint32_t *)dst + i, out, count * sizeof out[0]);
}

void mxp_u8_lut_x32__avx2(void *dst, const void *src, size_t n, const uint32_t *table)
{
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 4, 8, 32 }, lut32_full, lut32_part, table);
}

/* ---- 64-bit results: 8 a step ----------------------------------------------- */

MXP_INLINE void lookup8x64(const uint64_t *t, const uint8_t *s, __m256i *r0, __m256i *r1)
{
    const __m256i idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)s));
    const long long *tl = (const long long *)(const void *)t;
    *r0 = _mm256_i32gather_epi64(tl, _mm256_castsi256_si128(idx), 8);
    *r1 = _mm256_i32gather_epi64(tl, _mm256_extracti128_si256(idx, 1), 8);
}

MXP_INLINE void lut64_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    __m256i r0, r1;
    lookup8x64(ctx, (const uint8_t *)src + i, &r0, &r1);
    uint64_t *d = (uint64_t *)dst + i;
    store256(d, r0, stream);
    store256(d + 4, r1, stream);
}

MXP_INLINE void lut64_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint8_t in[8] = { 0 };
    uint64_t out[8];
    __m256i r0, r1;
    memcpy(in, (const uint8_t *)src + i, count);
    lookup8x64(ctx, in, &r0, &r1);
    _mm256_storeu_si256((__m256i *)(void *)out, r0);
    _mm256_storeu_si256((__m256i *)(void *)(out + 4), r1);
    memcpy((uint64_t *)dst + i, out, count * sizeof out[0]);
}

void mxp_u8_lut_x64__avx2(void *dst, const void *src, size_t n, const uint64_t *table)
{
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 8, 8, 32 }, lut64_full, lut64_part, table);
}
