/* mxp info — what this build and this machine give: version, CPU, ISA
 * level, the traits of every dtype and the conversion kernels in use. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_help(void)
{
    printf("usage: mxp info [--json]\n\n"
           "Prints the mxp version, the CPU brand and features, the ISA level kernels\n"
           "use, what computes exp, log, tanh, sin, cos and the activations (SLEEF or\n"
           "libm), one row of traits per dtype, and the kernel mxp_convert picks for\n"
           "the main conversion pairs (where kernels give the same bits, the one\n"
           "measured fastest on this CPU family: the uarch of the cpuid line).  Set\n"
           "MXP_ISA=scalar|avx2|avx512|avx512bf16|amx to cap the level and see what changes.\n\n"
           "It also shows the memory settings: the kernel's transparent huge page\n"
           "mode and whether mxp advises large blocks as huge pages (MXP_HUGEPAGES=0|1,\n"
           "mxp_set_hugepages) and from what size; the L3's size and from how many bytes\n"
           "moved a call conversions write with streaming stores (MXP_STREAM_BYTES,\n"
           "mxp_set_stream_threshold; default half the L3).\n\n"
           "  --json   one JSON object: version, cpu (brand, vendor, family, model, uarch,\n"
           "           features, isa, isa_supported),\n"
           "           vector_math (sleef-avx512, sleef-avx2 or libm),\n"
           "           memory (thp_mode, hugepages, hugepage_threshold, l3_bytes,\n"
           "           stream_threshold: bytes),\n"
           "           dtypes (one object of traits per dtype, named as in the table;\n"
           "           null for values that are not finite), kernels (src, dst, and the\n"
           "           kernel per rounding mode)\n");
}

static void print_traits_header(void)
{
    printf("  %-14s %-5s %4s %4s %4s %3s %4s %5s %10s %11s %12s %11s %11s %3s %3s %7s\n",
           "name", "short", "size", "kind", "bits", "exp", "mant", "bias", "eps", "max", "lowest",
           "min_normal", "min_subnrm", "inf", "nan", "max_int");
}

static void print_traits_row(const mxp_dtype_traits *t)
{
    char eps[16], max[16], lowest[16], mnorm[16], msub[16], mint[16];
    printf("  %-14s %-5s %4zu %4c %4d %3d %4d %5d %10s %11s %12s %11s %11s %3s %3s %7s\n",
           t->name, t->short_name, t->itemsize, (char)t->kind, t->bits, t->exp_bits, t->mant_bits,
           t->bias, cli_num(eps, sizeof eps, t->eps), cli_num(max, sizeof max, t->max),
           cli_num(lowest, sizeof lowest, t->lowest), cli_num(mnorm, sizeof mnorm, t->min_normal),
           cli_num(msub, sizeof msub, t->min_subnormal), t->has_inf ? "yes" : "no",
           t->has_nan ? "yes" : "no", cli_exact_int(mint, sizeof mint, t->max_exact_int));
}

static void print_kernels(void)
{
    const mxp_convert_opts rne = { .rounding = MXP_ROUND_NEAREST_EVEN };
    const mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC };
    printf("  %-14s %-30s %s\n", "pair", mxp_rounding_name(rne.rounding), mxp_rounding_name(sr.rounding));
    for (size_t i = 0; i < sizeof cli_main_pairs / sizeof cli_main_pairs[0]; i++) {
        const cli_pair *p = &cli_main_pairs[i];
        char pair[32];
        snprintf(pair, sizeof pair, "%s -> %s", mxp_dtype_get_traits(p->src)->short_name,
                 mxp_dtype_get_traits(p->dst)->short_name);
        printf("  %-14s %-30s %s\n", pair, mxp_convert_kernel_name(p->dst, p->src, &rne),
               mxp_convert_kernel_name(p->dst, p->src, &sr));
    }
}

static void json_traits(const mxp_dtype_traits *t)
{
    const mxp_kind k = t->kind;
    const char *kind = k == MXP_KIND_BOOL ? "bool" : k == MXP_KIND_INT ? "int" : k == MXP_KIND_UINT ? "uint" : "float";
    cli_json_object(NULL);
    cli_json_str("name", t->name);
    cli_json_str("short", t->short_name);
    cli_json_int("size", (long long)t->itemsize);
    cli_json_str("kind", kind);
    cli_json_int("bits", t->bits);
    cli_json_int("exp", t->exp_bits);
    cli_json_int("mant", t->mant_bits);
    cli_json_int("bias", t->bias);
    cli_json_num("eps", t->eps);
    cli_json_num("max", t->max);
    cli_json_num("lowest", t->lowest);
    cli_json_num("min_normal", t->min_normal);
    cli_json_num("min_subnormal", t->min_subnormal);
    cli_json_bool("inf", t->has_inf);
    cli_json_bool("nan", t->has_nan);
    cli_json_uint("max_int", t->max_exact_int);
    cli_json_close();
}

static void print_json(void)
{
    const mxp_convert_opts rne = { .rounding = MXP_ROUND_NEAREST_EVEN };
    const mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC };
    char features[512];
    cli_json_begin("info");
    cli_json_str("version", mxp_version());
    cli_json_object("cpu");
    cli_json_str("brand", cli_cpu_brand());
    cli_json_str("vendor", mxp_cpu_vendor());
    cli_json_int("family", (long long)mxp_cpu_family());
    cli_json_int("model", (long long)mxp_cpu_model());
    cli_json_str("uarch", mxp_cpu_uarch());
    cli_json_array("features");
    snprintf(features, sizeof features, "%s", mxp_cpu_features_string());
    for (char *w = features, *end; *w; w = end) {
        while (*w == ' ')
            w++;
        for (end = w; *end && *end != ' '; end++)
            ;
        if (*end)
            *end++ = '\0';
        if (*w)
            cli_json_str(NULL, w);
    }
    cli_json_close();
    cli_json_str("isa", mxp_isa_name(mxp_get_isa()));
    cli_json_str("isa_supported", mxp_isa_name(mxp_isa_supported()));
    cli_json_close();
    cli_json_str("vector_math", mxp_vector_math());
    cli_json_object("memory");
    cli_json_str("thp_mode", mxp_hugepages_system_mode());
    cli_json_bool("hugepages", mxp_hugepages_enabled());
    cli_json_int("hugepage_threshold", (long long)mxp_hugepage_threshold());
    cli_json_int("l3_bytes", (long long)mxp_cpu_l3_bytes());
    cli_json_int("stream_threshold", (long long)mxp_stream_threshold());
    cli_json_close();
    cli_json_array("dtypes");
    for (int dt = 1; dt < MXP_DTYPE_COUNT; dt++)
        json_traits(mxp_dtype_get_traits((mxp_dtype)dt));
    cli_json_close();
    cli_json_array("kernels");
    for (size_t i = 0; i < sizeof cli_main_pairs / sizeof cli_main_pairs[0]; i++) {
        const cli_pair *p = &cli_main_pairs[i];
        cli_json_object(NULL);
        cli_json_str("src", mxp_dtype_name(p->src));
        cli_json_str("dst", mxp_dtype_name(p->dst));
        cli_json_str(mxp_rounding_name(rne.rounding), mxp_convert_kernel_name(p->dst, p->src, &rne));
        cli_json_str(mxp_rounding_name(sr.rounding), mxp_convert_kernel_name(p->dst, p->src, &sr));
        cli_json_close();
    }
    cli_json_end();
}

int cli_info(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        }
        if (strcmp(argv[i], "--json") != 0)
            return cli_bad_argument("info", argv[i]);
        json = true;
    }
    if (json) {
        print_json();
        return CLI_OK;
    }
    printf("mxp %s\n\n", mxp_version());
    cli_print_machine("  ");
    printf("  (MXP_ISA=scalar|avx2|avx512|avx512bf16|amx caps the level for a process)\n");
    printf("  vector math (exp, log, tanh, sin, cos, sigmoid, silu, gelu): %s\n", mxp_vector_math());
    printf("  memory: kernel transparent huge pages \"%s\"; mxp huge pages %s for blocks of %zu MiB and more\n"
           "  (MXP_HUGEPAGES=0|1; with THP \"never\" the advice has no effect)\n",
           mxp_hugepages_system_mode(), mxp_hugepages_enabled() ? "on" : "off", mxp_hugepage_threshold() >> 20);
    const size_t l3 = mxp_cpu_l3_bytes(), st = mxp_stream_threshold();
    if (l3)
        printf("  caches: L3 %zu MiB (one instance); ", l3 >> 20);
    else
        printf("  caches: L3 size unknown; ");
    printf("streaming stores from %zu %s moved a call\n  (MXP_STREAM_BYTES=<bytes>[K|M|G] sets it)\n\n",
           st % (1u << 20) == 0 ? st >> 20 : st, st % (1u << 20) == 0 ? "MiB" : "bytes");

    printf("dtypes (kind: b bool, i signed, u unsigned, f float; max_int: every integer\n"
           "in [0, max_int] is exact)\n\n");
    print_traits_header();
    for (int dt = 1; dt < MXP_DTYPE_COUNT; dt++)
        print_traits_row(mxp_dtype_get_traits((mxp_dtype)dt));

    printf("\nconversion kernels in use (\"reference\": the portable converter; a kernel\n"
           "of a lower level than the one in use was measured faster on this CPU)\n\n");
    print_kernels();
    return CLI_OK;
}
