/* mxp — mixed-precision numerics.  The umbrella header: include this one. */
#ifndef MXP_H
#define MXP_H

#include "mxp/common.h"
#include "mxp/dtype.h"
#include "mxp/convert.h"
#include "mxp/cpu.h"
#include "mxp/alloc.h"
#include "mxp/array.h"
#include "mxp/io.h"
#include "mxp/safetensors.h"
#include "mxp/ops.h"
#include "mxp/gemm.h"
#include "mxp/nn.h"
#include "mxp/threads.h"
#include "mxp/analysis.h"
#include "mxp/mx.h"
#include "mxp/quant.h"
#include "mxp/train.h"
#include "mxp/plugin.h"
#include "mxp/profile.h"

#endif
