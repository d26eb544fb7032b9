/* libFuzzer target for `mxp train --data DIR` (make check-fuzz): the bytes
 * are digits_x.npy then digits_y.npy (npy_pair.h), read by the command's
 * own reader (tools/mxp/train_data.c, digits_load_buffers).  Any bytes must
 * give data that keeps the reader's promises or an error with a sentence,
 * never a crash, a leak or undefined behaviour; data that loads is then
 * trained on as the command does (widths from train_fit_setup, one short
 * epoch in float32 and in float16 with loss scaling, then the int8 and
 * float8 deployment, once per width while fuzzing), which must run
 * cleanly.  tests/fuzz/test_fuzz_replay.c
 * replays tests/fuzz/regressions_train_data/ in make check. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mxp.h"
#include "npy_pair.h"
#include "train.h"

static void check_loaded(const digits *d)
{
    if (d->features < 1 || d->features > DIGITS_MAX_FEATURES || d->classes != 10 || d->n_train < 1 ||
        d->n_test < 1 || d->n_train + d->n_test < DIGITS_MIN_ROWS)
        abort();
    for (int64_t i = 0; i < d->n_train * d->features; i++)
        if (!(d->x_train[i] >= 0.0f && d->x_train[i] <= 1.0f))
            abort();
    for (int64_t i = 0; i < d->n_test * d->features; i++)
        if (!(d->x_test[i] >= 0.0f && d->x_test[i] <= 1.0f))
            abort();
    for (int64_t i = 0; i < d->n_train; i++)
        if (d->y_train[i] < 0 || d->y_train[i] > 9)
            abort();
    for (int64_t i = 0; i < d->n_test; i++)
        if (d->y_test[i] < 0 || d->y_test[i] > 9)
            abort();
}

/* One input: returns 1 when it got through the checks (the data loads), 0
 * when refused; aborts on a broken promise. */
static int fuzz_train_data_one(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        mxp_set_num_threads(1);
        once = 1;
    }
    const size_t nx = npy_pair_split(data, size);
    digits d;
    char err[512] = "";
    if (digits_load_buffers(&d, data, nx, data + nx, size - nx, 0.2, 1, err, sizeof err) != MXP_OK) {
        if (!err[0] || d.x_train || d.y_train || d.n_train || d.features)
            abort(); /* a failure says why and holds nothing */
        return 0;
    }
    check_loaded(&d);
    train_setup s;
    train_default_setup(&s);
    s.epochs = 1;
    s.sizes[1] = s.sizes[2] = 8;
    train_fit_setup(&s, &d);
    train_result fp32, fp16;
    ptq_result pq[PTQ_ROWS];
    /* The deployment (four observers, KL's search among them) costs about
     * half a second under the sanitizers: while fuzzing, once per input
     * width (a crash file alone still runs it); in the replay, always. */
#ifdef MXP_FUZZ_NO_MAIN
    const bool ptq = true;
#else
    static bool ptq_done[DIGITS_MAX_FEATURES + 1];
    const bool ptq = !ptq_done[d.features];
    ptq_done[d.features] = true;
#endif
    if (train_run(&s, &d, &train_configs[0], &fp32) != MXP_OK ||
        train_run(&s, &d, &train_configs[2], &fp16) != MXP_OK || (ptq && train_ptq(&s, &d, &fp32, pq) != MXP_OK))
        abort();
    if (!(fp32.test_accuracy >= 0.0 && fp32.test_accuracy <= 1.0) || fp32.steps != (d.n_train + 63) / 64)
        abort();
    train_result_free(&fp32);
    train_result_free(&fp16);
    digits_free(&d);
    return 1;
}

#ifndef MXP_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_train_data_one(data, size);
    return 0;
}
#endif
