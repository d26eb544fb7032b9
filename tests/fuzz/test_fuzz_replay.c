/* make check's replay of the fuzz targets of the files the CLI reads
 * besides .npy (fuzz_train_data, fuzz_quant_gemm_inputs) and of the
 * safetensors reader (fuzz_safetensors): every file of
 * tests/fuzz/regressions_<target>/ and corpus_<target>/ through the
 * target's own body (the same source, compiled without libFuzzer's entry),
 * which aborts on a broken promise; the seeds must get through the checks.
 * The train data is also written to a folder as digits_x.npy and
 * digits_y.npy and read by digits_load, the path `mxp train --data DIR`
 * takes, which must agree with the buffer reader. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define MXP_FUZZ_NO_MAIN 1
#include "fuzz/fuzz_quant_gemm_inputs.c"
#include "fuzz/fuzz_safetensors.c"
#include "fuzz/fuzz_train_data.c"

static unsigned char data[1 << 20];

static size_t read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(data, 1, sizeof data, f);
    assert_true(feof(f)); /* every file fits */
    fclose(f);
    return n;
}

static void write_all(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* digits_load on a folder holding the two halves must say what
 * digits_load_buffers says (the status; the same data when it loads). */
static void train_data_from_files(const unsigned char *p, size_t n, const char *name)
{
    char dir[] = "/tmp/mxp-replay-XXXXXX", x[64], y[64];
    assert_non_null(mkdtemp(dir));
    snprintf(x, sizeof x, "%s/digits_x.npy", dir);
    snprintf(y, sizeof y, "%s/digits_y.npy", dir);
    const size_t nx = npy_pair_split(p, n);
    write_all(x, p, nx);
    if (nx < n) /* no second file: digits_y.npy is missing */
        write_all(y, p + nx, n - nx);
    digits a, b;
    char ea[512] = "", eb[512] = "";
    const mxp_status sa = digits_load(&a, dir, 0.2, 1, ea, sizeof ea);
    const mxp_status sb = digits_load_buffers(&b, p, nx, p + nx, n - nx, 0.2, 1, eb, sizeof eb);
    if ((sa == MXP_OK) != (sb == MXP_OK))
        fail_msg("%s: from files '%s', from buffers '%s'", name, ea, eb);
    if (sa == MXP_OK) {
        assert_int_equal(a.features, b.features);
        assert_int_equal(a.n_train, b.n_train);
        assert_memory_equal(a.x_train, b.x_train, (size_t)(a.n_train * a.features) * sizeof(float));
        assert_memory_equal(a.y_test, b.y_test, (size_t)a.n_test * sizeof(int32_t));
    } else {
        assert_true(strncmp(ea, dir, strlen(dir)) == 0); /* the message names the file */
    }
    digits_free(&a);
    digits_free(&b);
    unlink(x);
    unlink(y);
    assert_int_equal(rmdir(dir), 0);
}

/* Every file of tests/fuzz/<folder> through one; returns how many there
 * were and counts those that got through in *passed. */
static int replay(const char *folder, int (*one)(const uint8_t *, size_t), bool files, int *passed)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz/%s", MXP_TESTS_DIR, folder);
    DIR *d = opendir(path);
    assert_non_null(d);
    int count = 0;
    *passed = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".md"))
            continue;
        snprintf(path, sizeof path, "%s/fuzz/%s/%s", MXP_TESTS_DIR, folder, e->d_name);
        const size_t n = read_all(path);
        *passed += one(data, n);
        if (files)
            train_data_from_files(data, n, path);
        count++;
    }
    closedir(d);
    return count;
}

static void test_train_data_regressions_and_seeds(void **state)
{
    (void)state;
    int passed;
    assert_true(replay("regressions_train_data", fuzz_train_data_one, true, &passed) >= 5);
    const int seeds = replay("corpus_train_data", fuzz_train_data_one, true, &passed);
    assert_true(seeds >= 4);
    assert_int_equal(passed, seeds);
}

static void test_quant_gemm_regressions_and_seeds(void **state)
{
    (void)state;
    int passed;
    assert_true(replay("regressions_quant_gemm", fuzz_quant_gemm_one, false, &passed) >= 4);
    const int seeds = replay("corpus_quant_gemm", fuzz_quant_gemm_one, false, &passed);
    assert_true(seeds >= 5);
    assert_int_equal(passed, seeds);
}

static void test_safetensors_regressions_and_seeds(void **state)
{
    (void)state;
    int passed;
    assert_true(replay("regressions_safetensors", fuzz_safetensors_one, false, &passed) >= 7);
    assert_int_equal(passed, 1); /* too_many_dims opens (its tensor is refused by read); the others are refused */
    const int seeds = replay("corpus_safetensors", fuzz_safetensors_one, false, &passed);
    assert_true(seeds >= 4);
    assert_int_equal(passed, seeds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_train_data_regressions_and_seeds),
        cmocka_unit_test(test_quant_gemm_regressions_and_seeds),
        cmocka_unit_test(test_safetensors_regressions_and_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
