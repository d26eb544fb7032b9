/* The packing, GEMV, requantization and finish kernels of GEMM for an ISA
 * level: each list (src/kernels/pack-list.inc, gemv-list.inc,
 * requant-list.inc, f32-finish-list.inc)
 * expanded into one table of its lines, most capable first, and the first
 * line of a kind at or below the level.  With config.c, the only place in
 * GEMM that looks at ISA levels. */
#include "gemm/gemm-internal.h"

enum kind {
    X32_TRANSPOSE, X64_TRANSPOSE, X16_TRANSPOSE, BF16_PACK_B, BF16_SCAN, S8_PACK_QUADS, S8_PACK_PAIRS, U8_PACK_PAIRS6,
    S8_SUM_LINES, S8_SCAN, F32_GEMV, F64_GEMV, S16S8_GEMV, S32_REQUANT, S32_DEQUANT_F32, S32_DEQUANT_BIAS_F32,
    S32_REQUANT_F64, F32_FINISH, F32_FINISH_BIAS
};

typedef struct line {
    enum kind kind;
    mxp_isa isa;
    unsigned arg; /* the transposes' least line count; the dequantization kernels' modes */
    union {
        mxp_x32_transpose_fn x32_transpose;
        mxp_x64_transpose_fn x64_transpose;
        mxp_x16_transpose_fn x16_transpose;
        mxp_bf16_pack_b_fn bf16_pack_b;
        mxp_bf16_scan_fn bf16_scan;
        mxp_s8_pack_quads_fn s8_pack_quads;
        mxp_s8_pack_pairs_fn s8_pack_pairs;
        mxp_u8_pack_pairs6_fn u8_pack_pairs6;
        mxp_s8_sum_lines_fn s8_sum_lines;
        mxp_s8_scan_fn s8_scan;
        mxp_f32_gemv_fn f32_gemv;
        mxp_f64_gemv_fn f64_gemv;
        mxp_s16s8_gemv_fn s16s8_gemv;
        mxp_s32_requant_fn s32_requant;
        mxp_s32_dequant_f32_fn s32_dequant_f32;
        mxp_s32_dequant_bias_f32_fn s32_dequant_bias_f32;
        mxp_s32_requant_f64_fn s32_requant_f64;
        mxp_f32_finish_fn f32_finish;
        mxp_f32_finish_bias_fn f32_finish_bias;
    } fn;
} line;

static const line lines[] = {
#define MXP_X32_TRANSPOSE(f, isa, min_lines, twin) { X32_TRANSPOSE, isa, min_lines, { .x32_transpose = f } },
#define MXP_X64_TRANSPOSE(f, isa, min_lines, twin) { X64_TRANSPOSE, isa, min_lines, { .x64_transpose = f } },
#define MXP_X16_TRANSPOSE(f, isa, min_lines, twin) { X16_TRANSPOSE, isa, min_lines, { .x16_transpose = f } },
#define MXP_BF16_PACK_B(f, isa, twin) { BF16_PACK_B, isa, 0, { .bf16_pack_b = f } },
#define MXP_BF16_SCAN(f, isa, twin) { BF16_SCAN, isa, 0, { .bf16_scan = f } },
#define MXP_S8_PACK_QUADS(f, isa, twin) { S8_PACK_QUADS, isa, 0, { .s8_pack_quads = f } },
#define MXP_S8_PACK_PAIRS(f, isa, twin) { S8_PACK_PAIRS, isa, 0, { .s8_pack_pairs = f } },
#define MXP_U8_PACK_PAIRS6(f, isa, twin) { U8_PACK_PAIRS6, isa, 0, { .u8_pack_pairs6 = f } },
#define MXP_S8_SUM_LINES(f, isa, twin) { S8_SUM_LINES, isa, 0, { .s8_sum_lines = f } },
#define MXP_S8_SCAN(f, isa, twin) { S8_SCAN, isa, 0, { .s8_scan = f } },
#include "kernels/pack-list.inc"
#undef MXP_X32_TRANSPOSE
#undef MXP_X64_TRANSPOSE
#undef MXP_X16_TRANSPOSE
#undef MXP_BF16_PACK_B
#undef MXP_BF16_SCAN
#undef MXP_S8_PACK_QUADS
#undef MXP_S8_PACK_PAIRS
#undef MXP_U8_PACK_PAIRS6
#undef MXP_S8_SUM_LINES
#undef MXP_S8_SCAN
#define MXP_F32_GEMV(f, isa, twin) { F32_GEMV, isa, 0, { .f32_gemv = f } },
#define MXP_F64_GEMV(f, isa, twin) { F64_GEMV, isa, 0, { .f64_gemv = f } },
#define MXP_S16S8_GEMV(f, isa, twin) { S16S8_GEMV, isa, 0, { .s16s8_gemv = f } },
#include "kernels/gemv-list.inc"
#undef MXP_F32_GEMV
#undef MXP_F64_GEMV
#undef MXP_S16S8_GEMV
#define MXP_S32_REQUANT(f, isa, twin) { S32_REQUANT, isa, 0, { .s32_requant = f } },
#define MXP_S32_DEQUANT_F32(f, isa, modes, twin) { S32_DEQUANT_F32, isa, modes, { .s32_dequant_f32 = f } },
#define MXP_S32_DEQUANT_BIAS_F32(f, isa, modes, twin)                                                              \
    { S32_DEQUANT_BIAS_F32, isa, modes, { .s32_dequant_bias_f32 = f } },
#define MXP_S32_REQUANT_F64(f, isa, twin) { S32_REQUANT_F64, isa, 0, { .s32_requant_f64 = f } },
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
#undef MXP_S32_REQUANT_F64
#define MXP_F32_FINISH(f, isa, twin) { F32_FINISH, isa, 0, { .f32_finish = f } },
#define MXP_F32_FINISH_BIAS(f, isa, twin) { F32_FINISH_BIAS, isa, 0, { .f32_finish_bias = f } },
#include "kernels/f32-finish-list.inc"
#undef MXP_F32_FINISH
#undef MXP_F32_FINISH_BIAS
};

/* The first line of the kind at or below isa whose arg passes, or NULL. */
static const line *first(enum kind kind, mxp_isa isa, bool (*passes)(unsigned arg, size_t want), size_t want)
{
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (lines[i].kind == kind && lines[i].isa <= isa && (!passes || passes(lines[i].arg, want)))
            return &lines[i];
    return NULL;
}

static bool enough_lines(unsigned min_lines, size_t lines_wanted)
{
    return lines_wanted >= min_lines;
}

static bool has_mode(unsigned modes, size_t mode)
{
    return (modes >> mode) & 1u;
}

mxp_x32_transpose_fn mxp_x32_transpose_kernel(mxp_isa isa, size_t lines_wanted)
{
    return first(X32_TRANSPOSE, isa, enough_lines, lines_wanted)->fn.x32_transpose;
}

mxp_x64_transpose_fn mxp_x64_transpose_kernel(mxp_isa isa, size_t lines_wanted)
{
    return first(X64_TRANSPOSE, isa, enough_lines, lines_wanted)->fn.x64_transpose;
}

mxp_x16_transpose_fn mxp_x16_transpose_kernel(mxp_isa isa, size_t lines_wanted)
{
    return first(X16_TRANSPOSE, isa, enough_lines, lines_wanted)->fn.x16_transpose;
}

mxp_bf16_pack_b_fn mxp_bf16_pack_b_kernel(mxp_isa isa)
{
    return first(BF16_PACK_B, isa, NULL, 0)->fn.bf16_pack_b;
}

mxp_bf16_scan_fn mxp_bf16_scan_kernel(mxp_isa isa)
{
    return first(BF16_SCAN, isa, NULL, 0)->fn.bf16_scan;
}

mxp_s8_pack_quads_fn mxp_s8_pack_quads_kernel(mxp_isa isa)
{
    return first(S8_PACK_QUADS, isa, NULL, 0)->fn.s8_pack_quads;
}

mxp_s8_pack_pairs_fn mxp_s8_pack_pairs_kernel(mxp_isa isa)
{
    return first(S8_PACK_PAIRS, isa, NULL, 0)->fn.s8_pack_pairs;
}

mxp_u8_pack_pairs6_fn mxp_u8_pack_pairs6_kernel(mxp_isa isa)
{
    return first(U8_PACK_PAIRS6, isa, NULL, 0)->fn.u8_pack_pairs6;
}

mxp_s8_sum_lines_fn mxp_s8_sum_lines_kernel(mxp_isa isa)
{
    return first(S8_SUM_LINES, isa, NULL, 0)->fn.s8_sum_lines;
}

mxp_s8_scan_fn mxp_s8_scan_kernel(mxp_isa isa)
{
    return first(S8_SCAN, isa, NULL, 0)->fn.s8_scan;
}

mxp_s32_requant_fn mxp_s32_requant_kernel(mxp_isa isa)
{
    return first(S32_REQUANT, isa, NULL, 0)->fn.s32_requant;
}

mxp_s32_requant_f64_fn mxp_s32_requant_f64_kernel(mxp_isa isa)
{
    return first(S32_REQUANT_F64, isa, NULL, 0)->fn.s32_requant_f64;
}

mxp_f32_gemv_fn mxp_f32_gemv_kernel(mxp_isa isa)
{
    const line *l = first(F32_GEMV, isa, NULL, 0);
    return l ? l->fn.f32_gemv : NULL;
}

mxp_f64_gemv_fn mxp_f64_gemv_kernel(mxp_isa isa)
{
    const line *l = first(F64_GEMV, isa, NULL, 0);
    return l ? l->fn.f64_gemv : NULL;
}

mxp_s16s8_gemv_fn mxp_s16s8_gemv_kernel(mxp_isa isa)
{
    const line *l = first(S16S8_GEMV, isa, NULL, 0);
    return l ? l->fn.s16s8_gemv : NULL;
}

mxp_s32_dequant_f32_fn mxp_s32_dequant_f32_kernel(mxp_isa isa, mxp_rounding mode)
{
    const line *l = first(S32_DEQUANT_F32, isa, has_mode, (size_t)mode);
    return l ? l->fn.s32_dequant_f32 : NULL;
}

mxp_s32_dequant_bias_f32_fn mxp_s32_dequant_bias_f32_kernel(mxp_isa isa, mxp_rounding mode)
{
    const line *l = first(S32_DEQUANT_BIAS_F32, isa, has_mode, (size_t)mode);
    return l ? l->fn.s32_dequant_bias_f32 : NULL;
}

mxp_f32_finish_fn mxp_f32_finish_kernel(mxp_isa isa)
{
    const line *l = first(F32_FINISH, isa, NULL, 0);
    return l ? l->fn.f32_finish : NULL;
}

mxp_f32_finish_bias_fn mxp_f32_finish_bias_kernel(mxp_isa isa)
{
    const line *l = first(F32_FINISH_BIAS, isa, NULL, 0);
    return l ? l->fn.f32_finish_bias : NULL;
}
