/* The wide-pair scan (scalar.c, the twin, says what it finds), AVX2:
 * stored rows of B pair by pair, 32 columns a step, |b0| + |b1| in bytes
 * by vpabsb and an unsigned saturating add (255 is still past 128), the
 * largest kept per row pair; transposed B, whose pairs are adjacent
 * bytes, by vpabsb and vpmaddubsw by ones into uint16 sums.  One branch
 * per row pair or line: a wide pair ends the scan there. */
#include <immintrin.h>

#include "kernels/pack-kernels.h"

/* Whether a byte of m is past 128, read as uint8. */
static bool past_128_u8(__m256i m)
{
    const __m256i bound = _mm256_set1_epi8((char)128);
    return !_mm256_testz_si256(_mm256_subs_epu8(m, bound), _mm256_subs_epu8(m, bound));
}

/* Whether a 16-bit lane of m is past 128, read as uint16. */
static bool past_128_u16(__m256i m)
{
    const __m256i d = _mm256_subs_epu16(m, _mm256_set1_epi16(128));
    return !_mm256_testz_si256(d, d);
}

bool mxp_s8_scan_wide_pairs__avx2(const int8_t *b, size_t ld, bool trans, size_t k, size_t n)
{
    if (trans) {
        const __m256i ones = _mm256_set1_epi8(1);
        for (size_t j = 0; j < n; j++) {
            const int8_t *line = b + j * ld;
            __m256i m = _mm256_setzero_si256();
            size_t p = 0;
            for (; p + 32 <= k; p += 32) {
                const __m256i v = _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(line + p)));
                m = _mm256_max_epu16(m, _mm256_maddubs_epi16(v, ones)); /* <= 256: no saturation */
            }
            if (past_128_u16(m))
                return true;
            for (; p + 2 <= k; p += 2)
                if (mxp_s8_wide_pair(line[p], line[p + 1]))
                    return true;
        }
        return false;
    }
    for (size_t p = 0; p + 2 <= k; p += 2) {
        const int8_t *r0 = b + p * ld, *r1 = r0 + ld;
        __m256i m = _mm256_setzero_si256();
        size_t j = 0;
        for (; j + 32 <= n; j += 32) {
            const __m256i v0 = _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(r0 + j)));
            const __m256i v1 = _mm256_abs_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(r1 + j)));
            m = _mm256_max_epu8(m, _mm256_adds_epu8(v0, v1));
        }
        if (past_128_u8(m))
            return true;
        for (; j < n; j++)
            if (mxp_s8_wide_pair(r0[j], r1[j]))
                return true;
    }
    return false;
}
