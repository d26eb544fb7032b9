/* Plugins mxp must refuse (tests/plugin/bad_plugin.c, one library per
 * case), files that are not plugins, and a plugin whose operators fail at
 * call time: each a clear error, nothing added, no crash. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mxp.h"

static const char *plugin(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/libmxp_test_plugin_%s.so", MXP_TEST_PLUGINS, name);
    return path;
}

/* Loading fails with status st, the sentence contains `says`, and nothing
 * was added. */
static void refused(const char *path, mxp_status st, const char *says)
{
    const int before = mxp_op_count();
    int n = -1;
    assert_int_equal(mxp_ops_load(path, &n), st);
    assert_int_equal(n, 0);
    if (!strstr(mxp_last_error(), says))
        fail_msg("'%s' does not say '%s'", mxp_last_error(), says);
    assert_int_equal(mxp_op_count(), before);
}

static void test_refused(void **state)
{
    (void)state;
    refused(plugin("nosymbol"), MXP_ERR_INVALID_ARGUMENT, "is not an mxp plugin: it has no function mxp_plugin_register");
    refused(plugin("abi"), MXP_ERR_INVALID_ARGUMENT, "built for plugin ABI version 99; this mxp has version 1");
    refused(plugin("dup"), MXP_ERR_INVALID_ARGUMENT, "operator 'copy': declared twice by this plugin");
    refused(plugin("sig"), MXP_ERR_INVALID_ARGUMENT, "'float33' is not a dtype name");
    refused(plugin("name"), MXP_ERR_INVALID_ARGUMENT, "operator name 'Copy-1'");
    refused(plugin("fail"), MXP_ERR_INVALID_ARGUMENT, "registration failed (returned 1): this plugin needs a GPU");
    refused(plugin("none"), MXP_ERR_INVALID_ARGUMENT, "declared no operators");
    refused("/nonexistent/libnothing.so", MXP_ERR_IO, "cannot load plugin /nonexistent/libnothing.so");
    refused(NULL, MXP_ERR_INVALID_ARGUMENT, "path is NULL");
    refused("", MXP_ERR_INVALID_ARGUMENT, "path is NULL or empty");
    /* a file that is not a shared library at all */
    char path[] = "/tmp/mxp-not-a-plugin-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "#!/bin/sh\necho hello\n", 21), 21);
    close(fd);
    refused(path, MXP_ERR_IO, "cannot load plugin");
    unlink(path);
    /* a FIFO (dlopen would wait for a writer) and a directory */
    char dir[] = "/tmp/mxp-plugin-dir-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/fifo.so", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    refused(fifo, MXP_ERR_IO, "it is not a regular file");
    refused(dir, MXP_ERR_IO, "it is not a regular file");
    unlink(fifo);
    rmdir(dir);
    /* a real library that is not a plugin */
    refused("libm.so.6", MXP_ERR_INVALID_ARGUMENT, "is not an mxp plugin");
}

/* A name another plugin declared: all of the second plugin is refused. */
static void test_clash(void **state)
{
    (void)state;
    int n;
    assert_int_equal(mxp_ops_load(MXP_EXAMPLE_OPS, &n), MXP_OK);
    refused(plugin("clash"), MXP_ERR_INVALID_ARGUMENT, "operator 'gelu' is already declared by");
}

static void test_failing_operators(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(mxp_ops_load(plugin("hostile"), &n), MXP_OK);
    assert_int_equal(n, 4);
    const int64_t len = 10;
    mxp_array *a = NULL, *y = NULL;
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 1, &len), MXP_OK);
    assert_int_equal(mxp_op_call(&y, "always_fails", (const mxp_array *[]){ a }, 1, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_null(y);
    assert_non_null(strstr(mxp_last_error(), "its kernel failed: the kernel ran out of patience"));
    assert_int_equal(mxp_op_call(&y, "bad_shape", (const mxp_array *[]){ a }, 1, NULL), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "gave 99 dimensions"));
    /* no reference, no check */
    mxp_op_check_report r = { 0 };
    int nr;
    assert_int_equal(mxp_op_check("hostile_copy", NULL, &r, 1, &nr), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "has no float64 reference"));
    /* a general operator without check_shapes */
    assert_int_equal(mxp_op_check("always_fails", &(mxp_op_check_opts){ .reference = NULL }, &r, 1, &nr),
                     MXP_ERR_INVALID_ARGUMENT);
    /* a kernel for a level above the one in use */
    const mxp_isa was = mxp_get_isa();
    assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
    assert_int_equal(mxp_op_call(&y, "needs_avx512bf16", (const mxp_array *[]){ a }, 1, NULL), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "at ISA level scalar"));
    assert_int_equal(mxp_op_check("needs_avx512bf16", NULL, &r, 1, &nr), MXP_ERR_INVALID_ARGUMENT);
    mxp_set_isa(was);
    /* bad arguments to the listing */
    mxp_op_info info = { .struct_size = 3 };
    assert_int_equal(mxp_op_info_at(0, &info), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_op_info_at(-1, &(mxp_op_info){ 0 }), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_op_info_at(0, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_op_kernel_at("always_fails", 5, NULL, NULL, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_clash),
        cmocka_unit_test(test_failing_operators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
