/* mxp bench fft — mxp_fft / mxp_rfft on float32 rows against KISS FFT, the
 * library they call, run directly on the same rows (bench_fft_peer.c), one
 * thread: the goal is within 1.5x (docs/nn.md#fft). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fft.h"
#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp bench fft [--reps R] [--json]\n\n"
               "One thread, float32: mxp_fft (complex) and mxp_rfft (real) on rows of n points\n"
               "(n = 256, 1000, 1024, 4096; 2^20 points in all), each call a new array, against\n"
               "KISS FFT called directly on the same contiguous rows (plans made once).  Medians\n"
               "of R runs (default 9).  Goal: mxp within 1.5x of the library it calls.\n"
               "  --json   one JSON object: results, one object per kind and n\n");
}

int cli_bench_fft(int argc, char **argv)
{
    bool json = false;
    int reps = 9;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_is_help(argv[i]))
            return usage(stdout), CLI_OK;
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (cli_option(argc, argv, &i, "--reps", &v) == 1 && (reps = atoi(v)) >= 1 && reps <= 1001)
            continue;
        else
            return cli_bad_argument("bench fft", argv[i]);
    }
    mxp_set_num_threads(1);
    static const int sizes[] = { 256, 1000, 1024, 4096 };
    double *t = malloc((size_t)reps * sizeof *t);
    if (json) {
        cli_json_begin("bench fft");
        cli_json_str("cpu", mxp_cpu_brand());
        cli_json_num("goal", 1.5);
        cli_json_array("results");
    } else {
        printf("# FFT float32, one thread, 2^20 points a run, median of %d; %s (%s)\n", reps, mxp_cpu_brand(),
               mxp_isa_name(mxp_get_isa()));
        printf("kind      n     mxp ms   KISS ms   mxp/KISS  goal <= 1.5x\n");
    }
    int short_of = 0;
    for (int real = 0; real < 2; real++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const int n = sizes[s], rows = (1 << 20) / n;
            const int64_t shape[3] = { rows, n, 2 };
            mxp_array *x = NULL;
            mxp_array_random_normal(&x, MXP_F32, real ? 2 : 3, shape, 0, 1, 1);
            float *out = malloc((size_t)(n + 2) * 2 * sizeof(float));
            void *plan = bench_kiss_plan(n, real);
            double mt, kt;
            for (int r = 0; r < reps; r++) {
                mxp_array *y = NULL;
                const double t0 = cli_now();
                real ? mxp_rfft(&y, x, NULL) : mxp_fft(&y, x, NULL);
                t[r] = cli_now() - t0;
                mxp_array_free(y);
            }
            mt = cli_median(t, reps);
            const float *data = mxp_array_data(x);
            for (int r = 0; r < reps; r++) {
                const double t0 = cli_now();
                for (int row = 0; row < rows; row++)
                    bench_kiss_run(plan, real, data + (size_t)row * n * (real ? 1 : 2), out);
                t[r] = cli_now() - t0;
            }
            kt = cli_median(t, reps);
            const double ratio = mt / kt;
            short_of += ratio > 1.5;
            if (json) {
                cli_json_object(NULL);
                cli_json_str("kind", real ? "rfft" : "fft");
                cli_json_int("n", n);
                cli_json_num("mxp_ms", mt * 1e3);
                cli_json_num("kiss_ms", kt * 1e3);
                cli_json_num("ratio", ratio);
                cli_json_bool("holds", ratio <= 1.5);
                cli_json_close();
            } else {
                printf("%-5s %6d %9.2f %9.2f %9.2fx  %s\n", real ? "rfft" : "fft", n, mt * 1e3, kt * 1e3, ratio,
                       ratio <= 1.5 ? "holds" : "falls short");
            }
            bench_kiss_free(plan);
            free(out);
            mxp_array_free(x);
        }
    }
    if (json)
        cli_json_end();
    else
        printf("%d of 8 fall short of 1.5x\n", short_of);
    free(t);
    return CLI_OK;
}
