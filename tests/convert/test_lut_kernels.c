/* Every row of the table-lookup list (src/kernels/u8-lut-list.inc) this
 * machine runs, against its twin (mxp_lut8_ref, mxp_lut16_ref,
 * mxp_lut32_ref, mxp_lut64_ref) byte for byte: random tables (the 64-bit ones with their
 * low 40 bits 0, as the kernels require), every length to 200 and long ones
 * (the 4 MiB streaming path), source and destination at different
 * unaligned starts, in place for 8-bit results, nothing written past the
 * end.  (test_convert_pairs runs them on the reference converter's tables
 * of every 8-bit pair and mode.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "kernels/u8-lut-kernels.h"
#include "mxp.h"
#include "support/kernel_check.h"

enum { SHORT = 200, BIG = (4 << 20) + 77, GUARD = 64 };

static void lookup(mxp_kernel_any fn, int width, void *dst, const void *src, size_t n, const void *table)
{
    if (width == 8)
        ((mxp_u8_lut_x8_ukernel *)fn)(dst, src, n, table);
    else if (width == 16)
        ((mxp_u8_lut_x16_ukernel *)fn)(dst, src, n, table);
    else if (width == 32)
        ((mxp_u8_lut_x32_ukernel *)fn)(dst, src, n, table);
    else
        ((mxp_u8_lut_x64_ukernel *)fn)(dst, src, n, table);
}

static void test_lut_rows_match_their_twin(void **state)
{
    (void)state;
    size_t nk, bad = 0, tested = 0;
    const mxp_kernel *ks = mxp_cvt_lut_kernels(&nk);
    unsigned char *src = malloc(BIG + 16), *want = malloc((size_t)BIG * 8), *got = malloc((size_t)(BIG + 8) * 8 + GUARD); /* the start up to 6 elements in */
    assert_non_null(src);
    assert_non_null(want);
    assert_non_null(got);
    uint64_t rng = 0x082efa98ec4e6c89ull;
    _Alignas(64) uint64_t table[256];
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        const int width = ks[r].param;
        const size_t w = (size_t)width / 8;
        for (int t = 0; t < 5; t++) { /* t = 3: repeating every 16 entries (a nibble source's); 4: all but the last */
            for (int i = 0; i < 256; i++) {
                const uint64_t v = t == 0 ? 255u - (unsigned)i : prng_next(&rng);
                if (width == 8)
                    ((uint8_t *)table)[i] = (uint8_t)v;
                else if (width == 16)
                    ((uint16_t *)table)[i] = (uint16_t)v;
                else if (width == 32)
                    ((uint32_t *)table)[i] = (uint32_t)v;
                else
                    table[i] = v & ~((1ull << 40) - 1);
            }
            if (t >= 3)
                for (size_t i = 16; i < (t == 3 ? 256u : 255u); i++)
                    memcpy((unsigned char *)table + i * w, (unsigned char *)table + (i & 15) * w, w);
            if (t == 4) /* entry 255 differs from entry 15 in its top byte (float64's low 40 bits stay 0) */
                ((unsigned char *)table)[256 * w - 1] ^= 0x80;
            for (size_t i = 0; i < BIG + 16; i++)
                src[i] = (unsigned char)prng_next(&rng);
            for (size_t n = 0; n <= BIG; n = n < SHORT ? n + 1 : n < 70000 ? 70000 : BIG) {
                const size_t os = n % 13, od = n % 7;
                lookup(ks[r].twin, width, want, src + os, n, table);
                memset(got, 0xa5, n * w + od * w + GUARD);
                lookup(ks[r].fn, width, got + od * w, src + os, n, table);
                size_t d = (size_t)(memcmp(got + od * w, want, n * w) != 0);
                for (size_t i = 0; i < od * w; i++)
                    d += got[i] != 0xa5;
                for (size_t i = (od + n) * w; i < (od + n) * w + GUARD; i++)
                    d += got[i] != 0xa5;
                if (width == 8 && n) { /* in place */
                    memcpy(got, src + os, n);
                    lookup(ks[r].fn, width, got, got, n, table);
                    d += memcmp(got, want, n) != 0;
                }
                if (d)
                    print_error("%s: length %zu, starts %zu/%zu: differs from %s\n", ks[r].name, n, os, od,
                                ks[r].twin_name);
                bad += d;
                if (n == BIG)
                    break;
            }
        }
        tested++;
    }
    print_message("%zu of %zu rows checked\n", tested, nk);
    free(src);
    free(want);
    free(got);
    assert_int_equal(bad, 0);
}

/* The getters give the first row of the highest level the CPU runs, for
 * each width, and its name. */
static void test_lut_getters(void **state)
{
    (void)state;
    size_t nk;
    const mxp_kernel *ks = mxp_cvt_lut_kernels(&nk);
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        const char *name8 = NULL, *name16 = NULL, *name32 = NULL, *name64 = NULL;
        const mxp_kernel_any f8 = (mxp_kernel_any)mxp_cvt_find_lut8((mxp_isa)isa, &name8);
        const mxp_kernel_any f16 = (mxp_kernel_any)mxp_cvt_find_lut16((mxp_isa)isa, &name16);
        const mxp_kernel_any f32 = (mxp_kernel_any)mxp_cvt_find_lut32((mxp_isa)isa, &name32);
        const mxp_kernel_any f64 = (mxp_kernel_any)mxp_cvt_find_lut64((mxp_isa)isa, &name64);
        const mxp_kernel *w8 = mxp_kernel_pick(ks, nk, (mxp_isa)isa, 8);
        const mxp_kernel *w16 = mxp_kernel_pick(ks, nk, (mxp_isa)isa, 16);
        const mxp_kernel *w32 = mxp_kernel_pick(ks, nk, (mxp_isa)isa, 32);
        const mxp_kernel *w64 = mxp_kernel_pick(ks, nk, (mxp_isa)isa, 64);
        assert_true(f8 == (w8 ? w8->fn : NULL) && f16 == (w16 ? w16->fn : NULL) && f32 == (w32 ? w32->fn : NULL) &&
                    f64 == (w64 ? w64->fn : NULL));
        if (w8)
            assert_string_equal(name8, w8->name);
        else
            assert_null(name8);
        if (w16)
            assert_string_equal(name16, w16->name);
        if (w32)
            assert_string_equal(name32, w32->name);
        if (w64)
            assert_string_equal(name64, w64->name);
    }
    assert_null(mxp_cvt_find_lut8(MXP_ISA_SCALAR, NULL));
}

/* The dispatch table is the list, expanded here, row for row. */
static void test_lut_table_is_the_list(void **state)
{
    (void)state;
    static const char *const names[] = {
#define MXP_U8_LUT(isa, features, width, fn, twin) #fn,
#include "kernels/u8-lut-list.inc"
#undef MXP_U8_LUT
        NULL,
    };
    size_t n;
    const mxp_kernel *rows = mxp_cvt_lut_kernels(&n);
    assert_true(kc_table_is_list(rows, n, names));
}

int main(void)
{
    /* the sizes here were chosen for streaming stores from 4 MiB moved: pinned,
       so that the streaming paths are covered whatever the machine's L3 */
    mxp_set_stream_threshold(4u << 20);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lut_table_is_the_list),
        cmocka_unit_test(test_lut_rows_match_their_twin),
        cmocka_unit_test(test_lut_getters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
