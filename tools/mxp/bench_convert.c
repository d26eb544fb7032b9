/* mxp bench convert — mxp_convert throughput per dtype pair and rounding
 * mode, next to memcpy moving the same number of bytes. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { MAX_PAIRS = 64, MAX_REPS = 1000, MAX_THREAD_COUNTS = 8 };

typedef struct bench_args {
    size_t n;
    int reps;
    cli_pair pairs[MAX_PAIRS];
    int pair_count;
    mxp_rounding modes[MXP_ROUNDING_COUNT];
    int mode_count; /* 0: the default modes, which depend on the pair */
    int threads[MAX_THREAD_COUNTS];
    int thread_count;
    int json;
} bench_args;

static const char default_pairs[] =
    "f32:bf16,bf16:f32,f32:f16,f16:f32,f64:bf16,f64:f16,"
    "f32:e4m3,e4m3:f32,f32:e5m2,e5m2:f32,f32:int8,int8:f32";

static const mxp_rounding default_modes[] = {
    MXP_ROUND_NEAREST_EVEN, MXP_ROUND_TOWARD_ZERO, MXP_ROUND_UP,
    MXP_ROUND_DOWN,         MXP_ROUND_NEAREST_AWAY, MXP_ROUND_STOCHASTIC,
};

static void print_help(void)
{
    printf("usage: mxp bench convert [--n N] [--reps R] [--pairs SRC:DST,...] [--modes M,...]\n"
           "                         [--threads T,...] [--json]\n\n"
           "Times mxp_convert on N contiguous elements for each pair and rounding mode,\n"
           "alternating with memcpy runs that move the same number of bytes (the copy\n"
           "is (src bytes + dst bytes) / 2 long).  Reports medians over R runs; GB/s\n"
           "counts bytes read + bytes written.  Sources hold random normal-ish values,\n"
           "a few of them subnormal for float sources.  Rows convert into an existing\n"
           "buffer (written before); the row \"new array\" repeats the first mode into a\n"
           "new buffer from mxp's allocator each run (what an astype does), its fresh\n"
           "pages part of the time (huge pages as MXP_HUGEPAGES / mxp_set_hugepages\n"
           "set them: default on from 4 MiB).\n\n"
           "  --n N         elements per run (default 64M; suffixes K, M, G are binary)\n"
           "  --reps R      runs of each, median reported (default 7)\n"
           "  --pairs LIST  src:dst dtype pairs, any dtype name (default:\n"
           "                %s)\n"
           "  --modes LIST  rounding modes (default: nearest_even, toward_zero, up, down,\n"
           "                nearest_away, stochastic for narrowing pairs; nearest_even only\n"
           "                for widening pairs, where every mode gives the same result)\n"
           "  --threads LIST  thread counts for mxp_convert, a row each (default 1;\n"
           "                arrays from 1 MiB moved are split: shares of >= 512 KiB, >= 4 MiB\n"
           "                from 4 MiB on (streaming stores);\n"
           "                memcpy always runs on one thread)\n"
           "  --json        one JSON object instead of the table: n, reps, isa and\n"
           "                results, one object per pair, mode and thread count (pair,\n"
           "                src, dst, mode, threads, new_array, kernel, bytes, mxp_s,\n"
           "                memcpy_s, mxp_gbps, memcpy_gbps, ratio)\n",
           default_pairs);
}

/* "f32:bf16,bf16:f32" -> pairs. */
static int parse_pairs(bench_args *a, const char *list)
{
    char buf[1024];
    if (strlen(list) >= sizeof buf)
        return cli_usage_error("bench convert", "--pairs list too long");
    strcpy(buf, list);
    a->pair_count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        if (!colon)
            return cli_usage_error("bench convert", "pair '%s' is not SRC:DST (e.g. f32:bf16)", tok);
        *colon = '\0';
        mxp_dtype src = mxp_dtype_from_name(tok), dst = mxp_dtype_from_name(colon + 1);
        if (!src || !dst)
            return cli_usage_error("bench convert", "unknown dtype '%s' in --pairs", !src ? tok : colon + 1);
        if (a->pair_count == MAX_PAIRS)
            return cli_usage_error("bench convert", "more than %d pairs", MAX_PAIRS);
        a->pairs[a->pair_count++] = (cli_pair){ src, dst };
    }
    if (a->pair_count == 0)
        return cli_usage_error("bench convert", "--pairs is empty");
    return CLI_OK;
}

static int parse_modes(bench_args *a, const char *list)
{
    char buf[256];
    if (strlen(list) >= sizeof buf)
        return cli_usage_error("bench convert", "--modes list too long");
    strcpy(buf, list);
    a->mode_count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        mxp_rounding r = mxp_rounding_from_name(tok);
        if (r == MXP_ROUNDING_COUNT)
            return cli_usage_error("bench convert", "unknown rounding mode '%s'", tok);
        if (a->mode_count == MXP_ROUNDING_COUNT)
            return cli_usage_error("bench convert", "--modes lists a mode twice");
        a->modes[a->mode_count++] = r;
    }
    if (a->mode_count == 0)
        return cli_usage_error("bench convert", "--modes is empty");
    return CLI_OK;
}

static int parse_threads(bench_args *a, const char *list)
{
    char buf[256];
    if (strlen(list) >= sizeof buf)
        return cli_usage_error("bench convert", "--threads list too long");
    strcpy(buf, list);
    a->thread_count = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long t = strtol(tok, &end, 10);
        if (end == tok || *end != '\0' || t < 1 || t > MXP_MAX_THREADS)
            return cli_usage_error("bench convert", "--threads wants counts in 1..%d, not '%s'", MXP_MAX_THREADS, tok);
        if (a->thread_count == MAX_THREAD_COUNTS)
            return cli_usage_error("bench convert", "more than %d thread counts", MAX_THREAD_COUNTS);
        a->threads[a->thread_count++] = (int)t;
    }
    if (a->thread_count == 0)
        return cli_usage_error("bench convert", "--threads is empty");
    return CLI_OK;
}

static int parse_option(bench_args *a, int argc, char **argv, int *i)
{
    const char *v = NULL;
    int m;
    if (!strcmp(argv[*i], "--json")) {
        a->json = 1;
        return CLI_OK;
    }
    if ((m = cli_option(argc, argv, i, "--n", &v)) > 0) {
        if (cli_parse_size(v, &a->n) || a->n == 0 || a->n > SIZE_MAX / 32)
            return cli_usage_error("bench convert", "--n wants a positive element count, not '%s'", v);
        return CLI_OK;
    }
    if (m == 0 && (m = cli_option(argc, argv, i, "--reps", &v)) > 0) {
        char *end;
        long r = strtol(v, &end, 10);
        if (end == v || *end != '\0' || r < 1 || r > MAX_REPS)
            return cli_usage_error("bench convert", "--reps wants 1..%d, not '%s'", MAX_REPS, v);
        a->reps = (int)r;
        return CLI_OK;
    }
    if (m == 0 && (m = cli_option(argc, argv, i, "--pairs", &v)) > 0)
        return parse_pairs(a, v);
    if (m == 0 && (m = cli_option(argc, argv, i, "--modes", &v)) > 0)
        return parse_modes(a, v);
    if (m == 0 && (m = cli_option(argc, argv, i, "--threads", &v)) > 0)
        return parse_threads(a, v);
    if (m < 0)
        return cli_usage_error("bench convert", "option '%s' needs a value", argv[*i]);
    return cli_bad_argument("bench convert", argv[*i]);
}

/* ---- measuring ---------------------------------------------------------- */

size_t cli_bench_copy_bytes(const cli_bench_case *c)
{
    return c->n * (mxp_dtype_itemsize(c->src) + mxp_dtype_itemsize(c->dst)) / 2;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

mxp_status cli_bench_run(const cli_bench_case *c, const void *src, void *dst, cli_bench_result *r)
{
    double conv[MAX_REPS], copy[MAX_REPS];
    const size_t copy_bytes = cli_bench_copy_bytes(c);
    const int reps = c->reps < 1 ? 1 : c->reps > MAX_REPS ? MAX_REPS : c->reps;
    for (int k = 0; k < reps; k++) {
        const double t0 = cli_now();
        void *out = c->fresh ? mxp_malloc(c->n * mxp_dtype_itemsize(c->dst)) : dst;
        const mxp_status st = out ? mxp_convert(out, c->dst, src, c->src, c->n, &c->opts) : MXP_ERR_NO_MEMORY;
        conv[k] = cli_now() - t0;
        if (c->fresh)
            mxp_free(out); /* not timed: a program drops its arrays later */
        if (st != MXP_OK)
            return st;
        const double t1 = cli_now();
        memcpy(dst, src, copy_bytes);
        copy[k] = cli_now() - t1;
    }
    r->bytes = c->n * (mxp_dtype_itemsize(c->src) + mxp_dtype_itemsize(c->dst));
    r->mxp_s = median(conv, reps);
    r->memcpy_s = median(copy, reps);
    r->mxp_gbps = (double)r->bytes / r->mxp_s * 1e-9;
    r->memcpy_gbps = (double)(2 * copy_bytes) / r->memcpy_s * 1e-9;
    return MXP_OK;
}

/* ---- the benchmark ------------------------------------------------------ */

static int is_widening(const cli_pair *p)
{
    return mxp_can_cast(p->src, p->dst, MXP_CASTING_SAFE);
}

static void print_row(const bench_args *a, const cli_bench_case *c, const cli_bench_result *r, int threads)
{
    const mxp_dtype_traits *s = mxp_dtype_get_traits(c->src), *d = mxp_dtype_get_traits(c->dst);
    const char *kernel = mxp_convert_kernel_name(c->dst, c->src, &c->opts);
    const char *mode = mxp_rounding_name(c->opts.rounding);
    double ratio = r->mxp_gbps / r->memcpy_gbps;
    char pair[32];
    snprintf(pair, sizeof pair, "%s:%s", s->short_name, d->short_name);
    if (a->json) {
        cli_json_object(NULL);
        cli_json_str("pair", pair);
        cli_json_str("src", s->name);
        cli_json_str("dst", d->name);
        cli_json_str("mode", mode);
        cli_json_bool("new_array", c->fresh);
        cli_json_int("threads", threads);
        cli_json_str("kernel", kernel);
        cli_json_int("bytes", (long long)r->bytes);
        cli_json_num("mxp_s", r->mxp_s);
        cli_json_num("memcpy_s", r->memcpy_s);
        cli_json_num("mxp_gbps", r->mxp_gbps);
        cli_json_num("memcpy_gbps", r->memcpy_gbps);
        cli_json_num("ratio", ratio);
        cli_json_close();
    } else {
        printf("%-10s %-13s %7d %-30s %9.2f %11.2f %10.3f\n", pair, c->fresh ? "new array" : mode, threads, kernel,
               r->mxp_gbps, r->memcpy_gbps, ratio);
    }
    fflush(stdout);
}

/* Both buffers hold the largest source or destination and the largest copy. */
static size_t buffer_bytes(const bench_args *a, int want_dst)
{
    size_t most = 0;
    for (int i = 0; i < a->pair_count; i++) {
        cli_bench_case c = { .src = a->pairs[i].src, .dst = a->pairs[i].dst, .n = a->n };
        size_t own = a->n * mxp_dtype_itemsize(want_dst ? c.dst : c.src);
        size_t copy = cli_bench_copy_bytes(&c);
        size_t need = own > copy ? own : copy;
        most = need > most ? need : most;
    }
    return most;
}

static int run_pair(const bench_args *a, const cli_pair *p, void *src, void *dst)
{
    mxp_status st = cli_fill_random(src, p->src, a->n, 42);
    if (st != MXP_OK)
        return cli_mxp_error("bench convert", NULL, st);
    /* Widening is exact, so by default it runs once, with nearest_even. */
    const mxp_rounding *modes = a->mode_count ? a->modes : default_modes;
    int count = a->mode_count;
    if (!count)
        count = is_widening(p) ? 1 : (int)(sizeof default_modes / sizeof default_modes[0]);
    for (int m = 0; m < count; m++) {
        for (int t = 0; t < a->thread_count; t++) {
            cli_bench_case c = { .src = p->src, .dst = p->dst, .n = a->n, .reps = a->reps };
            cli_bench_result r;
            c.opts.rounding = modes[m];
            c.opts.seed = 1;
            mxp_set_num_threads(a->threads[t]);
            st = cli_bench_run(&c, src, dst, &r);
            mxp_set_num_threads(0);
            if (st != MXP_OK)
                return cli_mxp_error("bench convert", NULL, st);
            print_row(a, &c, &r, a->threads[t]);
            if (m == 0) { /* the first mode again, into a new buffer each run */
                c.fresh = 1;
                mxp_set_num_threads(a->threads[t]);
                st = cli_bench_run(&c, src, dst, &r);
                mxp_set_num_threads(0);
                if (st != MXP_OK)
                    return cli_mxp_error("bench convert", NULL, st);
                print_row(a, &c, &r, a->threads[t]);
            }
        }
    }
    return CLI_OK;
}

static int run(const bench_args *a)
{
    size_t src_bytes = buffer_bytes(a, 0), dst_bytes = buffer_bytes(a, 1);
    void *src = cli_alloc(src_bytes), *dst = cli_alloc(dst_bytes);
    int rc = CLI_OK;
    if (!src || !dst) {
        fprintf(stderr, "mxp bench convert: cannot allocate %zu + %zu bytes\n", src_bytes, dst_bytes);
        rc = CLI_FAILED;
    }
    if (rc == CLI_OK) {
        memset(src, 0, src_bytes); /* the copy may read past the filled source */
        memset(dst, 0, dst_bytes);
        if (a->json) {
            cli_json_begin("bench convert");
            cli_json_int("n", (long long)a->n);
            cli_json_int("reps", a->reps);
            cli_json_str("isa", mxp_isa_name(mxp_get_isa()));
            cli_json_array("results");
        } else {
            printf("# n = %zu elements, median of %d runs; GB/s = (bytes read + written) / time;\n"
                   "# into an existing buffer, \"new array\": into a new one each run (huge pages %s)\n"
                   "%-10s %-13s %7s %-30s %9s %11s %10s\n", a->n, a->reps, mxp_hugepages_enabled() ? "on" : "off",
                   "pair", "mode", "threads", "kernel",
                   "mxp GB/s", "memcpy GB/s", "mxp/memcpy");
        }
    }
    for (int i = 0; i < a->pair_count && rc == CLI_OK; i++)
        rc = run_pair(a, &a->pairs[i], src, dst);
    if (rc == CLI_OK && a->json)
        cli_json_end();
    free(src);
    free(dst);
    return rc;
}

int cli_bench_convert(int argc, char **argv)
{
    bench_args a = { .n = (size_t)64 << 20, .reps = 7, .threads = { 1 }, .thread_count = 1 };
    int rc = parse_pairs(&a, default_pairs);
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        }
        rc = parse_option(&a, argc, argv, &i);
    }
    return rc == CLI_OK ? run(&a) : rc;
}
