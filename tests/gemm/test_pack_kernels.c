/* Packing kernels against their twins, bit for bit: the 32-bit transposes
 * (src/kernels/x32-transpose/: float32 operands whose lines run along k, as
 * B in x W^T, and the int8 K-quads of transposed B) at AVX2 and AVX-512
 * against mxp_x32_transpose_ref for every line count up to 48 and word
 * counts 0 .. 40 (whole blocks and every leftover), rows tight, odd, 4 KiB
 * and 1001 bytes apart, aligned and a byte off, the words they must not
 * write left alone; and the int8 GEMM's line sums (src/kernels/s8-pack/)
 * of int8 lines and of uint8 lines after an xor, every length 0 .. 200 (a
 * 64-byte step and every tail), modulo 2^32 as the corrections need.
 * Each part is skipped where the CPU lacks its ISA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gemm/gemm-internal.h"
#include "kernels/gemm-kernels.h"
#include "mxp/cpu.h"
#include "support/prng.h"

typedef void x32_fn(const void *, size_t, size_t, size_t, void *, size_t);

static void check_x32(const char *name, x32_fn *fn)
{
    enum { MAXL = 48, MAXQ = 40, DLD = 56 };
    const size_t lds[] = { 4 * MAXQ, 4 * MAXQ + 3, 4096, 1001 }; /* bytes: tight, odd, 4 KiB apart, odd */
    uint64_t rng = 7;
    static unsigned char src[MAXL * 4096 + 64];
    static uint32_t got[DLD * MAXQ + 16], want[DLD * MAXQ + 16];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)prng_next(&rng);
    for (size_t li = 0; li < sizeof lds / sizeof lds[0]; li++)
        for (size_t off = 0; off < 2; off++) /* an aligned source and one a byte off */
            for (size_t lines = 0; lines <= MAXL; lines++)
                for (size_t count = 0; count <= MAXQ; count++) {
                    const size_t ld = lds[li];
                    memset(got, 0x55, sizeof got);
                    memset(want, 0x55, sizeof want);
                    mxp_x32_transpose_ref(src + off, ld, lines, count, want, DLD);
                    fn(src + off, ld, lines, count, got, DLD);
                    if (memcmp(got, want, sizeof got) != 0)
                        fail_msg("%s: lines %zu, count %zu, ld %zu, offset %zu: the words differ", name, lines, count,
                                 ld, off);
                }
    /* the twin itself against the definition */
    mxp_x32_transpose_ref(src, 4096, 3, 5, got, DLD);
    for (size_t q = 0; q < 5; q++)
        for (size_t c = 0; c < 3; c++) {
            uint32_t w;
            memcpy(&w, src + c * 4096 + 4 * q, 4);
            assert_int_equal(got[q * DLD + c], w);
        }
}

static void test_x32_transposes_equal_the_twin(void **state)
{
    (void)state;
#if defined(__x86_64__)
    if (mxp_isa_supported() >= MXP_ISA_AVX2)
        check_x32("mxp_x32_transpose__avx2", mxp_x32_transpose__avx2);
    if (mxp_isa_supported() >= MXP_ISA_AVX512)
        check_x32("mxp_x32_transpose__avx512f", mxp_x32_transpose__avx512f);
    if (mxp_isa_supported() < MXP_ISA_AVX2)
        skip();
#else
    skip();
#endif
}

static void test_line_sums_equal_the_loop(void **state)
{
    (void)state;
#if defined(__x86_64__)
    if (mxp_isa_supported() < MXP_ISA_AVX512)
        skip();
    enum { LINES = 5, MAXLEN = 200, LD = 211 };
    static uint8_t src[LINES * LD];
    uint64_t rng = 11;
    for (int fill = 0; fill < 3; fill++) {
        for (size_t i = 0; i < sizeof src; i++) /* random, all 0xff, all 0x80 */
            src[i] = fill == 0 ? (uint8_t)prng_next(&rng) : fill == 1 ? 0xff : 0x80;
        for (size_t len = 0; len <= MAXLEN; len++)
            for (int kind = 0; kind < 3; kind++) { /* int8; uint8; uint8 ^ 0x80 (int8 A read as uint8) */
                const bool is_signed = kind == 0;
                const uint8_t flip = kind == 2 ? 0x80 : 0;
                uint32_t got[LINES], want[LINES];
                for (size_t l = 0; l < LINES; l++) {
                    uint32_t s = 0;
                    for (size_t p = 0; p < len; p++)
                        s += is_signed ? (uint32_t)(int32_t)(int8_t)src[l * LD + p] : (uint32_t)(src[l * LD + p] ^ flip);
                    want[l] = s;
                }
                mxp_s8_line_sums__avx512f(src, LD, LINES, len, is_signed, flip, got);
                if (memcmp(got, want, sizeof got) != 0)
                    fail_msg("fill %d, len %zu, kind %d: line 0 sum %u, the loop's %u", fill, len, kind, got[0],
                             want[0]);
            }
    }
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_x32_transposes_equal_the_twin),
        cmocka_unit_test(test_line_sums_equal_the_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
