/* The names of the GEMM's option values (mxp_activation_name,
 * mxp_overflow_strategy_name): the one table of each, for messages, the
 * CLI and the Python package's keywords. */
#include "mxp/gemm.h"

const char *mxp_activation_name(mxp_activation a)
{
    static const char *const names[] = { "none", "relu", "gelu", "gelu_tanh", "silu" };
    return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "invalid";
}

const char *mxp_overflow_strategy_name(mxp_overflow_strategy s)
{
    static const char *const names[] = { "none", "refuse", "clip", "scale", "promote" };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "invalid";
}
