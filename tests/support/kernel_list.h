/* What the kernel-list tests of src/nn/'s tables share: a list's lines as
 * a test expands them ({ #fn, isa }), and the check that a dispatch table
 * is that list, line for line.  Include after <cmocka.h>. */
#ifndef MXP_TESTS_SUPPORT_KERNEL_LIST_H
#define MXP_TESTS_SUPPORT_KERNEL_LIST_H

#include <stddef.h>

#include "core/dispatch.h"

typedef struct kl_listed {
    const char *name;
    mxp_isa isa;
} kl_listed;

static inline void kl_expect_table(const mxp_kernel *k, size_t n, const kl_listed *l, size_t nl)
{
    assert_int_equal(n, nl);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(k[i].name, l[i].name);
        assert_int_equal(k[i].isa, l[i].isa);
    }
}

#endif
