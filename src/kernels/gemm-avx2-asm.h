/* The six-row k loop of the AVX2 GEMM micro-kernels (f32 6 x 16, f64 6 x 8)
 * in GCC inline assembly, one text for both: twelve accumulators, two B
 * vectors and two broadcast registers are exactly the 16 ymm registers,
 * and GCC 12 spilled two sums per turn of the intrinsics' loop.  Each turn
 * runs four k steps; each element keeps its chain of fused multiply-adds
 * (acc += a * b in k order), the intrinsics' bits.  B~ advances 64 bytes a
 * step (16 floats or 8 doubles) and is fetched 8 steps ahead; A~ advances
 * 6 elements of ES bytes.  Operands: pa, pb, turns (k steps / 4, >= 1) and
 * the accumulators acc0[6] (B's first vector) and acc1[6].
 *
 *   __asm__ volatile(MXP_AVX2_6ROW_LOOP("vmovups", "vbroadcastss", "vfmadd231ps", 4)
 *                    : MXP_AVX2_6ROW_OPERANDS(acc0, acc1) : : MXP_AVX2_6ROW_CLOBBERS);
 *
 * MXP_AVX2_6ROW_LOOP_A is the same loop with A read where it is stored:
 * rows lda bytes apart, k contiguous, rows 0-2 from r8 = pa and 3-5 from
 * r9 = pa + 3 lda (base + index * 1 or 2 addressing), both advancing 4
 * elements a turn.  pa and lda are inputs (an asm takes at most 30
 * operands, each "+" one counting twice); pb and turns advance as above:
 *
 *   __asm__ volatile(MXP_AVX2_6ROW_LOOP_A(...)
 *                    : MXP_AVX2_6ROW_OPERANDS_A(acc0, acc1) : [pa] "r"(pa), [lda] "r"(lda_bytes)
 *                    : MXP_AVX2_6ROW_CLOBBERS_A); */
#ifndef MXP_KERNELS_GEMM_AVX2_ASM_H
#define MXP_KERNELS_GEMM_AVX2_ASM_H

/* two multiply-adds of row I (its broadcast in ymm R) with B's two vectors */
#define MXP_AVX2_6ROW_FMA2(FMA, I, R) \
    FMA " %%ymm0, %%ymm" #R ", %[c" #I "0]\n\t" FMA " %%ymm1, %%ymm" #R ", %[c" #I "1]\n\t"

/* row I of step Q, A~ packed [k][6]: broadcast A~[Q][I] into ymm R */
#define MXP_AVX2_6ROW_ROW(BC, FMA, ES, Q, I, R) \
    BC " (" #ES "*(6*" #Q "+" #I "))(%[pa]), %%ymm" #R "\n\t" MXP_AVX2_6ROW_FMA2(FMA, I, R)

/* row I of step Q, A in place: element Q of the row at ADDR */
#define MXP_AVX2_6ROW_ROW_A(BC, FMA, ES, Q, I, ADDR, R) \
    BC " (" #ES "*" #Q ")" ADDR ", %%ymm" #R "\n\t" MXP_AVX2_6ROW_FMA2(FMA, I, R)

#define MXP_AVX2_6ROW_LOAD_B(LD, Q) LD " (64*" #Q ")(%[pb]), %%ymm0\n\t" LD " (64*" #Q "+32)(%[pb]), %%ymm1\n\t"

#define MXP_AVX2_6ROW_STEP(LD, BC, FMA, ES, Q)                                                      \
    MXP_AVX2_6ROW_LOAD_B(LD, Q)                                                                     \
    MXP_AVX2_6ROW_ROW(BC, FMA, ES, Q, 0, 2) MXP_AVX2_6ROW_ROW(BC, FMA, ES, Q, 1, 3)                \
    MXP_AVX2_6ROW_ROW(BC, FMA, ES, Q, 2, 2) MXP_AVX2_6ROW_ROW(BC, FMA, ES, Q, 3, 3)                \
    MXP_AVX2_6ROW_ROW(BC, FMA, ES, Q, 4, 2) MXP_AVX2_6ROW_ROW(BC, FMA, ES, Q, 5, 3)

/* one k step with row I of A at address A<I> (element Q of the row there) */
#define MXP_AVX2_6ROW_STEP_AT(LD, BC, FMA, ES, Q, A0, A1, A2, A3, A4, A5)                          \
    MXP_AVX2_6ROW_LOAD_B(LD, Q)                                                                     \
    MXP_AVX2_6ROW_ROW_A(BC, FMA, ES, Q, 0, A0, 2) MXP_AVX2_6ROW_ROW_A(BC, FMA, ES, Q, 1, A1, 3)      \
    MXP_AVX2_6ROW_ROW_A(BC, FMA, ES, Q, 2, A2, 2) MXP_AVX2_6ROW_ROW_A(BC, FMA, ES, Q, 3, A3, 3)      \
    MXP_AVX2_6ROW_ROW_A(BC, FMA, ES, Q, 4, A4, 2) MXP_AVX2_6ROW_ROW_A(BC, FMA, ES, Q, 5, A5, 3)

#define MXP_AVX2_6ROW_STEP_A(LD, BC, FMA, ES, Q)                                                    \
    MXP_AVX2_6ROW_STEP_AT(LD, BC, FMA, ES, Q, "(%%r8)", "(%%r8,%[lda],1)", "(%%r8,%[lda],2)", "(%%r9)", \
                          "(%%r9,%[lda],1)", "(%%r9,%[lda],2)")

/* four k steps a turn (STEP), B~ fetched 8 steps ahead, A advanced by ADVANCE_A */
#define MXP_AVX2_6ROW_TURNS(STEP, LD, BC, FMA, ES, ADVANCE_A)                                       \
    "1:\n\t"                                                                                        \
    "prefetcht0 512(%[pb])\n\t"                                                                     \
    "prefetcht0 576(%[pb])\n\t"                                                                     \
    STEP(LD, BC, FMA, ES, 0) STEP(LD, BC, FMA, ES, 1) STEP(LD, BC, FMA, ES, 2)                      \
    STEP(LD, BC, FMA, ES, 3)                                                                        \
    ADVANCE_A                                                                                       \
    "add $256, %[pb]\n\t"                                                                           \
    "dec %[turns]\n\t"                                                                              \
    "jnz 1b\n\t"

#define MXP_AVX2_6ROW_LOOP(LD, BC, FMA, ES) \
    MXP_AVX2_6ROW_TURNS(MXP_AVX2_6ROW_STEP, LD, BC, FMA, ES, "add $(24*" #ES "), %[pa]\n\t")

#define MXP_AVX2_6ROW_LOOP_A(LD, BC, FMA, ES)                                                        \
    "mov %[pa], %%r8\n\t"                                                                            \
    "lea (%[pa],%[lda],2), %%r9\n\t"                                                                 \
    "add %[lda], %%r9\n\t"                                                                           \
    MXP_AVX2_6ROW_TURNS(MXP_AVX2_6ROW_STEP_A, LD, BC, FMA, ES,                                      \
                        "add $(4*" #ES "), %%r8\n\tadd $(4*" #ES "), %%r9\n\t")

/* MXP_AVX2_6ROW_LOOP_R: the same loop with each row through its own
 * pointer, rows[0..5] (an input: six pointers in memory) loaded into r8 ..
 * r13, each advancing 4 elements a turn (a convolution's taps: the rows
 * are pixels of x, src/nn/conv-taps.c):
 *
 *   __asm__ volatile(MXP_AVX2_6ROW_LOOP_R(...)
 *                    : MXP_AVX2_6ROW_OPERANDS_A(acc0, acc1) : [rows] "r"(rows)
 *                    : MXP_AVX2_6ROW_CLOBBERS_R); */
#define MXP_AVX2_6ROW_STEP_R(LD, BC, FMA, ES, Q) \
    MXP_AVX2_6ROW_STEP_AT(LD, BC, FMA, ES, Q, "(%%r8)", "(%%r9)", "(%%r10)", "(%%r11)", "(%%r12)", "(%%r13)")

#define MXP_AVX2_6ROW_LOOP_R(LD, BC, FMA, ES)                                                        \
    "mov (%[rows]), %%r8\n\tmov 8(%[rows]), %%r9\n\tmov 16(%[rows]), %%r10\n\t"                     \
    "mov 24(%[rows]), %%r11\n\tmov 32(%[rows]), %%r12\n\tmov 40(%[rows]), %%r13\n\t"                \
    MXP_AVX2_6ROW_TURNS(MXP_AVX2_6ROW_STEP_R, LD, BC, FMA, ES,                                      \
                        "add $(4*" #ES "), %%r8\n\tadd $(4*" #ES "), %%r9\n\tadd $(4*" #ES "), %%r10\n\t" \
                        "add $(4*" #ES "), %%r11\n\tadd $(4*" #ES "), %%r12\n\tadd $(4*" #ES "), %%r13\n\t")

#define MXP_AVX2_6ROW_ACCS(acc0, acc1)                                                              \
    [c00] "+x"(acc0[0]), [c01] "+x"(acc1[0]), [c10] "+x"(acc0[1]), [c11] "+x"(acc1[1]),             \
        [c20] "+x"(acc0[2]), [c21] "+x"(acc1[2]), [c30] "+x"(acc0[3]), [c31] "+x"(acc1[3]),         \
        [c40] "+x"(acc0[4]), [c41] "+x"(acc1[4]), [c50] "+x"(acc0[5]), [c51] "+x"(acc1[5])

#define MXP_AVX2_6ROW_OPERANDS(acc0, acc1) \
    [pa] "+r"(pa), [pb] "+r"(pb), [turns] "+r"(turns), MXP_AVX2_6ROW_ACCS(acc0, acc1)

#define MXP_AVX2_6ROW_OPERANDS_A(acc0, acc1) [pb] "+r"(pb), [turns] "+r"(turns), MXP_AVX2_6ROW_ACCS(acc0, acc1)

#define MXP_AVX2_6ROW_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "memory", "cc"
#define MXP_AVX2_6ROW_CLOBBERS_A MXP_AVX2_6ROW_CLOBBERS, "r8", "r9"
#define MXP_AVX2_6ROW_CLOBBERS_R MXP_AVX2_6ROW_CLOBBERS_A, "r10", "r11", "r12", "r13"

#endif
