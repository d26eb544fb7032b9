/* mxp analyze on a safetensors file: mxp_recommend_dtype_rows for each
 * floating-point tensor (read from the mapping, in the file's dtype), one
 * line each with the recommended dtype and the overflow / flush-to-zero
 * risk of the 8- and 16-bit candidates, then the bytes of the float
 * tensors now and stored each in its recommended dtype. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The row of dtype dt among the candidates (NULL if it is not one). */
static const mxp_roundtrip_row *row_of(const mxp_roundtrip_row *rows, mxp_dtype dt)
{
    for (int i = 0; i < MXP_ADVISOR_CANDIDATES; i++)
        if (rows[i].dtype == dt)
            return &rows[i];
    return NULL;
}

static void print_row(const char *name, const mxp_array *a, const mxp_roundtrip_row *rows, const mxp_advice *adv)
{
    static const mxp_dtype risky[] = { MXP_E4M3, MXP_F16, MXP_BF16 };
    char shape[200], psnr[32];
    const mxp_roundtrip_row *rec = row_of(rows, adv->dtype);
    printf("%-40s %-8s %-16s %-14s %9s", name, mxp_dtype_name(mxp_array_dtype(a)), cli_shape(shape, sizeof shape, a),
           mxp_dtype_name(adv->dtype), rec ? cli_num(psnr, sizeof psnr, rec->report.psnr_db) : "-");
    for (size_t k = 0; k < sizeof risky / sizeof risky[0]; k++) {
        const mxp_roundtrip_row *r = row_of(rows, risky[k]);
        printf(" %8lld/%-8lld", r ? (long long)r->overflow : -1LL, r ? (long long)r->underflow_to_zero : -1LL);
    }
    printf("\n");
}

int cli_analyze_safetensors(const char *path, const mxp_requirement *req, const char *require, bool json)
{
    mxp_safetensors *st = NULL;
    cli_progress_begin("analyze");
    cli_progress_set("opening", -1);
    mxp_status s = mxp_safetensors_open(&st, path);
    if (s != MXP_OK) {
        cli_progress_end();
        return cli_mxp_error("analyze", NULL, s);
    }
    const size_t n = mxp_safetensors_count(st);
    size_t bytes_now = 0, bytes_advised = 0, analysed = 0;
    if (json) {
        cli_json_begin("analyze");
        cli_json_str("file", path);
        cli_json_str("requirement", require ? require : "psnr>=40");
        cli_json_array("tensors");
    } else {
        printf("file %s: %zu tensors; requirement %s\n\n", path, n, require ? require : "psnr>=40 (default)");
        printf("%-40s %-8s %-16s %-14s %9s %17s %17s %17s\n", "tensor", "dtype", "shape", "recommended", "PSNR dB",
               "e4m3 ovf/ftz", "f16 ovf/ftz", "bf16 ovf/ftz");
    }
    for (size_t i = 0; s == MXP_OK && i < n; i++) {
        cli_progress_set("round trips, tensor by tensor", (double)i / (double)n);
        const char *name = mxp_safetensors_name(st, i);
        if (!cli_is_float(mxp_safetensors_dtype(st, i))) {
            if (json) {
                cli_json_object(NULL);
                cli_json_str("name", name);
                cli_json_str("dtype", mxp_safetensors_dtype_name(st, i));
                cli_json_str("kept", "not a floating-point tensor mxp analyses");
                cli_json_close();
            } else {
                printf("%-40s %-8s (kept: not a floating-point tensor mxp analyses)\n", name,
                       mxp_safetensors_dtype_name(st, i));
            }
            continue;
        }
        mxp_array *a = NULL;
        mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES] = { 0 };
        mxp_advice adv = { 0 };
        s = mxp_safetensors_read(&a, st, i, MXP_DTYPE_INVALID, NULL);
        if (s == MXP_OK)
            s = mxp_recommend_dtype_rows(a, req, &adv, rows);
        if (s == MXP_OK) {
            analysed++;
            bytes_now += (size_t)mxp_array_size(a) * mxp_array_itemsize(a);
            bytes_advised += (size_t)mxp_array_size(a) * mxp_dtype_itemsize(adv.dtype);
            if (json) {
                cli_json_object(NULL);
                cli_json_str("name", name);
                cli_json_str("dtype", mxp_dtype_name(mxp_array_dtype(a)));
                cli_json_shape("shape", a);
                cli_json_int("elements", (long long)mxp_array_size(a));
                cli_analyze_json_candidates(rows);
                cli_json_str("recommended", mxp_dtype_name(adv.dtype));
                cli_json_str("reason", adv.reason);
                cli_json_close();
            } else {
                print_row(name, a, rows, &adv);
            }
        }
        mxp_array_free(a);
    }
    cli_progress_end();
    int rc = CLI_OK;
    if (s != MXP_OK) {
        if (json)
            printf("\n");
        rc = cli_mxp_error("analyze", NULL, s);
    } else if (json) {
        cli_json_close();
        cli_json_int("float_bytes", (long long)bytes_now);
        cli_json_int("float_bytes_recommended", (long long)bytes_advised);
        cli_json_end();
    } else {
        char b1[32], b2[32];
        printf("\n%zu floating-point tensors: %s now, %s stored each in its recommended dtype\n", analysed,
               cli_memory(b1, sizeof b1, bytes_now), cli_memory(b2, sizeof b2, bytes_advised));
    }
    mxp_safetensors_close(st);
    return rc;
}
