/* The transforms of winograd-kernels.h on WINO_LANES lanes a step (GCC
 * vector types: the ISA of the file that includes this), the last n mod
 * WINO_LANES lanes one at a time by the same operations.  Included by
 * scalar.c, avx2.c and avx512f.c after defining WINO_LANES and WINO_FN. */
#include <string.h>

#include "kernels/winograd-kernels.h"

typedef float wino_v __attribute__((vector_size(WINO_LANES * sizeof(float))));

static inline wino_v wino_load(const float *p)
{
    wino_v v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void wino_store(float *p, wino_v v)
{
    memcpy(p, &v, sizeof v);
}

/* G g G^T of the lanes at l (width: a vector, or one lane) */
#define WINO_W_STEP(T, LOAD, STORE)                                                                                   \
    do {                                                                                                              \
        T g[9], a[4][3];                                                                                              \
        for (int t = 0; t < 9; t++)                                                                                   \
            g[t] = LOAD(p->src + (size_t)t * p->src_ld + l);                                                          \
        for (int q = 0; q < 3; q++) {                                                                                 \
            const T s = g[q] + g[6 + q];                                                                              \
            a[0][q] = g[q];                                                                                           \
            a[1][q] = (s + g[3 + q]) * half;                                                                          \
            a[2][q] = (s - g[3 + q]) * half;                                                                          \
            a[3][q] = g[6 + q];                                                                                       \
        }                                                                                                             \
        for (int i = 0; i < 4; i++) {                                                                                 \
            const T s = a[i][0] + a[i][2];                                                                            \
            STORE(p->dst + (size_t)(4 * i) * p->dst_ld + l, a[i][0]);                                                 \
            STORE(p->dst + (size_t)(4 * i + 1) * p->dst_ld + l, (s + a[i][1]) * half);                                \
            STORE(p->dst + (size_t)(4 * i + 2) * p->dst_ld + l, (s - a[i][1]) * half);                                \
            STORE(p->dst + (size_t)(4 * i + 3) * p->dst_ld + l, a[i][2]);                                             \
        }                                                                                                             \
    } while (0)

/* B^T d B */
#define WINO_IN_STEP(T, LOAD, STORE)                                                                                  \
    do {                                                                                                              \
        T t[4][4];                                                                                                    \
        for (int r = 0; r < 4; r++) {                                                                                 \
            const float *s = p->src + (size_t)r * p->src_ld + l;                                                      \
            const T d0 = LOAD(s), d1 = LOAD(s + p->src_px), d2 = LOAD(s + 2 * p->src_px);                            \
            const T d3 = LOAD(s + 3 * p->src_px);                                                                     \
            t[r][0] = d0 - d2;                                                                                        \
            t[r][1] = d1 + d2;                                                                                        \
            t[r][2] = d2 - d1;                                                                                        \
            t[r][3] = d1 - d3;                                                                                        \
        }                                                                                                             \
        for (int j = 0; j < 4; j++) {                                                                                 \
            STORE(p->dst + (size_t)j * p->dst_ld + l, t[0][j] - t[2][j]);                                             \
            STORE(p->dst + (size_t)(4 + j) * p->dst_ld + l, t[1][j] + t[2][j]);                                       \
            STORE(p->dst + (size_t)(8 + j) * p->dst_ld + l, t[2][j] - t[1][j]);                                       \
            STORE(p->dst + (size_t)(12 + j) * p->dst_ld + l, t[1][j] - t[3][j]);                                      \
        }                                                                                                             \
    } while (0)

/* A^T m A, the rows x cols outputs inside the image stored */
#define WINO_OUT_STEP(T, LOAD, STORE)                                                                                 \
    do {                                                                                                              \
        T s[2][4];                                                                                                    \
        for (int j = 0; j < 4; j++) {                                                                                 \
            const T m0 = LOAD(p->src + (size_t)j * p->src_ld + l);                                                    \
            const T m1 = LOAD(p->src + (size_t)(4 + j) * p->src_ld + l);                                              \
            const T m2 = LOAD(p->src + (size_t)(8 + j) * p->src_ld + l);                                              \
            const T m3 = LOAD(p->src + (size_t)(12 + j) * p->src_ld + l);                                             \
            s[0][j] = (m0 + m1) + m2;                                                                                 \
            s[1][j] = (m1 - m2) - m3;                                                                                 \
        }                                                                                                             \
        for (int i = 0; i < p->rows; i++) {                                                                           \
            float *y = p->dst + (size_t)i * p->dst_ld + l;                                                            \
            STORE(y, (s[i][0] + s[i][1]) + s[i][2]);                                                                  \
            if (p->cols > 1)                                                                                          \
                STORE(y + p->dst_px, (s[i][1] - s[i][2]) - s[i][3]);                                                  \
        }                                                                                                             \
    } while (0)

#define WINO_LOAD1(q) (*(q))
#define WINO_STORE1(q, v) (*(q) = (v))

void WINO_FN(const mxp_f32_wino_params *p)
{
    const size_t n = p->n, body = n / WINO_LANES * WINO_LANES;
    const float half = 0.5f;
    switch (p->kind) {
    case MXP_WINO_W:
        for (size_t l = 0; l < body; l += WINO_LANES)
            WINO_W_STEP(wino_v, wino_load, wino_store);
        for (size_t l = body; l < n; l++)
            WINO_W_STEP(float, WINO_LOAD1, WINO_STORE1);
        break;
    case MXP_WINO_IN:
        for (size_t l = 0; l < body; l += WINO_LANES)
            WINO_IN_STEP(wino_v, wino_load, wino_store);
        for (size_t l = body; l < n; l++)
            WINO_IN_STEP(float, WINO_LOAD1, WINO_STORE1);
        break;
    default:
        for (size_t l = 0; l < body; l += WINO_LANES)
            WINO_OUT_STEP(wino_v, wino_load, wino_store);
        for (size_t l = body; l < n; l++)
            WINO_OUT_STEP(float, WINO_LOAD1, WINO_STORE1);
        break;
    }
}
