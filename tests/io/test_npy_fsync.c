/* The atomic save's durability step (docs/reliability.md, "Atomic
 * writes"): fsync runs on the temporary file, after all of it is written
 * and before the rename (the target still holds the old bytes), and then
 * on the directory; a failing fsync gives MXP_ERR_IO with "fsync" in the
 * message, keeps the old file byte for byte and leaves no temporary file.
 *
 * fsync is wrapped at link time (-Wl,--wrap=fsync, tests/CMakeLists.txt):
 * __wrap_fsync counts the calls, notes what each was made on, and fails
 * on request. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mxp.h"
#include "npy_util.h"

#define DIR_NAME "test_npy_fsync.d"
#define TARGET DIR_NAME "/x.npy"

int __real_fsync(int fd);
int __wrap_fsync(int fd);

enum { MAX_CALLS = 8 };

static struct {
    int calls;
    bool fail_files; /* fail on a regular file */
    struct {
        bool regular, directory, temp_name, target_old;
        long long size;
    } call[MAX_CALLS];
    const unsigned char *old; /* the target's bytes before the save */
    size_t old_n;
} spy;

static bool target_holds_old_bytes(void)
{
    FILE *f = fopen(TARGET, "rb");
    if (!f)
        return spy.old == NULL;
    unsigned char buf[4096];
    const size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return spy.old && n == spy.old_n && !memcmp(buf, spy.old, n);
}

int __wrap_fsync(int fd)
{
    struct stat st;
    char link[64], name[4096] = "";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t len = readlink(link, name, sizeof name - 1);
    if (len > 0)
        name[len] = '\0';
    const char *base = strrchr(name, '/');
    if (spy.calls < MAX_CALLS && fstat(fd, &st) == 0) {
        spy.call[spy.calls].regular = S_ISREG(st.st_mode);
        spy.call[spy.calls].directory = S_ISDIR(st.st_mode);
        spy.call[spy.calls].temp_name = base && !strncmp(base + 1, ".x.npy.", 7);
        spy.call[spy.calls].target_old = target_holds_old_bytes();
        spy.call[spy.calls].size = (long long)st.st_size;
    }
    spy.calls++;
    if (spy.fail_files && S_ISREG(st.st_mode)) {
        errno = EIO;
        return -1;
    }
    return __real_fsync(fd);
}

static int fresh_dir(void **state)
{
    (void)state;
    npy_fresh_dir(DIR_NAME);
    memset(&spy, 0, sizeof spy);
    return 0;
}

static int entries(bool *temp_seen) { return npy_count_entries(DIR_NAME, ".x.npy.", temp_seen); }

/* The .npy bytes of arange(n) in float32. */
static unsigned char *npy_of_arange(int n, size_t *size)
{
    mxp_array *a = NULL;
    void *buf = NULL;
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, n, 1), MXP_OK);
    assert_int_equal(mxp_npy_save_buffer(&buf, size, a), MXP_OK);
    unsigned char *copy = malloc(*size);
    assert_non_null(copy);
    memcpy(copy, buf, *size);
    mxp_free(buf);
    mxp_array_free(a);
    return copy;
}

static void write_file(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_fsync_runs_on_the_whole_temporary_file_before_the_rename(void **state)
{
    (void)state;
    size_t old_n, new_n;
    unsigned char *old = npy_of_arange(10, &old_n), *want = npy_of_arange(300, &new_n);
    write_file(TARGET, old, old_n);
    spy.old = old;
    spy.old_n = old_n;
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, 300, 1), MXP_OK);
    assert_int_equal(mxp_npy_save(TARGET, a), MXP_OK);
    /* the temporary file, whole, while the target is still the old file;
     * then the directory (best effort) */
    assert_true(spy.calls >= 1);
    assert_true(spy.call[0].regular);
    assert_true(spy.call[0].temp_name);
    assert_true(spy.call[0].target_old);
    assert_int_equal(spy.call[0].size, (long long)new_n);
    assert_int_equal(spy.calls, 2);
    assert_true(spy.call[1].directory);
    assert_false(spy.call[1].target_old); /* after the rename */
    /* a new file: fsync'ed the same way */
    unlink(TARGET);
    memset(&spy, 0, sizeof spy);
    assert_int_equal(mxp_npy_save(TARGET, a), MXP_OK);
    assert_int_equal(spy.calls, 2);
    assert_true(spy.call[0].regular && spy.call[0].temp_name && spy.call[0].target_old);
    assert_int_equal(spy.call[0].size, (long long)new_n);
    mxp_array_free(a);
    free(old);
    free(want);
}

static void test_a_failing_fsync_keeps_the_old_file_and_leaves_no_temporary_file(void **state)
{
    (void)state;
    size_t old_n;
    unsigned char *old = npy_of_arange(10, &old_n);
    write_file(TARGET, old, old_n);
    spy.old = old;
    spy.old_n = old_n;
    spy.fail_files = true;
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, 300, 1), MXP_OK);
    assert_int_equal(mxp_npy_save(TARGET, a), MXP_ERR_IO);
    const char *msg = mxp_last_error();
    if (!strstr(msg, "fsync") || !strstr(msg, "x.npy"))
        fail_msg("message: %s", msg);
    assert_int_equal(spy.calls, 1); /* no directory sync after a failure */
    assert_true(target_holds_old_bytes());
    bool temp;
    assert_int_equal(entries(&temp), 1);
    assert_false(temp);
    /* a new file that fails: nothing at all is left */
    unlink(TARGET);
    spy.old = NULL;
    assert_int_equal(mxp_npy_save(TARGET, a), MXP_ERR_IO);
    assert_int_equal(entries(&temp), 0);
    mxp_array_free(a);
    free(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_fsync_runs_on_the_whole_temporary_file_before_the_rename, fresh_dir),
        cmocka_unit_test_setup(test_a_failing_fsync_keeps_the_old_file_and_leaves_no_temporary_file, fresh_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
