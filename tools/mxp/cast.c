/* mxp cast — a .npy file converted to another dtype: mxp_npy_load,
 * mxp_array_astype with the rounding options, mxp_npy_save; a safetensors
 * file's floating-point tensors (cast_safetensors.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cast_args {
    const char *in, *out;
    mxp_dtype to;
    mxp_convert_opts opts;
    int scale; /* safetensors: CLI_SCALE_NONE, _TENSOR or _CHANNEL */
} cast_args;

static void print_help(void)
{
    printf("usage: mxp cast IN.npy OUT.npy --to TYPE [--rounding MODE]\n"
           "                [--overflow inf|saturate] [--seed N]\n"
           "       mxp cast IN.safetensors OUT.safetensors --to TYPE [...]\n"
           "                [--scale per-tensor|per-channel]\n\n"
           "Converts every element of IN.npy to TYPE with mxp_array_astype and writes\n"
           "OUT.npy (C order).  bfloat16 and float8 are written as one-field structured\n"
           "arrays that NumPy reads without mxp (docs/npy.md).  Prints one line: what\n"
           "was converted and the flags counted (inexact, overflow, underflow, invalid).\n"
           "OUT.npy is replaced atomically (written to a temporary file beside it, then\n"
           "renamed), so OUT may be IN, and a failed write leaves OUT as it was; a device\n"
           "or FIFO (such as /dev/null) is written in place.\n\n"
           "  --to TYPE         any dtype name: float32, f32, bf16, half, e4m3, int8, u8 ...\n"
           "  --rounding MODE   nearest_even (default), nearest_away, toward_zero, up, down,\n"
           "                    stochastic (aliases: rne, rtz, ceil, floor, sr ...)\n"
           "  --overflow MODE   inf (default: the IEEE result) or saturate (clamp to max)\n"
           "  --seed N          seed for stochastic rounding (default 0)\n\n"
           "A safetensors file (IN ending in .safetensors; docs/safetensors.md): every\n"
           "floating-point tensor is converted to TYPE (stochastic rounding draws one\n"
           "stream across the file's tensors in their order), integer and bool tensors,\n"
           "tensors of dtypes mxp lacks (C64) and the metadata are kept, and OUT is\n"
           "written as the safetensors library writes it, atomically, a chunk at a\n"
           "time: memory stays at about 6 MiB whatever the file's size (TYPE: a float\n"
           "dtype safetensors has a code for).\n\n"
           "  --scale per-tensor|per-channel   (safetensors, TYPE float8/6/4) the 2-d float\n"
           "                    tensors scaled into TYPE's range first: NAME holds the codes,\n"
           "                    NAME_scale (F32 [1] or [rows, 1]) amax / TYPE's max, w ~ code\n"
           "                    * scale (compressed-tensors' FP8 layout); other float tensors\n"
           "                    are kept as they are, the whole output held in memory.\n\n"
           "On a terminal, a cast that takes over a second shows its progress on stderr.\n");
}

static int ends_with(const char *s, const char *tail);

static int parse_args(cast_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m, rc;
        if (cli_is_help(argv[i])) {
            print_help();
            return -1;
        }
        if (!strncmp(argv[i], "--", 2)) {
            if ((m = cli_option(argc, argv, &i, "--to", &v)) > 0) {
                if ((a->to = mxp_dtype_from_name(v)) == MXP_DTYPE_INVALID)
                    return cli_usage_error("cast", "unknown dtype '%s'", v);
            } else if (m < 0) {
                return cli_usage_error("cast", "option '--to' needs a value");
            } else if ((m = cli_option(argc, argv, &i, "--scale", &v)) > 0) {
                if (!strcmp(v, "per-tensor"))
                    a->scale = CLI_SCALE_TENSOR;
                else if (!strcmp(v, "per-channel"))
                    a->scale = CLI_SCALE_CHANNEL;
                else
                    return cli_usage_error("cast", "--scale %s: use per-tensor or per-channel", v);
            } else if (m < 0) {
                return cli_usage_error("cast", "option '--scale' needs a value");
            } else if ((rc = cli_convert_option("cast", argc, argv, &i, &a->opts)) != CLI_OK) {
                return rc > 0 ? rc : cli_bad_argument("cast", argv[i]);
            }
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_bad_argument("cast", argv[i]);
        } else if (!a->in) {
            a->in = argv[i];
        } else if (!a->out) {
            a->out = argv[i];
        } else {
            return cli_usage_error("cast", "more than two files ('%s')", argv[i]);
        }
    }
    if (!a->out)
        return cli_usage_error("cast", "missing %s", a->in ? "OUT.npy" : "IN.npy and OUT.npy");
    if (a->to == MXP_DTYPE_INVALID)
        return cli_usage_error("cast", "missing --to TYPE");
    if (a->scale) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits(a->to);
        if (!ends_with(a->in, ".safetensors"))
            return cli_usage_error("cast", "--scale is for safetensors files (an .npy file has no place for the scale)");
        if (t->kind != MXP_KIND_FLOAT || t->bits > 8 || a->to == MXP_E8M0)
            return cli_usage_error("cast", "--scale needs a float8, float6 or float4 --to, not %s",
                                   mxp_dtype_name(a->to));
    }
    return CLI_OK;
}

/* y = x as a->to, in slices of CHUNK elements in C order: the progress line
 * moves between them, and index_offset gives stochastic rounding the bits
 * of one whole call, so the result is mxp_array_astype's. */
static mxp_status convert(mxp_array **y, const mxp_array *x, cast_args *a)
{
    enum { CHUNK = 1 << 22 };
    mxp_array *c = NULL;
    mxp_status st = mxp_array_ascontiguous(&c, x, 'C');
    if (st == MXP_OK)
        st = mxp_array_empty(y, a->to, mxp_array_ndim(x), mxp_array_shape(x));
    const uint64_t n = (uint64_t)mxp_array_size(x);
    const size_t sx = mxp_array_itemsize(x), sy = mxp_dtype_itemsize(a->to);
    for (uint64_t i = 0; st == MXP_OK && i < n; i += CHUNK) {
        cli_progress_set("converting", (double)i / (double)n);
        const size_t count = n - i < CHUNK ? (size_t)(n - i) : CHUNK;
        mxp_convert_opts opts = a->opts;
        opts.index_offset = a->opts.index_offset + i;
        st = mxp_convert((char *)mxp_array_data(*y) + i * sy, a->to, (const char *)mxp_array_data(c) + i * sx,
                         mxp_array_dtype(x), count, &opts);
    }
    mxp_array_free(c);
    return st;
}

static void print_summary(const cast_args *a, const mxp_array *x, const mxp_convert_flags *flags)
{
    char shape[800];
    printf("%s %s %s -> %s %s, rounding %s", a->in, cli_shape(shape, sizeof shape, x),
           mxp_dtype_name(mxp_array_dtype(x)), a->out, mxp_dtype_name(a->to), mxp_rounding_name(a->opts.rounding));
    if (a->opts.rounding == MXP_ROUND_STOCHASTIC)
        printf(" (seed %llu)", (unsigned long long)a->opts.seed);
    printf(", overflow %s: %lld elements, inexact %llu, overflow %llu, underflow %llu, invalid %llu\n",
           mxp_overflow_name(a->opts.overflow), (long long)mxp_array_size(x), (unsigned long long)flags->inexact,
           (unsigned long long)flags->overflow, (unsigned long long)flags->underflow,
           (unsigned long long)flags->invalid);
}

static int ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

static int cast(cast_args *a)
{
    if (ends_with(a->in, ".safetensors"))
        return cli_cast_safetensors(a->in, a->out, a->to, a->opts, a->scale);
    mxp_convert_flags flags = { 0 };
    mxp_array *x = NULL, *y = NULL;
    a->opts.flags = &flags;
    cli_progress_begin("cast");
    cli_progress_set("loading", -1);
    int rc = cli_load_npy("cast", a->in, &x);
    mxp_status st = rc == CLI_OK ? convert(&y, x, a) : MXP_OK;
    if (rc == CLI_OK && st == MXP_OK) {
        cli_progress_set("writing", -1);
        st = mxp_npy_save(a->out, y);
    }
    cli_progress_end();
    if (st != MXP_OK)
        rc = cli_mxp_error("cast", NULL, st);
    else if (rc == CLI_OK)
        print_summary(a, x, &flags);
    mxp_array_free(y);
    mxp_array_free(x);
    return rc;
}

int cli_cast(int argc, char **argv)
{
    cast_args a = { 0 };
    int rc = parse_args(&a, argc, argv);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    return cast(&a);
}
