/* OCP Microscaling (MX v1.0): worked examples, the value tables, round
 * trips, saturation, zero and NaN blocks, partial blocks, the E8M0 range,
 * stochastic rounding, bad input, and a bit-for-bit comparison with the
 * spec's reference algorithm (section 6.3) written here independently in
 * double precision. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/prng.h"

static const mxp_mx_format all_formats[] = { MXP_MXFP8_E4M3, MXP_MXFP8_E5M2, MXP_MXFP4_E2M1, MXP_MXINT8 };

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void) { return prng_next(&rng_state); }

static unsigned fp4_code(const unsigned char *blk, size_t i)
{
    return (i & 1) ? blk[1 + i / 2] >> 4 : blk[1 + i / 2] & 0xFu;
}

static void check_bits_equal(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    assert_int_equal(x, y);
}

/* ---- worked examples ---------------------------------------------------- */

/* MXFP4 block [1.0, 0.5, -3.0, 6.0, 0 ...]: max 6, floor(log2 6) = 2,
 * shared_exp = 2 - 2 = 0, X = 2^0 = 1 (scale byte 127); every element is on
 * the E2M1 grid: 1.0 -> code 2 (E=01 M=0), 0.5 -> 1 (E=00 M=1, subnormal),
 * -3.0 -> 8|5 = 0xD (E=10 M=1), 6.0 -> 7 (E=11 M=1).
 * Packed: byte 0 = 2 | 1 << 4 = 0x12, byte 1 = 0xD | 7 << 4 = 0x7D. */
static void test_example_fp4(void **state)
{
    (void)state;
    float v[32] = { 1.0f, 0.5f, -3.0f, 6.0f };
    unsigned char q[17];
    assert_int_equal(mxp_mx_bytes(MXP_MXFP4_E2M1, 32), 17);
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP4_E2M1, v, 32, NULL), MXP_OK);
    assert_int_equal(q[0], 127);
    assert_int_equal(q[1], 0x12);
    assert_int_equal(q[2], 0x7D);
    for (int i = 3; i < 17; i++)
        assert_int_equal(q[i], 0);
    float back[32];
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP4_E2M1, 32), MXP_OK);
    for (int i = 0; i < 32; i++)
        check_bits_equal(back[i], v[i]);
}

/* MXFP4 rounding: block [6, 5, 5.5, 7.9, 1.25, 1.75, 0.25, 0.2]: X = 1.
 * 5 is the midpoint of 4 (code 6, even) and 6 (code 7): ties to even -> 4.
 * 5.5 -> 6; 7.9 is beyond 6 -> saturates to 6; 1.25 is the midpoint of
 * 1 (code 2) and 1.5 (code 3) -> 1; 1.75 between 1.5 (3) and 2 (4) -> 2;
 * 0.25 between 0 (0) and 0.5 (1) -> 0; 0.2 -> 0.
 * The max is 7.9: floor(log2 7.9) = 2, so X stays 1. */
static void test_example_fp4_rounding(void **state)
{
    (void)state;
    float v[8] = { 6.0f, 5.0f, 5.5f, 7.9f, 1.25f, 1.75f, 0.25f, 0.2f };
    const float want[8] = { 6, 4, 6, 6, 1, 2, 0, 0 };
    unsigned char q[17];
    float back[8];
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP4_E2M1, v, 8, NULL), MXP_OK);
    assert_int_equal(q[0], 127);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP4_E2M1, 8), MXP_OK);
    for (int i = 0; i < 8; i++)
        assert_true(back[i] == want[i]);
}

/* MXFP8 E4M3, block [100, 1, -0.3, 0 ...]: floor(log2 100) = 6,
 * shared_exp = 6 - 8 = -2, X = 2^-2 (scale byte 125).
 * 100 / X = 400.  In [256, 512) E4M3 has steps of 32: 384 (mantissa 100b,
 * even) and 416 (101b): 400 is their midpoint, ties to even -> 384, code
 * 0 1111 100 = 0x7C, decoding to 384 * 0.25 = 96.
 * 1 / X = 4 = 1.0 * 2^2 -> exponent field 2 + 7 = 9: 0 1001 000 = 0x48.
 * -0.3 / X = -1.2: in [1, 2) steps of 1/8: 1.125 or 1.25, 1.2 is nearer
 * 1.25 = 1.010b -> 1 0111 010 = 0xBA, decoding to -1.25 * 0.25 = -0.3125. */
static void test_example_e4m3(void **state)
{
    (void)state;
    float v[32] = { 100.0f, 1.0f, -0.3f };
    unsigned char q[33];
    float back[32];
    assert_int_equal(mxp_mx_bytes(MXP_MXFP8_E4M3, 32), 33);
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E4M3, v, 32, NULL), MXP_OK);
    assert_int_equal(q[0], 125);
    assert_int_equal(q[1], 0x7C);
    assert_int_equal(q[2], 0x48);
    assert_int_equal(q[3], 0xBA);
    assert_int_equal(q[4], 0);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E4M3, 32), MXP_OK);
    assert_true(back[0] == 96.0f);
    assert_true(back[1] == 1.0f);
    assert_true(back[2] == -0.3125f);
}

/* MXFP8 E5M2, block [100000, 3]: floor(log2 100000) = 16 (65536 <= 1e5),
 * shared_exp = 16 - 15 = 1, X = 2 (scale byte 128).  100000 / 2 = 50000;
 * in [32768, 65536) E5M2 steps by 8192: 49152 or 57344, 50000 is nearer
 * 49152 = 1.10b * 2^15 -> 0 11110 10 = 0x7A, decoding to 98304.
 * 3 / 2 = 1.5 = 1.10b * 2^0 -> 0 01111 10 = 0x3E. */
static void test_example_e5m2(void **state)
{
    (void)state;
    float v[2] = { 100000.0f, 3.0f };
    unsigned char q[33];
    float back[2];
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E5M2, v, 2, NULL), MXP_OK);
    assert_int_equal(q[0], 128);
    assert_int_equal(q[1], 0x7A);
    assert_int_equal(q[2], 0x3E);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E5M2, 2), MXP_OK);
    assert_true(back[0] == 98304.0f);
    assert_true(back[1] == 3.0f);
}

/* MXINT8, block [0.75, -0.3, 0.001]: floor(log2 0.75) = -1, emax 0,
 * X = 2^-1 (scale byte 126).  0.75 / X = 1.5 = 96/64 -> 0x60.
 * -0.3 / X = -0.6 = -38.4/64 -> -38 = 0xDA, decoding to -38/64 * 0.5 =
 * -0.296875.  0.001 / X * 64 = 0.128 -> 0. */
static void test_example_int8(void **state)
{
    (void)state;
    float v[3] = { 0.75f, -0.3f, 0.001f };
    unsigned char q[33];
    float back[3];
    assert_int_equal(mxp_mx_quantize(q, MXP_MXINT8, v, 3, NULL), MXP_OK);
    assert_int_equal(q[0], 126);
    assert_int_equal(q[1], 0x60);
    assert_int_equal(q[2], 0xDA);
    assert_int_equal(q[3], 0);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXINT8, 3), MXP_OK);
    assert_true(back[0] == 0.75f);
    assert_true(back[1] == -0.296875f);
    assert_true(back[2] == 0.0f);
}

/* ---- saturation ------------------------------------------------------------ */

/* Scaled values between the format's max and 2^(emax+1) clamp to max:
 * E4M3 [500, 470]: floor(log2 500) = 8, X = 1 -> 448 (0x7E) for both.
 * E5M2 [65000]: floor = 15, X = 1; 65000 > 61440 (the midpoint to 65536)
 * would be infinity without saturation -> 57344 (0x7B).
 * INT8 [1.999, -1.999]: X = 1, 127.936 rounds to 128 -> 127 = 0x7F;
 * the negative side stays symmetric: -127 = 0x81, never 0x80. */
static void test_saturation(void **state)
{
    (void)state;
    unsigned char q[33];
    float back[2];
    float a[2] = { 500.0f, -470.0f };
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E4M3, a, 2, NULL), MXP_OK);
    assert_int_equal(q[0], 127);
    assert_int_equal(q[1], 0x7E);
    assert_int_equal(q[2], 0xFE);
    float b[1] = { 65000.0f };
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E5M2, b, 1, NULL), MXP_OK);
    assert_int_equal(q[0], 127);
    assert_int_equal(q[1], 0x7B);
    float c[2] = { 1.999f, -1.999f };
    assert_int_equal(mxp_mx_quantize(q, MXP_MXINT8, c, 2, NULL), MXP_OK);
    assert_int_equal(q[0], 127);
    assert_int_equal(q[1], 0x7F);
    assert_int_equal(q[2], 0x81);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXINT8, 2), MXP_OK);
    assert_true(back[0] == 1.984375f && back[1] == -1.984375f);
    /* Every rounding mode saturates (no infinity, no wrap). */
    for (int r = 0; r < MXP_ROUNDING_COUNT; r++) {
        mxp_convert_opts o = { .rounding = (mxp_rounding)r, .seed = 7 };
        assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E5M2, b, 1, &o), MXP_OK);
        assert_int_equal(q[1], 0x7B);
        float d[1] = { 7.9f };
        assert_int_equal(mxp_mx_quantize(q, MXP_MXFP4_E2M1, d, 1, &o), MXP_OK);
        assert_int_equal(q[1], 7);
    }
    /* A consequence of the spec's rule: E4M3's max is 1.75 * 2^8, so a block
     * whose max is 240 = 1.875 * 2^7 gets X = 2^(7-8) and 480 clamps to 448. */
    float e[1] = { 240.0f };
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E4M3, e, 1, NULL), MXP_OK);
    assert_int_equal(q[0], 126);
    assert_int_equal(q[1], 0x7E);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E4M3, 1), MXP_OK);
    assert_true(back[0] == 224.0f);
}

/* ---- value tables ---------------------------------------------------------- */

static void test_value_tables(void **state)
{
    (void)state;
    unsigned char q[33];
    float back[32];
    /* FP4: all 16 codes with X = 1 (byte 127) and X = 2^-3 (byte 124). */
    static const float fp4[16] = { 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                   -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f };
    for (int s = 124; s <= 127; s += 3) {
        q[0] = (unsigned char)s;
        for (int i = 0; i < 16; i++)
            q[1 + i / 2] = (unsigned char)((i & 1) ? (q[1 + i / 2] & 0x0F) | (i << 4) : i);
        assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP4_E2M1, 16), MXP_OK);
        for (int i = 0; i < 16; i++)
            check_bits_equal(back[i], ldexpf(fp4[i], s - 127));
    }
    /* INT8, E4M3, E5M2: all 256 codes, X = 1 and X = 2^5. */
    for (int s = 127; s <= 132; s += 5) {
        for (int blk = 0; blk < 8; blk++) {
            q[0] = (unsigned char)s;
            for (int i = 0; i < 32; i++)
                q[1 + i] = (unsigned char)(blk * 32 + i);
            assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXINT8, 32), MXP_OK);
            for (int i = 0; i < 32; i++)
                assert_true(back[i] == ldexpf((float)(int8_t)(blk * 32 + i) / 64.0f, s - 127));
            assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E4M3, 32), MXP_OK);
            for (int i = 0; i < 32; i++) {
                float w = ldexpf(mxp_e4m3_to_f32((uint8_t)(blk * 32 + i)), s - 127);
                assert_true(isnan(w) ? isnan(back[i]) : memcmp(&w, &back[i], 4) == 0);
            }
            assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E5M2, 32), MXP_OK);
            for (int i = 0; i < 32; i++) {
                float w = ldexpf(mxp_e5m2_to_f32((uint8_t)(blk * 32 + i)), s - 127);
                assert_true(isnan(w) ? isnan(back[i]) : memcmp(&w, &back[i], 4) == 0);
            }
        }
    }
    /* The documented anchors. */
    q[0] = 127;
    q[1] = 0x80; q[2] = 0x7F; q[3] = 0x01; q[4] = 0xFF;
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXINT8, 4), MXP_OK);
    assert_true(back[0] == -2.0f && back[1] == 1.984375f && back[2] == 0.015625f && back[3] == -0.015625f);
    q[1] = 0x7E; q[2] = 0x7B;
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E4M3, 1), MXP_OK);
    assert_true(back[0] == 448.0f);
    assert_int_equal(mxp_mx_dequantize(back, q + 1, MXP_MXFP8_E5M2, 1), MXP_OK);
    assert_true(back[0] == 28672.0f); /* scale byte 0x7E = 2^-1, element 0x7B = 57344 */
}

/* ---- round trips ------------------------------------------------------------ */

/* A random block of codes whose largest magnitude has the format's top
 * exponent (so the quantizer picks the same X) re-encodes to the same bytes. */
static void test_round_trip_exact(void **state)
{
    (void)state;
    for (size_t fi = 0; fi < 4; fi++) {
        mxp_mx_format f = all_formats[fi];
        size_t nb = mxp_mx_bytes(f, 32);
        for (int trial = 0; trial < 2000; trial++) {
            unsigned char q[33], q2[33];
            float v[32];
            q[0] = (unsigned char)(100 + rng() % 50);
            for (size_t i = 1; i < nb; i++) {
                unsigned c = (unsigned)(rng() & 0xFF);
                if (f == MXP_MXFP8_E4M3 && (c & 0x7F) == 0x7F) c &= 0xFE;   /* NaN */
                if (f == MXP_MXFP8_E5M2 && (c & 0x7C) == 0x7C) c &= 0xFB;   /* inf/NaN */
                if (f == MXP_MXINT8 && c == 0x80) c = 0x81;                 /* -2 */
                q[i] = (unsigned char)c;
            }
            /* Element 0 at the top binade: E4M3 1.xxx * 2^8, E5M2 2^15,
             * FP4 4 or 6, INT8 |k| >= 64. */
            unsigned top = (unsigned)rng();
            switch (f) {
            case MXP_MXFP8_E4M3: q[1] = (unsigned char)(0x78 | (top & 0x80) | (top % 7)); break;
            case MXP_MXFP8_E5M2: q[1] = (unsigned char)(0x78 | (top & 0x80) | (top % 4)); break;
            case MXP_MXFP4_E2M1: q[1] = (unsigned char)((q[1] & 0xF0) | 6 | (top & 1) | (top & 8)); break;
            default: q[1] = (unsigned char)((top & 1) ? 64 + top % 64 : (unsigned)(-(int)(64 + top % 64)) & 0xFF); break;
            }
            assert_int_equal(mxp_mx_dequantize(v, q, f, 32), MXP_OK);
            assert_int_equal(mxp_mx_quantize(q2, f, v, 32, NULL), MXP_OK);
            /* INT8 has one zero; FP formats keep -0. */
            assert_memory_equal(q, q2, nb);
        }
    }
}

/* ---- zero, NaN, partial blocks, E8M0 range ---------------------------------- */

static void test_zero_block(void **state)
{
    (void)state;
    float v[32] = { 0 };
    v[5] = -0.0f;
    for (size_t fi = 0; fi < 4; fi++) {
        unsigned char q[33];
        float back[32];
        mxp_mx_format f = all_formats[fi];
        memset(q, 0xAA, sizeof q);
        assert_int_equal(mxp_mx_quantize(q, f, v, 32, NULL), MXP_OK);
        assert_int_equal(q[0], 0); /* X = 2^-127, the smallest scale */
        assert_int_equal(mxp_mx_dequantize(back, q, f, 32), MXP_OK);
        for (int i = 0; i < 32; i++)
            assert_true(back[i] == 0.0f);
        /* -0 keeps its sign in the float formats; INT8 has one zero. */
        assert_int_equal(signbit(back[5]) != 0, f != MXP_MXINT8);
    }
}

static void test_nan_policy(void **state)
{
    (void)state;
    for (size_t fi = 0; fi < 4; fi++) {
        mxp_mx_format f = all_formats[fi];
        size_t blk = mxp_mx_bytes(f, 32);
        float v[96];
        for (int i = 0; i < 96; i++)
            v[i] = (float)i / 8.0f;
        v[40] = NAN;      /* block 1 */
        v[70] = -INFINITY; /* block 2 */
        unsigned char q[99];
        float back[96];
        assert_int_equal(mxp_mx_quantize(q, f, v, 96, NULL), MXP_OK);
        assert_int_not_equal(q[0], 0xFF);
        assert_int_equal(q[blk], 0xFF);
        assert_int_equal(q[2 * blk], 0xFF);
        for (size_t i = 1; i < blk; i++)
            assert_int_equal(q[blk + i], 0);
        assert_int_equal(mxp_mx_dequantize(back, q, f, 96), MXP_OK);
        for (int i = 0; i < 32; i++)
            assert_false(isnan(back[i]));
        for (int i = 32; i < 96; i++)
            assert_true(isnan(back[i]));
    }
}

static void test_partial_block(void **state)
{
    (void)state;
    for (size_t fi = 0; fi < 4; fi++) {
        mxp_mx_format f = all_formats[fi];
        size_t per = f == MXP_MXFP4_E2M1 ? 17 : 33;
        assert_int_equal(mxp_mx_bytes(f, 40), 2 * per);
        assert_int_equal(mxp_mx_bytes(f, 1), per);
        float v[40], back[41];
        for (int i = 0; i < 40; i++)
            v[i] = (i % 2 ? -1.0f : 1.0f) * (float)(1 + i % 3);
        v[35] = 0.5f; /* the last block's max is 3 from v[32..39] */
        unsigned char q[66];
        memset(q, 0xAA, sizeof q);
        assert_int_equal(mxp_mx_quantize(q, f, v, 40, NULL), MXP_OK);
        /* Padding elements 40..63 are zero codes. */
        const unsigned char *last = q + per;
        if (f == MXP_MXFP4_E2M1) {
            for (size_t i = 8; i < 32; i++)
                assert_int_equal(fp4_code(last, i), 0);
        } else {
            for (size_t i = 8; i < 32; i++)
                assert_int_equal(last[1 + i], 0);
        }
        back[40] = 12345.0f;
        assert_int_equal(mxp_mx_dequantize(back, q, f, 40), MXP_OK);
        assert_true(back[40] == 12345.0f);
        /* Small integers and 0.5 are exact in every format at X <= 1. */
        for (int i = 0; i < 40; i++)
            assert_true(back[i] == v[i]);
    }
}

/* max |V| = 2^-140: floor(log2) - emax is below -127, clamped to -127
 * (byte 0).  E4M3: 2^-140 / 2^-127 = 2^-13 is below E4M3's smallest
 * subnormal 2^-9 -> 0.  max |V| = 2^-125 in E4M3: -133 -> -127, element
 * 2^2 = 4 exact.  max |V| = 2^120: E4M3 120 - 8 = 112 (byte 239), element
 * 2^8 -> 0x78; E5M2 105 (byte 232), FP4 118 (byte 245), INT8 120 (247).
 * FLT_MAX in E4M3: 127 - 8 = 119 (byte 246), FLT_MAX / 2^119 = 511.99...
 * -> 448.  A stored scale of 254 times 448 exceeds float32: infinity. */
static void test_e8m0_range(void **state)
{
    (void)state;
    unsigned char q[33];
    float back[1];
    float tiny[1] = { 0x1p-140f }, small[1] = { 0x1p-125f }, big[1] = { 0x1p120f }, top[1] = { FLT_MAX };
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E4M3, tiny, 1, NULL), MXP_OK);
    assert_int_equal(q[0], 0);
    assert_int_equal(q[1], 0);
    for (size_t fi = 0; fi < 4; fi++) {
        assert_int_equal(mxp_mx_quantize(q, all_formats[fi], tiny, 1, NULL), MXP_OK);
        assert_int_equal(q[0], 0);
    }
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E4M3, small, 1, NULL), MXP_OK);
    assert_int_equal(q[0], 0);
    assert_int_equal(q[1], 0x48);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E4M3, 1), MXP_OK);
    assert_true(back[0] == 0x1p-125f);
    const int want[4] = { 239, 232, 245, 247 };
    for (size_t fi = 0; fi < 4; fi++) {
        assert_int_equal(mxp_mx_quantize(q, all_formats[fi], big, 1, NULL), MXP_OK);
        assert_int_equal(q[0], want[fi]);
        assert_int_equal(mxp_mx_dequantize(back, q, all_formats[fi], 1), MXP_OK);
        assert_true(back[0] == 0x1p120f);
    }
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP8_E4M3, top, 1, NULL), MXP_OK);
    assert_int_equal(q[0], 246);
    assert_int_equal(q[1], 0x7E);
    q[0] = 254;
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP8_E4M3, 1), MXP_OK);
    assert_true(isinf(back[0]) && back[0] > 0);
}

/* ---- stochastic rounding -------------------------------------------------------- */

static void test_stochastic(void **state)
{
    (void)state;
    enum { NB = 2048, N = NB * 32 };
    float *v = malloc(N * sizeof *v), *back = malloc(N * sizeof *back);
    unsigned char *a = malloc(NB * 33), *b = malloc(NB * 33);
    assert_non_null(v); assert_non_null(back); assert_non_null(a); assert_non_null(b);
    for (size_t fi = 0; fi < 4; fi++) {
        mxp_mx_format f = all_formats[fi];
        size_t bytes = mxp_mx_bytes(f, N);
        /* Each block: its max, then 31 copies of x (between two grid values). */
        double maxv = f == MXP_MXFP4_E2M1 ? 6.0 : f == MXP_MXINT8 ? 1.5 : f == MXP_MXFP8_E4M3 ? 448.0 : 57344.0;
        double x = f == MXP_MXFP4_E2M1 ? 1.3 : f == MXP_MXINT8 ? 0.5 + 0.3 / 64 : f == MXP_MXFP8_E4M3 ? 1.3 : 1.3;
        for (size_t i = 0; i < N; i++)
            v[i] = (float)(i % 32 == 0 ? maxv : x);
        mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 42 };
        assert_int_equal(mxp_mx_quantize(a, f, v, N, &o), MXP_OK);
        assert_int_equal(mxp_mx_quantize(b, f, v, N, &o), MXP_OK);
        assert_memory_equal(a, b, bytes); /* same seed, same bits */
        /* Split in two calls with index_offset: the bits of one call. */
        size_t half = N / 2, hb = mxp_mx_bytes(f, half);
        mxp_convert_opts o2 = o;
        assert_int_equal(mxp_mx_quantize(b, f, v, half, &o), MXP_OK);
        o2.index_offset = half;
        assert_int_equal(mxp_mx_quantize(b + hb, f, v + half, half, &o2), MXP_OK);
        assert_memory_equal(a, b, bytes);
        o2 = o;
        o2.seed = 43;
        assert_int_equal(mxp_mx_quantize(b, f, v, N, &o2), MXP_OK);
        assert_memory_not_equal(a, b, bytes);
        /* Each result is a neighbour; the mean is x within 4 sigma. */
        mxp_convert_opts dn = { .rounding = MXP_ROUND_DOWN }, up = { .rounding = MXP_ROUND_UP };
        float lo, hi;
        unsigned char t[33];
        float pair[2] = { (float)maxv, (float)x };
        float tb[2];
        assert_int_equal(mxp_mx_quantize(t, f, pair, 2, &dn), MXP_OK);
        assert_int_equal(mxp_mx_dequantize(tb, t, f, 2), MXP_OK);
        lo = tb[1];
        assert_int_equal(mxp_mx_quantize(t, f, pair, 2, &up), MXP_OK);
        assert_int_equal(mxp_mx_dequantize(tb, t, f, 2), MXP_OK);
        hi = tb[1];
        assert_true(lo < (float)x && (float)x < hi);
        assert_int_equal(mxp_mx_dequantize(back, a, f, N), MXP_OK);
        double sum = 0;
        size_t cnt = 0;
        for (size_t i = 0; i < N; i++) {
            if (i % 32 == 0)
                continue;
            assert_true(back[i] == lo || back[i] == hi);
            sum += back[i];
            cnt++;
        }
        double p = ((double)(float)x - lo) / (hi - lo);
        double sigma = (hi - lo) * sqrt(p * (1 - p) / (double)cnt);
        assert_true(fabs(sum / (double)cnt - (double)(float)x) < 4 * sigma);
    }
    free(v); free(back); free(a); free(b);
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    float v[4] = { 1, 2, 3, 4 };
    unsigned char q[33];
    float back[4];
    assert_int_equal(mxp_mx_bytes((mxp_mx_format)0, 32), 0);
    assert_int_equal(mxp_mx_bytes((mxp_mx_format)8, 32), 0);
    assert_int_equal(mxp_mx_bytes(MXP_MXINT8, 0), 0);
    assert_int_equal(mxp_mx_bytes(MXP_MXINT8, SIZE_MAX), 0);
    mxp_clear_error();
    assert_int_equal(mxp_mx_quantize(NULL, MXP_MXINT8, v, 4, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_true(strlen(mxp_last_error()) > 0);
    assert_int_equal(mxp_mx_quantize(q, MXP_MXINT8, NULL, 4, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_mx_quantize(q, (mxp_mx_format)0, v, 4, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_mx_quantize(q, (mxp_mx_format)8, v, 4, NULL), MXP_ERR_INVALID_ARGUMENT);
    mxp_convert_opts bad = { .rounding = (mxp_rounding)99 };
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP4_E2M1, v, 4, &bad), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "rounding"));
    assert_int_equal(mxp_mx_dequantize(NULL, q, MXP_MXINT8, 4), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_mx_dequantize(back, NULL, MXP_MXINT8, 4), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_mx_dequantize(back, q, (mxp_mx_format)9, 4), MXP_ERR_INVALID_ARGUMENT);
    /* n == 0 accepts NULL. */
    assert_int_equal(mxp_mx_quantize(NULL, MXP_MXINT8, NULL, 0, NULL), MXP_OK);
    assert_int_equal(mxp_mx_dequantize(NULL, NULL, MXP_MXINT8, 0), MXP_OK);
    assert_string_equal(mxp_mx_format_name(MXP_MXFP4_E2M1), "mxfp4_e2m1");
    assert_string_equal(mxp_mx_format_name((mxp_mx_format)0), "invalid");
}

/* ---- the spec's reference algorithm, independently, in double ------------------ */

typedef struct ref_fmt { int ebits, mbits, bias, emax; double max; } ref_fmt;

/* Round a >= 0 to the minifloat grid, nearest even, saturating; return the
 * code (without sign). */
static unsigned ref_minifloat(double a, const ref_fmt *t)
{
    int emin = 1 - t->bias;
    if (a == 0.0)
        return 0;
    int e = (int)floor(log2(a));
    if (e < emin)
        e = emin;
    double ulp = ldexp(1.0, e - t->mbits);
    double qv = nearbyint(a / ulp) * ulp; /* default mode: ties to even */
    if (qv > t->max)
        qv = t->max;
    if (qv == 0.0)
        return 0;
    int qe = (int)floor(log2(qv));
    if (qe < emin)
        return (unsigned)(qv / ldexp(1.0, emin - t->mbits));
    unsigned mant = (unsigned)((qv / ldexp(1.0, qe) - 1.0) * (1 << t->mbits));
    return (unsigned)(qe + t->bias) << t->mbits | mant;
}

static void ref_quantize(unsigned char *out, mxp_mx_format f, const float *v, size_t m)
{
    static const ref_fmt e4m3 = { 4, 3, 7, 8, 448.0 }, e5m2 = { 5, 2, 15, 15, 57344.0 },
                         e2m1 = { 2, 1, 1, 2, 6.0 };
    const ref_fmt *t = f == MXP_MXFP8_E4M3 ? &e4m3 : f == MXP_MXFP8_E5M2 ? &e5m2 : &e2m1;
    int emax = f == MXP_MXINT8 ? 0 : t->emax;
    size_t eb = f == MXP_MXFP4_E2M1 ? 16 : 32;
    memset(out, 0, 1 + eb);
    double amax = 0;
    for (size_t i = 0; i < m; i++) {
        if (isnan(v[i]) || isinf(v[i])) {
            out[0] = 0xFF;
            return;
        }
        amax = fmax(amax, fabs((double)v[i]));
    }
    int se = amax == 0 ? -127 : (int)floor(log2(amax)) - emax;
    se = se < -127 ? -127 : se > 127 ? 127 : se;
    out[0] = (unsigned char)(se + 127);
    double x = ldexp(1.0, se);
    for (size_t i = 0; i < m; i++) {
        double p = (double)v[i] / x;
        unsigned c;
        if (f == MXP_MXINT8) {
            double k = nearbyint(p * 64.0);
            k = k > 127 ? 127 : k < -127 ? -127 : k;
            c = (unsigned)(int)k & 0xFF;
        } else {
            c = ref_minifloat(fabs(p), t) | (signbit(p) ? 1u << (t->ebits + t->mbits) : 0u);
        }
        if (f == MXP_MXFP4_E2M1)
            out[1 + i / 2] |= (unsigned char)((i & 1) ? c << 4 : c);
        else
            out[1 + i] = (unsigned char)c;
    }
}

static float random_value(int base)
{
    uint64_t r = rng();
    if (r % 17 == 0)
        return 0.0f;
    double mant = 1.0 + (double)(r >> 40) / (double)(1ull << 24);
    if (r % 3 == 0) /* few significant bits: exact ties in every format */
        mant = 1.0 + (double)((r >> 40) % 256) / 256.0;
    int e = base - (int)((r >> 8) % (r % 3 == 0 ? 8 : 24));
    return (float)((r & 1 ? -1 : 1) * ldexp(mant, e));
}

static void test_reference_random(void **state)
{
    (void)state;
    enum { NB = 4000 };
    float *v = malloc(NB * 32 * sizeof *v);
    unsigned char *got = malloc(NB * 33), want[33];
    assert_non_null(v);
    assert_non_null(got);
    for (size_t i = 0; i < NB; i++) {
        int base = (int)(rng() % 280) - 150; /* -150 .. 129 */
        if (base > 127) base = 127;
        for (size_t j = 0; j < 32; j++)
            v[i * 32 + j] = random_value(base);
        if (i % 50 == 0)
            v[i * 32 + 3] = FLT_MAX;
        if (i % 50 == 1)
            v[i * 32 + 3] = NAN;
    }
    for (size_t fi = 0; fi < 4; fi++) {
        mxp_mx_format f = all_formats[fi];
        size_t per = mxp_mx_bytes(f, 32);
        size_t n = NB * 32 - 7; /* and a partial last block */
        assert_int_equal(mxp_mx_quantize(got, f, v, n, NULL), MXP_OK);
        for (size_t b = 0; b < NB; b++) {
            size_t m = n - b * 32 < 32 ? n - b * 32 : 32;
            ref_quantize(want, f, v + b * 32, m);
            if (memcmp(want, got + b * per, per) != 0) {
                print_error("format %s block %zu differs\n", mxp_mx_format_name(f), b);
                assert_memory_equal(want, got + b * per, per);
            }
        }
    }
    free(v);
    free(got);
}

/* An n whose packed side fits size_t but whose float side (4n bytes) does
 * not was accepted and read past the buffers (issue 24 item 6). */
static void test_float_side_size_overflow_is_refused(void **state)
{
    (void)state;
    float f[32] = { 1.0f };
    unsigned char packed[64] = { 0 };
    const size_t n = SIZE_MAX / 4 + 1; /* 4n wraps; the MXFP4 packed side, about n / 2 bytes, does not */
    for (int k = 0; k < 4; k++) {
        mxp_mx_format fmt = all_formats[k];
        assert_int_equal(mxp_mx_quantize(packed, fmt, f, n, NULL), MXP_ERR_SIZE_OVERFLOW);
        assert_non_null(strstr(mxp_last_error(), "do not fit"));
        assert_int_equal(mxp_mx_dequantize(f, packed, fmt, n), MXP_ERR_SIZE_OVERFLOW);
    }
    assert_true(f[0] == 1.0f && packed[0] == 0);
}

/* MXFP6: the scale rule with emax 2 (E2M3) and 4 (E3M2), four codes in
 * three bytes (element i at bits [6i, 6i + 6)), every E2M3/E3M2 value of a
 * block back exactly, saturation. */
static void test_mxfp6_layout_and_values(void **state)
{
    (void)state;
    assert_int_equal(mxp_mx_bytes(MXP_MXFP6_E2M3, 32), 25);
    assert_int_equal(mxp_mx_bytes(MXP_MXFP6_E3M2, 33), 50);
    assert_string_equal(mxp_mx_format_name(MXP_MXFP6_E2M3), "mxfp6_e2m3");
    assert_string_equal(mxp_mx_format_name(MXP_NVFP4), "nvfp4");
    /* amax 7.5 = 1.875 * 2^2: E2M3's emax is 2, so X = 2^0 (0x7F) and the
     * elements are the values themselves */
    float v[32] = { 7.5f, 1.0f, -0.125f, 0.0f, 3.25f, -7.5f };
    unsigned char q[25];
    assert_int_equal(mxp_mx_quantize(q, MXP_MXFP6_E2M3, v, 32, NULL), MXP_OK);
    assert_int_equal(q[0], 127);
    /* codes: 7.5 = 0 11 111 = 0x1F, 1.0 = 0 01 000 = 0x08, -0.125 = 1 00 001 = 0x21, 0,
     * 3.25 = 0 10 101 = 0x15, -7.5 = 0x3F */
    const uint32_t g0 = 0x1Fu | 0x08u << 6 | 0x21u << 12 | 0x00u << 18, g1 = 0x15u | 0x3Fu << 6;
    assert_int_equal(q[1], g0 & 0xff);
    assert_int_equal(q[2], (g0 >> 8) & 0xff);
    assert_int_equal(q[3], g0 >> 16);
    assert_int_equal(q[4], g1 & 0xff);
    assert_int_equal(q[5], (g1 >> 8) & 0xff);
    float back[32];
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_MXFP6_E2M3, 32), MXP_OK);
    for (int i = 0; i < 32; i++)
        assert_true(back[i] == v[i]);
    /* E3M2: amax 28 * 2^-3 = 3.5 -> X = 2^(1 - 4) = 2^-3; 3.5 / 2^-3 = 28 the max */
    float w[32] = { 3.5f, -0.0078125f, 1.0f, 1.1f };
    unsigned char r[25];
    assert_int_equal(mxp_mx_quantize(r, MXP_MXFP6_E3M2, w, 32, NULL), MXP_OK);
    assert_int_equal(r[0], 127 - 3);
    assert_int_equal(mxp_mx_dequantize(back, r, MXP_MXFP6_E3M2, 32), MXP_OK);
    assert_true(back[0] == 3.5f && back[1] == -0.0078125f && back[2] == 1.0f);
    assert_true(back[3] == 1.0f); /* 1.1 / 2^-3 = 8.8 -> 8 (step 2 between 8 and 16) */
}

/* NVFP4 by NVIDIA's rule, computed by hand: amax 12 gives the tensor scale
 * g = 12 / 2688; the first block's max 12 -> s = e4m3(12 / 6 / g) = e4m3(448)
 * = 448, elements v / (448 g) = v / 2: 12 -> 6, 3 -> 1.5, -1 -> -0.5; the
 * second block's max 0.75 -> e4m3(28) = 28, elements v / (28 g) = v * 8:
 * 0.75 -> 6, 0.25 -> 2, 0.05 -> 0.4 -> 0.5. */
static void test_nvfp4_two_level_scales(void **state)
{
    (void)state;
    assert_int_equal(mxp_mx_bytes(MXP_NVFP4, 16), 4 + 9);
    assert_int_equal(mxp_mx_bytes(MXP_NVFP4, 17), 4 + 18);
    float v[32] = { 12.0f, 3.0f, -1.0f };
    v[16] = 0.75f, v[17] = 0.25f, v[18] = 0.05f;
    unsigned char q[4 + 18];
    assert_int_equal(mxp_mx_quantize(q, MXP_NVFP4, v, 32, NULL), MXP_OK);
    float g;
    memcpy(&g, q, 4);
    assert_true(g == (float)(12.0 / 2688.0));
    assert_int_equal(q[4], 0x7E);        /* e4m3 448 */
    assert_int_equal(q[5], 0x7 | 0x3 << 4); /* 6, 1.5 */
    assert_int_equal(q[6], 0x9);         /* -0.5 */
    assert_int_equal(q[4 + 9], 0x5E);    /* e4m3 28 = 1.75 * 2^4: 0 1011 110 */
    assert_int_equal(q[4 + 10], 0x7 | 0x4 << 4); /* 6, 2 */
    assert_int_equal(q[4 + 11], 0x1);    /* 0.5 */
    float back[32];
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_NVFP4, 32), MXP_OK);
    assert_true(back[0] == (float)(6.0 * 448.0 * (double)g) && back[2] == (float)(-0.5 * 448.0 * (double)g));
    assert_true(fabsf(back[0] - 12.0f) < 1e-5f && fabsf(back[16] - 0.75f) < 1e-5f && back[3] == 0.0f);
    /* a NaN: its block's scale is E4M3's NaN, its values NaN; the other block as before */
    v[5] = NAN;
    assert_int_equal(mxp_mx_quantize(q, MXP_NVFP4, v, 32, NULL), MXP_OK);
    assert_int_equal(q[4], 0x7F);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_NVFP4, 32), MXP_OK);
    assert_true(isnan(back[0]) && isnan(back[15]) && fabsf(back[16] - 0.75f) < 1e-5f);
    /* all zeros: g = 1, zero scales, zeros back */
    float z[16] = { 0 };
    assert_int_equal(mxp_mx_quantize(q, MXP_NVFP4, z, 16, NULL), MXP_OK);
    memcpy(&g, q, 4);
    assert_true(g == 1.0f && q[4] == 0);
    assert_int_equal(mxp_mx_dequantize(back, q, MXP_NVFP4, 16), MXP_OK);
    assert_true(back[0] == 0.0f && back[15] == 0.0f);
}

/* Random data through every new block format: the error is within half an
 * element step of the block's scale (float64 reference). */
static void test_new_blocks_error_bound(void **state)
{
    (void)state;
    enum { N = 4096 };
    static float v[N], back[N];
    static unsigned char q[N * 2];
    uint32_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)((double)(x >> 8) / (1 << 24) * 8.0 - 4.0) * (float)(1 + (i / 64) % 7);
    }
    const mxp_mx_format fs[] = { MXP_MXFP6_E2M3, MXP_MXFP6_E3M2, MXP_NVFP4 };
    for (int k = 0; k < 3; k++) {
        assert_int_equal(mxp_mx_quantize(q, fs[k], v, N, NULL), MXP_OK);
        assert_int_equal(mxp_mx_dequantize(back, q, fs[k], N), MXP_OK);
        const int bs = fs[k] == MXP_NVFP4 ? 16 : 32;
        /* relative to the block's max: E2M3 3 mantissa bits, E3M2 and FP4 (with
         * its E4M3 scale) 2 and 1; the bound a half step at the top binade */
        const double rel = fs[k] == MXP_MXFP6_E2M3 ? 1.0 / 16 : fs[k] == MXP_MXFP6_E3M2 ? 1.0 / 8 : 1.0 / 3;
        for (int b = 0; b < N; b += bs) {
            double amax = 0;
            for (int i = b; i < b + bs; i++)
                amax = fmax(amax, fabs((double)v[i]));
            for (int i = b; i < b + bs; i++)
                if (fabs((double)back[i] - (double)v[i]) > rel * amax + 1e-30)
                    fail_msg("%s element %d: %g back as %g (block max %g)", mxp_mx_format_name(fs[k]), i, v[i],
                             back[i], amax);
        }
    }
}

/* Random normal-ish floats in [-4, 4). */
static float rnd(void)
{
    return (float)((double)(rng() >> 11) * 0x1p-53 * 8.0 - 4.0);
}

/* mxp_mx_matmul equals mxp_gemm on the dequantized W, byte for byte, for
 * every format: one panel and several (k = 2048: 128 rows a panel), a
 * per-column bias, an activation, bfloat16 and float32 C, stochastic
 * rounding (one panel, the whole call's stream); refusals. */
static void test_mx_matmul_equals_gemm_on_the_decoded_weight(void **state)
{
    (void)state;
    const mxp_mx_format fmts[] = { MXP_MXFP8_E4M3, MXP_MXFP8_E5M2, MXP_MXFP4_E2M1, MXP_MXINT8,
                                   MXP_MXFP6_E2M3, MXP_MXFP6_E3M2, MXP_NVFP4 };
    const size_t shapes[][3] = { { 5, 64, 70 }, { 3, 2048, 300 } }; /* m, k, n */
    for (size_t si = 0; si < 2; si++) {
        const size_t m = shapes[si][0], k = shapes[si][1], n = shapes[si][2];
        float *a = malloc(m * k * sizeof *a), *w = malloc(n * k * sizeof *w), *wd = malloc(n * k * sizeof *wd);
        float *bias = malloc(n * sizeof *bias), *c1 = malloc(m * n * sizeof *c1), *c2 = malloc(m * n * sizeof *c2);
        assert_non_null(a && w && wd && bias && c1 && c2);
        for (size_t i = 0; i < m * k; i++)
            a[i] = rnd();
        for (size_t i = 0; i < n * k; i++)
            w[i] = rnd() * 0.25f;
        for (size_t j = 0; j < n; j++)
            bias[j] = rnd();
        for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
            const mxp_mx_format f = fmts[fi];
            void *q = malloc(mxp_mx_bytes(f, n * k));
            assert_int_equal(mxp_mx_quantize(q, f, w, n * k, NULL), MXP_OK);
            assert_int_equal(mxp_mx_dequantize(wd, q, f, n * k), MXP_OK);
            mxp_gemm_opts o = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL, .bias_len = n,
                                .activation = MXP_ACT_GELU };
            assert_int_equal(mxp_mx_matmul(c1, MXP_F32, n, a, MXP_F32, k, m, k, q, f, n, &o), MXP_OK);
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, m, n, k, 1.0, a, MXP_F32, k, wd, MXP_F32, k, 0.0, c2,
                                      MXP_F32, n, &o), MXP_OK);
            assert_memory_equal(c1, c2, m * n * sizeof *c1);
            /* bfloat16 C with stochastic rounding: the same stream as one call */
            o.convert.rounding = MXP_ROUND_STOCHASTIC;
            o.convert.seed = 5;
            assert_int_equal(mxp_mx_matmul(c1, MXP_BF16, n, a, MXP_F32, k, m, k, q, f, n, &o), MXP_OK);
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, m, n, k, 1.0, a, MXP_F32, k, wd, MXP_F32, k, 0.0, c2,
                                      MXP_BF16, n, &o), MXP_OK);
            assert_memory_equal(c1, c2, m * n * 2);
            free(q);
        }
        free(a), free(w), free(wd), free(bias), free(c1), free(c2);
    }
    /* refusals */
    float a[64] = { 0 }, c[4];
    unsigned char q[64] = { 0 };
    assert_int_equal(mxp_mx_matmul(c, MXP_F32, 1, a, MXP_F32, 48, 1, 48, q, MXP_MXFP4_E2M1, 1, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "k = 48 is not a multiple of mxfp4_e2m1's block of 32"));
    assert_int_equal(mxp_mx_matmul(c, MXP_F32, 1, a, MXP_F32, 16, 1, 16, q, MXP_NVFP4, 1, NULL), MXP_OK);
    assert_int_equal(mxp_mx_matmul(c, MXP_F32, 1, a, MXP_F32, 32, 1, 32, q, (mxp_mx_format)99, 1, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_mx_matmul(c, MXP_F32, 1, a, MXP_F32, 32, 1, 32, NULL, MXP_MXFP8_E4M3, 1, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_mx_matmul(c, MXP_F32, 1, a, MXP_F32, 16, 1, 32, q, MXP_MXFP8_E4M3, 1, NULL),
                     MXP_ERR_INVALID_ARGUMENT); /* lda 16 < k 32 */
    mxp_gemm_opts o = { .bias = a, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL, .bias_len = 1 };
    assert_int_equal(mxp_mx_matmul(c, MXP_F32, 2, a, MXP_F32, 32, 1, 32, q, MXP_MXFP8_E4M3, 2, &o),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "the bias holds 1 values, C has 2 columns"));
    assert_int_equal(mxp_mx_matmul(c, MXP_F32, 1, a, MXP_F32, 32, 0, 32, q, MXP_MXFP8_E4M3, 1, NULL), MXP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_fp4),
        cmocka_unit_test(test_mxfp6_layout_and_values),
        cmocka_unit_test(test_nvfp4_two_level_scales),
        cmocka_unit_test(test_new_blocks_error_bound),
        cmocka_unit_test(test_example_fp4_rounding),
        cmocka_unit_test(test_example_e4m3),
        cmocka_unit_test(test_example_e5m2),
        cmocka_unit_test(test_example_int8),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_value_tables),
        cmocka_unit_test(test_round_trip_exact),
        cmocka_unit_test(test_zero_block),
        cmocka_unit_test(test_nan_policy),
        cmocka_unit_test(test_partial_block),
        cmocka_unit_test(test_e8m0_range),
        cmocka_unit_test(test_stochastic),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_float_side_size_overflow_is_refused),
        cmocka_unit_test(test_reference_random),
        cmocka_unit_test(test_mx_matmul_equals_gemm_on_the_decoded_weight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
