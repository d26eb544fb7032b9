/* mxp cast on a safetensors file: every floating-point tensor converted to
 * the target dtype (one rounding each, the file's order giving stochastic
 * rounding one stream across the file), every other tensor and the
 * metadata kept, the result written by mxp_safetensors_cast: a chunk at a
 * time from the mapping (memory bounded whatever the file's size), atomic. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cli_cast_safetensors(const char *in, const char *out, mxp_dtype to, mxp_convert_opts opts)
{
    mxp_safetensors *st = NULL;
    mxp_convert_flags flags = { 0 };
    opts.flags = &flags;
    cli_progress_begin("cast");
    cli_progress_set("opening", -1);
    mxp_status s = mxp_safetensors_open(&st, in);
    size_t converted = 0;
    uint64_t elements = 0;
    if (s == MXP_OK) {
        cli_progress_set("converting and writing", -1);
        s = mxp_safetensors_cast(out, st, to, &opts, &converted, &elements);
    }
    cli_progress_end();
    int rc = CLI_OK;
    if (s != MXP_OK) {
        rc = cli_mxp_error("cast", NULL, s);
    } else {
        const size_t n = mxp_safetensors_count(st);
        printf("%s: %zu tensors, %zu floating-point converted to %s (%llu elements), %zu kept -> %s, rounding %s",
               in, n, converted, mxp_dtype_name(to), (unsigned long long)elements, n - converted, out,
               mxp_rounding_name(opts.rounding));
        if (opts.rounding == MXP_ROUND_STOCHASTIC)
            printf(" (seed %llu)", (unsigned long long)opts.seed);
        printf(", overflow %s: inexact %llu, overflow %llu, underflow %llu, invalid %llu\n",
               mxp_overflow_name(opts.overflow), (unsigned long long)flags.inexact,
               (unsigned long long)flags.overflow, (unsigned long long)flags.underflow,
               (unsigned long long)flags.invalid);
    }
    mxp_safetensors_close(st);
    return rc;
}
