/* Float32 Winograd F(2x2, 3x3) transforms, portable: the twin of the others (body.h).  See
 * winograd-kernels.h. */
#define WINO_LANES 1
#define WINO_FN mxp_f32_wino__scalar
#include "kernels/f32-winograd/body.h"
