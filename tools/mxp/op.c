/* mxp op list and mxp check op: operator plugins from the command line
 * (docs/plugins.md).  Plugins come from --plugin PATH (repeatable) and the
 * colon-separated MXP_PLUGINS variable, which only the command reads (the
 * library loads nothing by itself). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Loads MXP_PLUGINS' libraries; CLI_OK or CLI_FAILED (message printed). */
static int load_env_plugins(const char *cmd)
{
    const char *env = getenv("MXP_PLUGINS");
    if (!env || !*env)
        return CLI_OK;
    char *list = strdup(env);
    if (!list)
        return cli_mxp_error(cmd, "MXP_PLUGINS", MXP_ERR_NO_MEMORY);
    int rc = CLI_OK;
    for (char *save = NULL, *p = strtok_r(list, ":", &save); p && rc == CLI_OK; p = strtok_r(NULL, ":", &save)) {
        mxp_status st = mxp_ops_load(p, NULL);
        if (st != MXP_OK)
            rc = cli_mxp_error(cmd, "MXP_PLUGINS", st);
    }
    free(list);
    return rc;
}

/* --plugin PATH at argv[*i]: 1 (loaded), 0 (another argument), or the
 * negated exit code. */
static int plugin_option(const char *cmd, int argc, char **argv, int *i)
{
    const char *path;
    int m = cli_option(argc, argv, i, "--plugin", &path);
    if (m < 0)
        return -cli_usage_error(cmd, "--plugin needs a path");
    if (m == 0)
        return 0;
    mxp_status st = mxp_ops_load(path, NULL);
    return st == MXP_OK ? 1 : -cli_mxp_error(cmd, NULL, st);
}

static void list_usage(FILE *f)
{
    fprintf(f, "usage: mxp op list [--plugin PATH]... [--json]\n\n"
               "The operators of the plugins loaded (--plugin, and MXP_PLUGINS=PATH:PATH...):\n"
               "name, kind, inputs, kernel signatures with their ISA levels, reference.\n");
}

static int op_list(int argc, char **argv)
{
    bool json = false;
    int rc = load_env_plugins("op list");
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        if (cli_is_help(argv[i]))
            return list_usage(stdout), CLI_OK;
        int m = plugin_option("op list", argc, argv, &i);
        if (m < 0)
            return -m;
        if (m == 0 && !strcmp(argv[i], "--json"))
            json = true;
        else if (m == 0)
            return cli_bad_argument("op list", argv[i]);
    }
    if (rc != CLI_OK)
        return rc;
    const int n = mxp_op_count();
    if (json) {
        cli_json_begin("op list");
        cli_json_array("operators");
    } else if (n == 0) {
        printf("no operators loaded (mxp op list --plugin PATH, or MXP_PLUGINS=PATH)\n");
    }
    for (int i = 0; i < n; i++) {
        mxp_op_info info = { 0 };
        mxp_op_info_at(i, &info);
        if (json) {
            cli_json_object(NULL);
            cli_json_str("name", info.name);
            cli_json_str("kind", mxp_op_kind_name(info.kind));
            cli_json_int("inputs", info.n_inputs);
            cli_json_bool("reference", info.has_reference);
            cli_json_str("library", info.library);
            cli_json_str("doc", info.doc);
            cli_json_array("kernels");
        } else {
            printf("%-20s %-11s %d input%s  %s\n", info.name, mxp_op_kind_name(info.kind), info.n_inputs,
                   info.n_inputs == 1 ? " " : "s", info.has_reference ? "float64 reference" : "no reference");
            if (info.doc[0])
                printf("    %s\n", info.doc);
        }
        for (int k = 0; k < info.n_kernels; k++) {
            const char *sig;
            mxp_isa isa;
            mxp_op_kernel_at(info.name, k, &sig, NULL, NULL, &isa);
            if (json) {
                cli_json_object(NULL);
                cli_json_str("signature", sig);
                cli_json_str("isa", mxp_isa_name(isa));
                cli_json_close();
            } else {
                printf("    %-34s %s\n", sig, mxp_isa_name(isa));
            }
        }
        if (json)
            cli_json_close(), cli_json_close();
        else
            printf("    from %s\n", info.library);
    }
    if (json)
        cli_json_end();
    return CLI_OK;
}

static void check_usage(FILE *f)
{
    fprintf(f, "usage: mxp check op NAME [--plugin PATH]... [--ref FUNCTION] [--signature SIG]\n"
               "                    [--samples N] [--seed N] [--json]\n\n"
               "Compares each kernel signature of operator NAME with a reference: the plugin's\n"
               "float64 one, or --ref, a built-in elementwise function (gelu, gelu_tanh, exp,\n"
               "add ...).  Inputs: every bit pattern of 8- and 16-bit types, else edge values\n"
               "and N random ones (default 1000000).  The reference is rounded once to the\n"
               "kernel's output dtype; errors in units in the last place (ulp) of that dtype.\n"
               "Prints max and mean ulp, the worst input, a histogram, NaN/inf mismatches and\n"
               "the speed of kernel and reference.  Exit status 1 when an operator cannot be\n"
               "checked (no reference, nothing loaded).\n");
}

static const char *const bins[MXP_OP_CHECK_BINS] = { "0",       "1",        "2",         "3-4",
                                                     "5-8",     "9-16",     "17-32",     "33-64",
                                                     "65-128", "129-256",  "257-512",   ">512" };

static void print_report(const mxp_op_check_report *r, int n_inputs)
{
    printf("%s [%s]: %llu outputs%s\n", r->signature, mxp_isa_name(r->isa), (unsigned long long)r->count,
           r->exhaustive ? " (every input pattern)" : " (edge values and random inputs)");
    printf("  max %.0f ulp, mean %.4f ulp; NaN mismatches %llu, inf mismatches %llu\n", r->max_ulp, r->mean_ulp,
           (unsigned long long)r->nan_mismatch, (unsigned long long)r->inf_mismatch);
    if (n_inputs > 0 && r->max_ulp > 0) {
        printf("  worst: (");
        for (int i = 0; i < n_inputs; i++)
            printf("%s%.9g", i ? ", " : "", r->worst_in[i]);
        printf(") -> %.9g, reference %.9g\n", r->worst_got, r->worst_want);
    }
    printf("  ulp:");
    for (int b = 0; b < MXP_OP_CHECK_BINS; b++)
        if (r->histogram[b])
            printf("  %s: %llu", bins[b], (unsigned long long)r->histogram[b]);
    printf("\n  speed: kernel %.2f ns/element, reference %.2f (%.1fx)\n", r->kernel_ns, r->reference_ns,
           r->kernel_ns > 0 ? r->reference_ns / r->kernel_ns : 0);
}

static void json_report(const mxp_op_check_report *r, int n_inputs)
{
    cli_json_object(NULL);
    cli_json_str("signature", r->signature);
    cli_json_str("isa", mxp_isa_name(r->isa));
    cli_json_uint("count", r->count);
    cli_json_bool("exhaustive", r->exhaustive);
    cli_json_num("max_ulp", r->max_ulp);
    cli_json_num("mean_ulp", r->mean_ulp);
    cli_json_uint("nan_mismatch", r->nan_mismatch);
    cli_json_uint("inf_mismatch", r->inf_mismatch);
    cli_json_array("worst_input");
    for (int i = 0; i < n_inputs; i++)
        cli_json_num(NULL, r->worst_in[i]);
    cli_json_close();
    cli_json_num("worst_got", r->worst_got);
    cli_json_num("worst_want", r->worst_want);
    cli_json_array("histogram");
    for (int b = 0; b < MXP_OP_CHECK_BINS; b++)
        cli_json_uint(NULL, r->histogram[b]);
    cli_json_close();
    cli_json_num("kernel_ns", r->kernel_ns);
    cli_json_num("reference_ns", r->reference_ns);
    cli_json_close();
}

int cli_check_op(int argc, char **argv)
{
    const char *cmd = "check op", *name = NULL, *v;
    mxp_op_check_opts o = { 0 };
    bool json = false;
    int rc = load_env_plugins(cmd);
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        int m;
        if (cli_is_help(argv[i]))
            return check_usage(stdout), CLI_OK;
        if ((m = plugin_option(cmd, argc, argv, &i)) != 0) {
            if (m < 0)
                return -m;
        } else if ((m = cli_option(argc, argv, &i, "--ref", &v)) != 0) {
            if (m < 0)
                return cli_usage_error(cmd, "--ref needs a function name");
            o.reference = v;
        } else if ((m = cli_option(argc, argv, &i, "--signature", &v)) != 0) {
            if (m < 0)
                return cli_usage_error(cmd, "--signature needs a signature like float32->float32");
            o.signature = v;
        } else if ((m = cli_option(argc, argv, &i, "--samples", &v)) != 0) {
            size_t n;
            if (m < 0 || cli_parse_size(v, &n) || n == 0)
                return cli_usage_error(cmd, "--samples needs a positive count");
            o.samples = n;
        } else if ((m = cli_option(argc, argv, &i, "--seed", &v)) != 0) {
            size_t n;
            if (m < 0 || cli_parse_size(v, &n))
                return cli_usage_error(cmd, "--seed needs a number");
            o.seed = n;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (argv[i][0] != '-' && !name) {
            name = argv[i];
        } else {
            return cli_bad_argument(cmd, argv[i]);
        }
    }
    if (rc != CLI_OK)
        return rc;
    if (!name)
        return cli_usage_error(cmd, "which operator? (mxp check op NAME --plugin PATH)");
    mxp_op_info info = { 0 };
    mxp_status st = mxp_op_info_by_name(name, &info);
    mxp_op_check_report reports[64] = { 0 };
    int n = 0;
    if (st == MXP_OK)
        st = mxp_op_check(name, &o, reports, 64, &n);
    if (st != MXP_OK)
        return cli_mxp_error(cmd, name, st);
    const int shown = info.kind == MXP_OP_ELEMENTWISE ? info.n_inputs : 0;
    if (json) {
        cli_json_begin(cmd);
        cli_json_str("operator", name);
        cli_json_str("reference", o.reference ? o.reference : "float64 (the plugin's)");
        cli_json_str("cpu", mxp_cpu_brand());
        cli_json_array("signatures");
        for (int i = 0; i < n; i++)
            json_report(&reports[i], shown);
        cli_json_end();
        return CLI_OK;
    }
    printf("operator %s (%s, %s) against %s; CPU %s\n\n", name, mxp_op_kind_name(info.kind), info.library,
           o.reference ? o.reference : "its float64 reference", mxp_cpu_brand());
    for (int i = 0; i < n; i++)
        print_report(&reports[i], shown);
    return CLI_OK;
}

int cli_op(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: mxp op list [--plugin PATH]... [--json]\n"
                   "       (mxp check op NAME checks one against its reference)\n\n");
        list_usage(f);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (!strcmp(argv[1], "list"))
        return op_list(argc - 1, argv + 1);
    return cli_usage_error("op", "unknown subcommand '%s' (mxp op list)", argv[1]);
}
