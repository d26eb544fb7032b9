/* mxp bench profile — what the profiler costs: a call of about 10 us and a
 * tiny call timed with profiling off and on, alternating (docs/profiling.md;
 * the goal: on, at most 5% on calls of 10 us or more). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Seconds per call of mxp_convert(f32 -> bf16, n), the median of reps
 * batches of calls, with profiling off and on in turn (on: each batch
 * inside a begin/end of its own). */
static void time_calls(const float *x, uint16_t *y, size_t n, int calls, int reps, double *off, double *on)
{
    double *t[2] = { malloc((size_t)reps * sizeof(double)), malloc((size_t)reps * sizeof(double)) };
    for (int r = 0; r < reps; r++) {
        for (int mode = 0; mode < 2; mode++) {
            if (mode)
                mxp_profile_begin();
            const double t0 = cli_now();
            for (int c = 0; c < calls; c++)
                mxp_convert(y, MXP_BF16, x, MXP_F32, n, NULL);
            t[mode][r] = (cli_now() - t0) / calls;
            if (mode)
                mxp_profile_end();
        }
    }
    *off = cli_median(t[0], reps);
    *on = cli_median(t[1], reps);
    free(t[0]);
    free(t[1]);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp bench profile [--reps R] [--json]\n\n"
               "The profiler's cost on one thread: mxp_convert float32 -> bfloat16 calls of\n"
               "about 10 us (n chosen here) and of 64 elements, timed with profiling off and\n"
               "on in turn (R batches each, medians).  Goal: on costs at most 5%% on the 10 us\n"
               "calls.  Off, a hook is one relaxed atomic load and a branch.\n\n"
               "  --reps R   batches of each (default 21)\n"
               "  --json     one JSON object: n, us_per_call_off/on, overhead, tiny_ns_off/on, holds\n");
}

int cli_bench_profile(int argc, char **argv)
{
    bool json = false;
    int reps = 21;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (cli_option(argc, argv, &i, "--reps", &v) == 1) {
            reps = atoi(v);
            if (reps < 1 || reps > 1001)
                return cli_usage_error("bench profile", "--reps wants 1..1001, not '%s'", v);
        } else {
            return cli_bad_argument("bench profile", argv[i]);
        }
    }
    if (mxp_profile_active())
        return cli_usage_error("bench profile", "a profile is running (MXP_PROFILE=1?): this measures its cost");
    mxp_set_num_threads(1);
    size_t n = 4096;
    const size_t most = (size_t)1 << 20;
    float *x = malloc(most * sizeof *x);
    uint16_t *y = malloc(most * sizeof *y);
    if (!x || !y)
        return free(x), free(y), cli_mxp_error("bench profile", NULL, MXP_ERR_NO_MEMORY);
    for (size_t i = 0; i < most; i++)
        x[i] = (float)i * 0.37f, y[i] = 0;
    double off, on;
    for (;;) { /* n for calls of 10-20 us */
        time_calls(x, y, n, 200, 3, &off, &on);
        if (off >= 10e-6 || n == most)
            break;
        n = n * 2 < most ? n * 2 : most;
    }
    time_calls(x, y, n, 200, reps, &off, &on);
    double tiny_off, tiny_on;
    time_calls(x, y, 64, 20000, reps, &tiny_off, &tiny_on);
    const double overhead = on / off - 1;
    const bool holds = overhead <= 0.05;
    if (json) {
        cli_json_begin("bench profile");
        cli_json_str("cpu", mxp_cpu_brand());
        cli_json_str("isa", mxp_isa_name(mxp_get_isa()));
        cli_json_int("n", (long long)n);
        cli_json_num("us_per_call_off", off * 1e6);
        cli_json_num("us_per_call_on", on * 1e6);
        cli_json_num("overhead", overhead);
        cli_json_num("tiny_ns_off", tiny_off * 1e9);
        cli_json_num("tiny_ns_on", tiny_on * 1e9);
        cli_json_num("goal", 0.05);
        cli_json_bool("holds", holds);
        cli_json_end();
    } else {
        printf("# the profiler's cost, one thread, mxp_convert float32 -> bfloat16, median of %d batches; %s (%s)\n",
               reps, mxp_cpu_brand(), mxp_isa_name(mxp_get_isa()));
        printf("call                      off           on      cost   goal\n");
        printf("%7zu elements   %8.2f us  %8.2f us  %+6.1f%%   <= 5%% on calls of 10 us: %s\n", n, off * 1e6,
               on * 1e6, 100 * overhead, holds ? "holds" : "falls short");
        printf("     64 elements   %8.0f ns  %8.0f ns  %+6.0f ns  (a tiny call: the records' fixed cost)\n",
               tiny_off * 1e9, tiny_on * 1e9, (tiny_on - tiny_off) * 1e9);
    }
    free(x);
    free(y);
    return CLI_OK;
}
