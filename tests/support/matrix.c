/* The GEMM tests' matrix harness (matrix.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/matrix.h"

const mxp_trans trans_pairs[4][2] = {
    { MXP_NO_TRANS, MXP_NO_TRANS }, { MXP_NO_TRANS, MXP_TRANS }, { MXP_TRANS, MXP_NO_TRANS }, { MXP_TRANS, MXP_TRANS },
};

mat mat_new(mxp_dtype dt, size_t rows, size_t cols, size_t ld, uint8_t even, uint8_t odd)
{
    mat x = { dt, rows, cols, ld, mxp_dtype_itemsize(dt), 0, NULL, NULL };
    assert_true(x.isz > 0);
    x.bytes = 2 * GUARD + rows * ld * x.isz;
    x.buf = malloc(x.bytes);
    assert_non_null(x.buf);
    for (size_t i = 0; i < x.bytes; i++)
        x.buf[i] = i & 1 ? odd : even;
    x.data = x.buf + GUARD;
    return x;
}

void mat_free(mat *x)
{
    free(x->buf);
    x->buf = x->data = NULL;
}

void mat_set(mat *x, const double *v)
{
    for (size_t r = 0; r < x->rows; r++)
        assert_int_equal(mxp_convert(x->data + r * x->ld * x->isz, x->dt, v + r * x->cols, MXP_F64, x->cols, NULL),
                         MXP_OK);
}

void mat_get(const mat *x, double *v)
{
    for (size_t r = 0; r < x->rows; r++)
        assert_int_equal(mxp_convert(v + r * x->cols, MXP_F64, x->data + r * x->ld * x->isz, x->dt, x->cols, NULL),
                         MXP_OK);
}

static bool is_element_byte(const mat *x, size_t off)
{
    if (off < GUARD || off >= x->bytes - GUARD)
        return false;
    return (off - GUARD) / x->isz % x->ld < x->cols;
}

void mat_expect_padding_untouched(const mat *x, const unsigned char *before, const char *desc)
{
    for (size_t i = 0; i < x->bytes; i++)
        if (!is_element_byte(x, i) && x->buf[i] != before[i])
            fail_msg("%s: byte %td (relative to C's first element) outside C's elements changed 0x%02x -> 0x%02x",
                     desc, (ptrdiff_t)i - GUARD, before[i], x->buf[i]);
}

size_t ld_for(size_t cols, size_t pad)
{
    return cols + pad ? cols + pad : 1;
}

unsigned char *dup_bytes(const void *p, size_t n)
{
    unsigned char *q = malloc(n ? n : 1);
    assert_non_null(q);
    memcpy(q, p, n);
    return q;
}

static bool word_char(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool mentions(const char *msg, const char *word)
{
    const size_t len = strlen(word);
    for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word))
        if ((p == msg || !word_char(p[-1])) && !word_char(p[len]))
            return true;
    return false;
}

int restore_defaults(void **state)
{
    (void)state;
    mxp_set_alloc_fail_after(0);
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    mxp_set_num_threads(0);
    return 0;
}
