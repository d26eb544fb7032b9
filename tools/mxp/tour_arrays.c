/* mxp tour, part 7: arrays — a float32 array through every floating dtype
 * and back, and how the summation algorithm changes a sum, per dtype. */
#include <math.h>
#include <stdio.h>

#include "cli.h"

enum { N = 1 << 20 };

static mxp_status round_trip_row(const mxp_array *x, const double *ref, mxp_dtype type)
{
    mxp_array *y = NULL, *back = NULL;
    mxp_status st = mxp_array_astype(&y, x, type, NULL);
    if (st == MXP_OK)
        st = mxp_array_astype(&back, y, MXP_F64, NULL);
    if (st != MXP_OK) {
        mxp_array_free(y);
        return st;
    }
    const double *b = mxp_array_data(back);
    double worst = 0, sq = 0;
    long zeros = 0, bad = 0;
    for (long i = 0; i < N; i++) {
        if (!isfinite(b[i])) {
            bad++;
            continue;
        }
        double rel = ref[i] != 0 ? fabs(b[i] - ref[i]) / fabs(ref[i]) : 0;
        zeros += b[i] == 0 && ref[i] != 0;
        worst = rel > worst ? rel : worst;
        sq += rel * rel;
    }
    char mb[32];
    snprintf(mb, sizeof mb, "%.1f MiB", (double)N * (double)mxp_dtype_itemsize(type) / (1 << 20));
    printf("  %-14s %9s %12.2e %12.2e %10ld %10ld\n", mxp_dtype_name(type), mb, worst, sqrt(sq / N), zeros, bad);
    mxp_array_free(y);
    mxp_array_free(back);
    return MXP_OK;
}

static mxp_status sums_row(const mxp_array *x, mxp_dtype type, double exact)
{
    mxp_array *y = NULL;
    mxp_status st = mxp_array_astype(&y, x, type, NULL);
    if (st != MXP_OK)
        return st;
    /* The exact sum of the values the type holds. */
    mxp_array *yd = NULL, *s = NULL;
    mxp_reduce_opts k64 = { .acc_dtype = MXP_F64, .algorithm = MXP_SUM_KAHAN, .out_dtype = MXP_F64 };
    st = mxp_array_astype(&yd, y, MXP_F64, NULL);
    if (st == MXP_OK)
        st = mxp_reduce(&s, MXP_REDUCE_SUM, yd, 0, NULL, &k64);
    double held = st == MXP_OK ? *(double *)mxp_array_data(s) : 0;
    (void)exact;
    mxp_array_free(s);
    mxp_array_free(yd);
    printf("  %-10s %12.4f", mxp_dtype_name(type), held);
    const mxp_sum_algorithm algs[3] = { MXP_SUM_NAIVE, MXP_SUM_PAIRWISE, MXP_SUM_KAHAN };
    for (int a = 0; a < 3 && st == MXP_OK; a++) {
        mxp_reduce_opts o = { .acc_dtype = MXP_F32, .algorithm = algs[a], .out_dtype = MXP_F64 };
        st = mxp_reduce(&s, MXP_REDUCE_SUM, y, 0, NULL, &o);
        if (st == MXP_OK)
            printf(" %11.4f (%8.1e)", *(double *)mxp_array_data(s), fabs(*(double *)mxp_array_data(s) - held));
        mxp_array_free(s);
        s = NULL;
    }
    printf("\n");
    mxp_array_free(y);
    return st;
}

int tour_arrays(void)
{
    tour_heading(7, "Arrays: round trips and sums");
    printf("A float32 array of 2^20 normal values (sigma 1, one in 4096 scaled by 1e4 as\n"
           "outliers) converted to each type and back with mxp_array_astype.  Look at\n"
           "the memory next to the error, and at float8_e4m3fn: its max, 448, turns the\n"
           "outliers into NaN, and values below its smallest subnormal become zero.\n\n");
    const int64_t n = N;
    mxp_array *x = NULL, *xd = NULL;
    mxp_status st = mxp_array_random_normal(&x, MXP_F32, 1, &n, 0, 1, 2026);
    if (st == MXP_OK) {
        float *v = mxp_array_data(x);
        for (long i = 0; i < N; i += 4096)
            v[i] *= 1e4f;
        st = mxp_array_astype(&xd, x, MXP_F64, NULL);
    }
    if (st != MXP_OK)
        return cli_mxp_error("tour", NULL, st);
    const double *ref = mxp_array_data(xd);
    printf("  %-14s %9s %12s %12s %10s %10s\n", "type", "memory", "max rel.err", "rms rel.err", "to zero", "inf/nan");
    for (int t = 0; t < 6 && st == MXP_OK; t++)
        st = round_trip_row(x, ref, cli_float_types[t]);
    if (st == MXP_OK) {
        printf("\nThe same values summed in each type with a float32 accumulator, three ways;\n"
               "in parentheses the distance to the exact sum of the values the type holds.\n"
               "Naive loses digits as the running sum grows; pairwise (the default) and\n"
               "Kahan keep them.\n\n");
        printf("  %-10s %12s %24s %24s %24s\n", "type", "exact", "naive", "pairwise", "kahan");
        const mxp_dtype types[3] = { MXP_F32, MXP_F16, MXP_BF16 };
        for (int t = 0; t < 3 && st == MXP_OK; t++)
            st = sums_row(x, types[t], 0);
    }
    mxp_array_free(xd);
    mxp_array_free(x);
    if (st != MXP_OK)
        return cli_mxp_error("tour", NULL, st);
    mxp_memory_stats m = { 0 };
    mxp_get_memory_stats(&m);
    printf("\nmxp's allocator so far: peak %.1f MiB, %llu allocations, %.1f MiB converted.\n",
           (double)m.peak_bytes / (1 << 20), (unsigned long long)m.allocations,
           (double)m.bytes_converted / (1 << 20));
    return CLI_OK;
}
