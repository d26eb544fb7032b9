/* mxp — CPU features and the ISA level used by optimized kernels. */
#ifndef MXP_CPU_H
#define MXP_CPU_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel levels, each including the ones before it. */
typedef enum mxp_isa {
    MXP_ISA_SCALAR = 0,  /* portable reference code */
    MXP_ISA_AVX2,        /* AVX2 + FMA + F16C */
    MXP_ISA_AVX512,      /* AVX-512 F/BW/VL/DQ (+ F16C) */
    MXP_ISA_AVX512BF16,  /* + AVX512_BF16 and AVX512_VNNI */
    MXP_ISA_AMX,         /* + AMX-TILE, AMX-BF16, AMX-INT8, with the OS's leave to use the tiles */
    MXP_ISA_COUNT
} mxp_isa;

/* Feature bits (CPUID and OS support via XCR0 both checked). */
#define MXP_CPU_SSE2        (1ull << 0)
#define MXP_CPU_AVX         (1ull << 1)
#define MXP_CPU_AVX2        (1ull << 2)
#define MXP_CPU_FMA         (1ull << 3)
#define MXP_CPU_F16C        (1ull << 4)
#define MXP_CPU_AVX512F     (1ull << 5)
#define MXP_CPU_AVX512BW    (1ull << 6)
#define MXP_CPU_AVX512VL    (1ull << 7)
#define MXP_CPU_AVX512DQ    (1ull << 8)
#define MXP_CPU_AVX512BF16  (1ull << 9)
#define MXP_CPU_AVX512VNNI  (1ull << 10)
#define MXP_CPU_AVX512FP16  (1ull << 11)
#define MXP_CPU_AVXVNNI     (1ull << 12)
#define MXP_CPU_AVX512VBMI  (1ull << 13) /* beyond the ISA levels: byte permutes (vpermb, vpermi2b) */
#define MXP_CPU_AMX_TILE    (1ull << 14) /* the tile registers (CPUID, XCR0 and, on Linux, the */
#define MXP_CPU_AMX_BF16    (1ull << 15) /*   process's permission, asked for once at start) */
#define MXP_CPU_AMX_INT8    (1ull << 16)

MXP_API uint64_t mxp_cpu_features(void);
/* Names of the detected features, space separated: "sse2 avx avx2 ...". */
MXP_API const char *mxp_cpu_features_string(void);
/* Model string from CPUID ("AMD EPYC 9R14 ..."), "" where unknown. */
MXP_API const char *mxp_cpu_brand(void);
/* Bytes of one instance of the level-3 cache (the cache a CCX's or a
 * die's cores share) as CPUID's cache leaves describe it (leaf 4, AMD's
 * 0x8000001D), 0 where unknown (off x86, no such leaf); it sets the
 * streaming-store threshold (mxp_stream_threshold, mxp/alloc.h). */
MXP_API size_t mxp_cpu_l3_bytes(void);
/* CPUID's vendor ("AuthenticAMD", "GenuineIntel"; "" off x86), display
 * family and model (0 off x86), and the microarchitecture mxp recognises
 * from them: "zen4" (AMD family 0x19 with AVX-512), "zen5" (AMD family
 * 0x1a), "intel", or "other".  Where two kernels give the same bits, the
 * conversion dispatch picks by it (docs/conversions.md). */
MXP_API const char *mxp_cpu_vendor(void);
MXP_API unsigned mxp_cpu_family(void);
MXP_API unsigned mxp_cpu_model(void);
MXP_API const char *mxp_cpu_uarch(void);

/* The highest level this machine supports. */
MXP_API mxp_isa mxp_isa_supported(void);
/* The level kernels use now: min(supported, MXP_ISA env, mxp_set_isa). */
MXP_API mxp_isa mxp_get_isa(void);
/* The old name of mxp_get_isa, kept as an alias. */
MXP_API mxp_isa mxp_isa_current(void);
/* Caps the level for this process (tests use it to run every level).
 * A level above the supported one is capped to it. */
MXP_API mxp_status mxp_set_isa(mxp_isa level);
MXP_API const char *mxp_isa_name(mxp_isa level); /* "scalar", "avx2", "avx512", "avx512bf16", "amx" */
MXP_API mxp_isa mxp_isa_from_name(const char *name); /* any case; MXP_ISA_COUNT if unknown */

/* The peak rate of the multiply-add instructions the GEMM kernels are built
 * on, measured: the ceiling a GEMM's "% of peak" is held against (`mxp
 * bench peak`, the tour).  Each op has an in-register loop per ISA level
 * that has the instruction: 12 independent accumulator chains, no loads. */
typedef enum mxp_peak_op {
    MXP_PEAK_F32_FMA = 0, /* float32 vfmadd (256-bit at avx2, 512-bit from avx512): GFLOPS,
                             a multiply-add counting 2 */
    MXP_PEAK_F64_FMA,     /* float64 vfmadd: GFLOPS */
    MXP_PEAK_BF16_DOT,    /* vdpbf16ps (the avx512bf16 level): GFLOPS */
    MXP_PEAK_U8S8_DOT,    /* vpdpbusd (the avx512bf16 level): GOPS, integer operations */
    MXP_PEAK_OP_COUNT
} mxp_peak_op;

/* "f32_fma", "f64_fma", "bf16_dot", "u8s8_dot"; "invalid" for other values. */
MXP_API const char *mxp_peak_op_name(mxp_peak_op op);
/* The loop op runs at the current ISA level, by its function's name
 * ("mxp_f32_peak_fma__avx512f"); NULL where the level has none (the scalar
 * level; bf16_dot and u8s8_dot below avx512bf16) or op is invalid. */
MXP_API const char *mxp_peak_kernel_name(mxp_peak_op op);
/* Runs that loop on the calling thread: a warm-up, then the best of reps
 * runs of ~10 ms (the best, not the median: interference only ever slows a
 * run), in billions of operations per second; 0 where mxp_peak_kernel_name
 * is NULL or reps < 1. */
MXP_API double mxp_peak_gflops(mxp_peak_op op, int reps);

#ifdef __cplusplus
}
#endif
#endif
