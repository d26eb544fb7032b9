/* The AMX tiles as the AMX micro-kernels use them (bf16-gemm/amx.c,
 * u8s8-gemm/amx.c): one configuration for all, eight tiles of 16 rows x
 * 64 bytes, loaded by a thread's first kernel call and kept until the
 * kernel's release (MXP_GEMM_UKERNEL_RELEASE in the lists), which the GEMM
 * driver calls on that thread at the end of its share of a KC step.
 * Nothing but mxp's own code runs on the thread in between, so no other
 * library can configure the tiles otherwise meanwhile; loading the
 * configuration on every call cost a fifth of a 512^3 bf16 product.
 * Include only from files built for the amx level. */
#ifndef MXP_KERNELS_AMX_TILES_H
#define MXP_KERNELS_AMX_TILES_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

/* Whether this thread's tiles hold the configuration (src/core/cpu.c). */
extern _Thread_local bool mxp_amx_tiles_configured;

static inline void mxp_amx_tiles_configure(void)
{
    if (mxp_amx_tiles_configured)
        return;
    struct {
        uint8_t palette, start_row;
        uint8_t reserved[14];
        uint16_t colsb[16];
        uint8_t rows[16];
    } cfg = { .palette = 1 };
    for (int t = 0; t < 8; t++)
        cfg.colsb[t] = 64, cfg.rows[t] = 16;
    _tile_loadconfig(&cfg);
    mxp_amx_tiles_configured = true;
}

/* The tiles' state back to its initial one: nothing for the OS to save on
 * a switch, and free for other code on the thread. */
static inline void mxp_amx_tiles_release(void)
{
    if (mxp_amx_tiles_configured) {
        _tile_release();
        mxp_amx_tiles_configured = false;
    }
}

/* GCC's tile intrinsics are asm statements that name only the address: it
 * does not know they read or write the memory there.  A local buffer
 * written for a tile load, or read after a tile store, needs this between
 * (without it, GCC dropped the copies into a kernel's edge buffer). */
static inline __attribute__((always_inline)) void mxp_amx_tile_memory_barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

#endif
