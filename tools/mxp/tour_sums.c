/* mxp tour, parts 4 and 5: adding 0.1 ten thousand times in each format,
 * naively, with a float32 accumulator, and with stochastic rounding. */
#include <math.h>
#include <stdio.h>

#include "cli.h"

enum { STEPS = 10000 };
static const double addend = 0.1, exact_sum = 1000.0;
static const mxp_dtype sum_types[] = { MXP_F16, MXP_BF16, MXP_F32, MXP_F64 };
enum { SUM_TYPES = sizeof sum_types / sizeof sum_types[0] };

typedef struct sum_row {
    double x;          /* 0.1 rounded to the type */
    double naive;      /* accumulator stored in the type */
    int last_change;   /* last step that changed the naive sum */
    double acc32;      /* float32 accumulator */
} sum_row;

/* acc = round_to_type(acc + x), the addition done exactly in float64, so
 * each step rounds once, with `opts` (seed = step for stochastic rounding). */
static mxp_status sum_in_type(mxp_dtype type, double x, mxp_rounding mode, double *sum, int *last_change)
{
    double acc = 0;
    *last_change = 0;
    for (int step = 1; step <= STEPS; step++) {
        mxp_convert_opts opts = { .rounding = mode, .seed = (uint64_t)step };
        double next;
        mxp_status st = cli_round_trip(acc + x, type, &opts, &next);
        if (st != MXP_OK)
            return st;
        if (next != acc)
            *last_change = step;
        acc = next;
    }
    *sum = acc;
    return MXP_OK;
}

static mxp_status compute_row(mxp_dtype type, sum_row *r)
{
    mxp_status st = cli_round_trip(addend, type, NULL, &r->x);
    if (st == MXP_OK)
        st = sum_in_type(type, r->x, MXP_ROUND_NEAREST_EVEN, &r->naive, &r->last_change);
    float acc32 = 0;
    for (int step = 0; step < STEPS; step++)
        acc32 = (float)(acc32 + r->x);
    r->acc32 = acc32;
    return st;
}

static void print_table(const sum_row *rows)
{
    printf("  %-9s %13s | %12s %10s %9s | %12s %10s %9s\n", "type", "0.1 stored", "naive sum",
           "abs.err", "rel.err", "f32-acc sum", "abs.err", "rel.err");
    for (int i = 0; i < SUM_TYPES; i++) {
        const sum_row *r = &rows[i];
        double e1 = r->naive - exact_sum, e2 = r->acc32 - exact_sum;
        printf("  %-9s %13.9g | %12.7g %10.3g %9.2e | %12.7g %10.3g %9.2e\n",
               mxp_dtype_name(sum_types[i]), r->x, r->naive, e1, fabs(e1) / exact_sum, r->acc32, e2,
               fabs(e2) / exact_sum);
    }
}

/* Gap from v up to the next value of the type: 2^(exponent - mantissa bits). */
static double gap_above(double v, mxp_dtype type)
{
    return ldexp(1.0, ilogb(v) - mxp_dtype_get_traits(type)->mant_bits);
}

/* The sentence after the table, from the numbers in it. */
static void explain(const sum_row *rows)
{
    int stalled = 0, worst = 0;
    for (int i = 0; i < SUM_TYPES; i++) {
        const sum_row *r = &rows[i];
        if (r->last_change < STEPS) {
            printf("%s %s stops at %g after %d additions: half the gap to the next\n"
                   "value, %g, is more than 0.1, so acc + 0.1 rounds back to acc.\n",
                   stalled++ ? "Naive" : "\nNaive", mxp_dtype_name(sum_types[i]), r->naive,
                   r->last_change, gap_above(r->naive, sum_types[i]) / 2);
        }
        if (fabs(rows[i].acc32 - exact_sum) > fabs(rows[worst].acc32 - exact_sum))
            worst = i;
    }
    if (!stalled)
        printf("\nNo naive sum stalled.\n");
    const sum_row *w = &rows[worst];
    double err = w->acc32 - exact_sum, from_x = STEPS * w->x - exact_sum;
    printf("With a float32 accumulator every sum is within %.2g%% of 1000.  ", 100 * fabs(err) / exact_sum);
    if (fabs(from_x) > fabs(err) / 2)
        printf("The worst,\n%s, mostly carries the error of 0.1 itself: %d x %.9g = %.7g.\n",
               mxp_dtype_name(sum_types[worst]), STEPS, w->x, STEPS * w->x);
    else
        printf("The worst,\n%s, comes from float32 rounding the running sum.\n",
               mxp_dtype_name(sum_types[worst]));
}

static int section_sums(sum_row *rows)
{
    tour_heading(4, "Cumulative error: 0.1 added 10000 times");
    printf("The exact answer is 1000.  \"naive\" stores the running sum in the type after\n"
           "every addition (one rounding each); \"f32-acc\" adds the type's 0.1 into a\n"
           "float32 accumulator instead, as mixed-precision GEMM and training do.  Look at\n"
           "the naive float16 and bfloat16 columns.\n\n");
    for (int i = 0; i < SUM_TYPES; i++) {
        mxp_status st = compute_row(sum_types[i], &rows[i]);
        if (st != MXP_OK)
            return cli_mxp_error("tour", NULL, st);
    }
    print_table(rows);
    explain(rows);
    return CLI_OK;
}

static int section_stochastic(const sum_row *rows)
{
    const sum_row *bf16 = NULL;
    for (int i = 0; i < SUM_TYPES; i++)
        bf16 = sum_types[i] == MXP_BF16 ? &rows[i] : bf16;
    tour_heading(5, "Stochastic rounding");
    printf("Stochastic rounding rounds up with probability equal to the discarded fraction,\n"
           "so small additions survive on average.  The same bfloat16 sum, accumulator still\n"
           "in bfloat16, each step rounded with MXP_ROUND_STOCHASTIC (seed = step):\n\n");
    double sr;
    int last_change;
    mxp_status st = sum_in_type(MXP_BF16, bf16->x, MXP_ROUND_STOCHASTIC, &sr, &last_change);
    if (st != MXP_OK)
        return cli_mxp_error("tour", NULL, st);
    printf("  bfloat16 sum, nearest_even  %8.7g\n", bf16->naive);
    printf("  bfloat16 sum, stochastic    %8.7g\n", sr);
    printf("  exact                       %8.7g   (%d x bfloat16(0.1) = %d x %.9g = %.7g)\n", exact_sum,
           STEPS, STEPS, bf16->x, STEPS * bf16->x);
    printf("\nStochastic rounding lands %.2g%% from 1000 where nearest-even lands %.2g%% away.\n",
           100 * fabs(sr - exact_sum) / exact_sum, 100 * fabs(bf16->naive - exact_sum) / exact_sum);
    return CLI_OK;
}

int tour_sums(void)
{
    sum_row rows[SUM_TYPES];
    int rc = section_sums(rows);
    if (rc == CLI_OK)
        rc = section_stochastic(rows);
    return rc;
}
