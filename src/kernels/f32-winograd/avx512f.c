/* Float32 Winograd F(2x2, 3x3) transforms, avx512f: 16 lanes a step (body.h).  See
 * winograd-kernels.h. */
#define WINO_LANES 16
#define WINO_FN mxp_f32_wino__avx512f
#include "kernels/f32-winograd/body.h"
