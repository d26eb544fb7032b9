/* Float32 Winograd F(2x2, 3x3) transforms, avx2: 8 lanes a step (body.h).  See
 * winograd-kernels.h. */
#define WINO_LANES 8
#define WINO_FN mxp_f32_wino__avx2
#include "kernels/f32-winograd/body.h"
