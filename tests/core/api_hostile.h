/* The hostile-argument harness (test_api_hostile): shared pieces.
 *
 * A group function lists its cases one per line with the macros below;
 * the runner calls it once to list them (nothing runs), then once per case
 * in a forked child with c->target set to that case: only that case's call
 * is made, and the child exits with its verdict.  The function's name in
 * the report comes from the call itself (#f), so a case cannot be filed
 * under another function. */
#ifndef MXP_TEST_API_HOSTILE_H
#define MXP_TEST_API_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>

#include "mxp.h"

typedef struct hctx {
    int target;      /* the case to run; -1: list only */
    int index;       /* cases seen so far */
    bool ran;        /* the target case was reached */
    int verdict;     /* HV_* */
    char detail[200];
    void (*seen)(struct hctx *c, const char *fn, const char *what); /* listing */
} hctx;

enum {
    HV_PASS = 0,
    HV_OK_RETURNED = 10,  /* MXP_OK on a hostile argument */
    HV_NO_MESSAGE = 11,   /* an error status with mxp_last_error() empty */
    HV_BAD_STATUS = 12,   /* a value that is no mxp_status */
    HV_WRONG_VALUE = 13,  /* not the documented error value */
    HV_NOT_REACHED = 14   /* the child found no case of that number */
};

/* True (and the thread's error cleared) when this is the case to run. */
bool hcase(hctx *c, const char *fn, const char *what);
/* Verdicts. */
void hstatus(hctx *c, mxp_status s);  /* an error status with a sentence */
void hany(hctx *c, mxp_status s);     /* a legitimate edge: MXP_OK, or an error with a sentence */
void hint(hctx *c, long long got, long long want);
void hstr(hctx *c, const char *got, const char *want);
void hnull(hctx *c, const void *p);
void hnonnull(hctx *c, const void *p);
void hnan(hctx *c, double x);

/* The call f(...) must fail with a status and a sentence. */
#define ERR(what, f, ...) if (hcase(c, #f, what)) hstatus(c, f(__VA_ARGS__))
/* A legitimate edge value: any status (with a sentence if not MXP_OK), no signal. */
#define ANY(what, f, ...) if (hcase(c, #f, what)) hany(c, f(__VA_ARGS__))
/* f(...) returns a documented value (integer, enum, bool). */
#define VAL(what, want, f, ...) if (hcase(c, #f, what)) hint(c, (long long)(f(__VA_ARGS__)), (long long)(want))
#define STR(what, want, f, ...) if (hcase(c, #f, what)) hstr(c, f(__VA_ARGS__), want)
#define NUL(what, f, ...) if (hcase(c, #f, what)) hnull(c, f(__VA_ARGS__))
#define NONNUL(what, f, ...) if (hcase(c, #f, what)) hnonnull(c, f(__VA_ARGS__))
#define ISNAN(what, f, ...) if (hcase(c, #f, what)) hnan(c, f(__VA_ARGS__))
/* A void function: no signal, no abort, no hang. */
#define RUN(what, f, ...) if (hcase(c, #f, what)) f(__VA_ARGS__)
/* A function of no arguments: called once (there is nothing to abuse). */
#define NOARGS(f) if (hcase(c, #f, "no arguments to abuse: called once")) (void)f()
#define NOARGS_NONNUL(f) if (hcase(c, #f, "no arguments to abuse: called once, not NULL")) hnonnull(c, f())

/* Hostile values. */
#define BAD_DT ((mxp_dtype)9999)
#define NEG_DT ((mxp_dtype)-1)

/* Valid objects a case puts beside its one hostile argument (made once by
 * the parent; every child gets its own copy). */
typedef struct hfix {
    mxp_array *f32_23, *f32_32, *f32_4, *f64_4, *s8_4, *u8_4, *u8_23, *s8_32;
    mxp_array *f32_0d, *f32_empty, *readonly_4, *f32_5;
    mxp_array *s8_big, *u8_big; /* int8 100..103, uint8 200..203: no int4 / uint4 codes */
    mxp_qparams qp_s8;      /* int8 per tensor, from f32_4 */
    mxp_qtensor *qt_u8_23;  /* uint8 [2, 3] per tensor */
    mxp_qtensor *qt_s8_32;  /* int8 [3, 2] per tensor */
    mxp_qtensor *qt_s8_w;   /* int8 [2, 3] weight (N = 2, K = 3) */
    mxp_optimizer *sgd;     /* one float32 parameter */
    mxp_loss_scaler *scaler;
    mxp_autocast *autocast;
    mxp_monitor *monitor;   /* one record: "w", a weight */
    mxp_observer *obs_minmax, *obs_fresh;
    float buf_f32[256];
    uint8_t buf_u8[256];
    int64_t buf_i64[64];
    uint64_t buf_u64[64];
    double counts[2048];
} hfix;

extern hfix H;

/* The groups (one per area). */
void hostile_core(hctx *c);    /* common, dtype, cpu, alloc, threads, convert */
void hostile_array(hctx *c);   /* array, io */
void hostile_ops(hctx *c);     /* ops, gemm */
void hostile_nn(hctx *c);      /* nn */
void hostile_conv(hctx *c);    /* nn: convolution, pooling, batch norm (called by hostile_nn) */
void hostile_quant(hctx *c);   /* quant, mx, analysis */
void hostile_train(hctx *c);   /* train */
void hostile_plugin(hctx *c);  /* plugin, profile */

#endif
