/* Internal: the microarchitecture, for choosing between kernels that give
 * the same bits (src/convert/convert-config.c). */
#ifndef MXP_CORE_CPU_INTERNAL_H
#define MXP_CORE_CPU_INTERNAL_H

typedef enum mxp_uarch {
    MXP_UARCH_OTHER = 0,
    MXP_UARCH_ZEN4,  /* AMD family 0x19 with AVX-512: 512-bit ops as two 256-bit halves */
    MXP_UARCH_ZEN5,  /* AMD family 0x1a */
    MXP_UARCH_INTEL,
    MXP_UARCH_COUNT
} mxp_uarch;

mxp_uarch mxp_cpu_uarch_id(void);
const char *mxp_uarch_name(mxp_uarch u);

#endif
