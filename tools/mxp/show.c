/* mxp show — a .npy file's array as NumPy prints it (print(np.load(f)),
 * np.array2string with its defaults: line width 75, a summary with "..."
 * beyond 1000 elements), through the library's mxp_array_fprint
 * (src/array/print.c, print-format.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { MAX_PRECISION = 40, MAX_EDGEITEMS = 1000 };

static void print_help(void)
{
    printf("usage: mxp show FILE.npy [--precision P] [--edgeitems E]\n\n"
           "Prints the array in FILE.npy as NumPy prints it (print(np.load(FILE)), i.e.\n"
           "np.array2string with its defaults: lines of at most 75 characters; over 1000\n"
           "elements, a summary of the first and last E along each axis with '...').\n"
           "Floats show the fewest digits that read back as the same value of the\n"
           "array's dtype, at most P after the point, in scientific notation when a\n"
           "nonzero |x| is >= 1e8 or < 1e-4 or their ratio is over 1000.\n\n"
           "  --precision P   digits after the point at most (default 8; 0..%d)\n"
           "  --edgeitems E   elements shown at each end of a summarised axis (default 3)\n\n"
           "bfloat16 and float8 print like the float dtypes NumPy has, with the digits\n"
           "their own precision needs (NumPy itself prints them through ml_dtypes).\n",
           MAX_PRECISION);
}

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return cli_usage_error("show", "%s wants %d..%d, not '%s'", opt, lo, hi, v);
    *out = (int)x;
    return CLI_OK;
}

static int show(const mxp_array *a, int precision, int edge)
{
    const mxp_print_opts o = { .precision = precision ? precision : MXP_PRINT_PRECISION_NONE, .edgeitems = edge };
    const mxp_status st = mxp_array_fprint(stdout, a, &o);
    return st == MXP_OK ? CLI_OK : cli_mxp_error("show", "formatting", st);
}

int cli_show(int argc, char **argv)
{
    const char *path = NULL, *v;
    int precision = 8, edge = 3, rc = CLI_OK;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        int m;
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        } else if ((m = cli_option(argc, argv, &i, "--precision", &v)) != 0) {
            rc = m < 0 ? cli_usage_error("show", "--precision needs a value")
                       : parse_int("--precision", v, 0, MAX_PRECISION, &precision);
        } else if ((m = cli_option(argc, argv, &i, "--edgeitems", &v)) != 0) {
            rc = m < 0 ? cli_usage_error("show", "--edgeitems needs a value")
                       : parse_int("--edgeitems", v, 1, MAX_EDGEITEMS, &edge);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            rc = cli_bad_argument("show", argv[i]);
        } else if (path) {
            rc = cli_usage_error("show", "more than one FILE ('%s' and '%s')", path, argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (rc == CLI_OK && !path)
        rc = cli_usage_error("show", "missing FILE.npy");
    mxp_array *a = NULL;
    if (rc == CLI_OK && (rc = cli_load_npy("show", path, &a)) == CLI_OK)
        rc = show(a, precision, edge);
    mxp_array_free(a);
    return rc;
}
