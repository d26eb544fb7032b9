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
#include <string.h>

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

/* Tiles 0-3 (rows 0-15 / 16-31 by columns 0-15 / 16-31) from or to a 32 x
 * 32 block of 4-byte sums, rows `stride` bytes apart. */
static inline __attribute__((always_inline)) void mxp_amx_load_sums(const void *p, size_t stride)
{
    const char *b = p;
    _tile_loadd(0, b, stride);
    _tile_loadd(1, b + 64, stride);
    _tile_loadd(2, b + 16 * stride, stride);
    _tile_loadd(3, b + 16 * stride + 64, stride);
}

static inline __attribute__((always_inline)) void mxp_amx_store_sums(void *p, size_t stride)
{
    char *b = p;
    _tile_stored(0, b, stride);
    _tile_stored(1, b + 64, stride);
    _tile_stored(2, b + 16 * stride, stride);
    _tile_stored(3, b + 16 * stride + 64, stride);
}

/* The products' instruction of mxp_amx_2x2: bfloat16 pairs (tdpbf16ps,
 * 32 values of k a tile) or uint8 x int8 quads (tdpbusd, 64). */
typedef enum mxp_amx_dot { MXP_AMX_BF16, MXP_AMX_U8S8 } mxp_amx_dot;

#define MXP_AMX_DOT(dot, c, a, b)                                                                                  \
    do {                                                                                                           \
        if ((dot) == MXP_AMX_BF16)                                                                                 \
            _tile_dpbf16ps(c, a, b);                                                                               \
        else                                                                                                       \
            _tile_dpbusd(c, a, b);                                                                                 \
    } while (0)

/* The 2 x 2 tiles' k loop, over `chunks` tile-widths of k (64 bytes of
 * each row): tiles 0-3 (the sums of rows 0-15 / 16-31 by columns 0-15 /
 * 16-31) += A times B~.  A's rows are a_row bytes apart and its chunks
 * a_step bytes apart (a packed A~ [k/chunk][32][chunk]: 64 and 2048; A in
 * place: its row stride and 64); B~ is 16 rows of 128 bytes (32 columns of
 * a pair or quad) per chunk, columns 16-31 in each row's second half.  An
 * A of fewer than 32 rows in place (a block's last tile) goes through
 * `edge`, zero below mr, a chunk at a time: rows past mr are never read. */
static inline __attribute__((always_inline)) void mxp_amx_2x2(mxp_amx_dot dot, size_t mr, size_t chunks,
                                                              const uint8_t *pa, size_t a_row, size_t a_step,
                                                              bool in_place, const uint8_t *pb)
{
    uint8_t edge[32][64] __attribute__((aligned(64)));
    const bool copy = mr < 32 && in_place;
    if (copy)
        memset(edge[mr], 0, (32 - mr) * 64);
    for (size_t q = 0; q < chunks; q++, pa += a_step, pb += 16 * 128) {
        const uint8_t *t = pa;
        size_t stride = a_row;
        if (copy) {
            for (size_t i = 0; i < mr; i++)
                memcpy(edge[i], pa + i * a_row, 64);
            t = &edge[0][0], stride = 64;
            mxp_amx_tile_memory_barrier();
        }
        _tile_loadd(4, t, stride); /* the order lets each product start as soon as its tiles are in */
        _tile_loadd(6, pb, 128);
        MXP_AMX_DOT(dot, 0, 4, 6);
        _tile_loadd(7, pb + 64, 128);
        MXP_AMX_DOT(dot, 1, 4, 7);
        _tile_loadd(5, t + 16 * stride, stride);
        MXP_AMX_DOT(dot, 2, 5, 6);
        MXP_AMX_DOT(dot, 3, 5, 7);
    }
}

#endif
