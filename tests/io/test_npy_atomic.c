/* mxp_npy_save never costs the file it replaces (docs/reliability.md,
 * "Atomic writes"): a write that fails (a file size limit) or a process
 * killed mid-write leaves the old file byte for byte; a FIFO or /dev/null
 * is written in place and never removed; permissions and symbolic links
 * are kept; no temporary file stays behind after a failure it survives. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "npy_util.h"

#define DIR_NAME "test_npy_atomic.d"
#define OLD_PATH DIR_NAME "/x.npy"

/* ---- helpers --------------------------------------------------------- */

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The whole file; *n its size.  The caller frees. */
static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: %s", path, strerror(errno));
    unsigned char *buf = malloc(1 << 22);
    assert_non_null(buf);
    *n = fread(buf, 1, 1 << 22, f);
    fclose(f);
    return buf;
}

/* A fresh DIR_NAME for each test. */
static int fresh_dir(void **state)
{
    (void)state;
    npy_fresh_dir(DIR_NAME);
    return 0;
}

/* How many entries DIR_NAME holds, and whether one is a temporary file. */
static int count_entries(bool *temp_seen) { return npy_count_entries(DIR_NAME, ".x.npy.", temp_seen); }

/* OLD_PATH holding a small valid .npy file; *old gets its bytes. */
static unsigned char *make_old_file(size_t *n)
{
    mxp_array *a = NULL;
    void *buf = NULL;
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, 10, 1), MXP_OK);
    assert_int_equal(mxp_npy_save_buffer(&buf, n, a), MXP_OK);
    write_bytes(OLD_PATH, buf, *n);
    unsigned char *copy = malloc(*n);
    assert_non_null(copy);
    memcpy(copy, buf, *n);
    mxp_free(buf);
    mxp_array_free(a);
    return copy;
}

static void assert_file_is(const char *path, const unsigned char *want, size_t n)
{
    size_t got_n;
    unsigned char *got = read_bytes(path, &got_n);
    assert_int_equal(got_n, n);
    assert_memory_equal(got, want, n);
    free(got);
}

/* 1 MiB of float32: far over the size limits below. */
static mxp_array *big_array(void)
{
    mxp_array *a = NULL;
    int64_t n = 1 << 18;
    assert_int_equal(mxp_array_random_uniform(&a, MXP_F32, 1, &n, -1, 1, 7), MXP_OK);
    return a;
}

/* In a child limited to 64 KiB per file: saves big_array() over OLD_PATH.
 * ignore_xfsz: the write fails with EFBIG (the child exits 0 if
 * mxp_npy_save said MXP_ERR_IO); else SIGXFSZ kills it mid-write. */
static int save_with_size_limit(bool ignore_xfsz)
{
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit lim = { 65536, 65536 }, none = { 0, 0 };
        setrlimit(RLIMIT_CORE, &none);
        if (ignore_xfsz)
            signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            _exit(3);
        mxp_array *a = big_array();
        const mxp_status st = mxp_npy_save(OLD_PATH, a);
        _exit(st == MXP_ERR_IO && strstr(mxp_last_error(), "write failed: File too large") ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* ---- tests ----------------------------------------------------------- */

static void test_npy_save_that_fails_keeps_the_old_file_byte_for_byte(void **state)
{
    (void)state;
    size_t n;
    unsigned char *old = make_old_file(&n);
    const int status = save_with_size_limit(true);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_file_is(OLD_PATH, old, n);
    bool temp;
    assert_int_equal(count_entries(&temp), 1); /* the temporary file is gone */
    assert_false(temp);
    free(old);
}

static void test_npy_save_killed_mid_write_keeps_the_old_file(void **state)
{
    (void)state;
    size_t n;
    unsigned char *old = make_old_file(&n);
    const int status = save_with_size_limit(false);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGXFSZ);
    assert_file_is(OLD_PATH, old, n);
    bool temp;
    assert_int_equal(count_entries(&temp), 2); /* what a kill cannot clean up */
    assert_true(temp);
    free(old);
}

static void test_npy_save_replaces_a_file_and_keeps_its_mode(void **state)
{
    (void)state;
    size_t n;
    free(make_old_file(&n));
    assert_int_equal(chmod(OLD_PATH, 0604), 0);
    mxp_array *a = big_array(), *b = NULL;
    assert_int_equal(mxp_npy_save(OLD_PATH, a), MXP_OK);
    struct stat st;
    assert_int_equal(stat(OLD_PATH, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0604);
    assert_int_equal(mxp_npy_load(&b, OLD_PATH), MXP_OK);
    assert_int_equal(mxp_array_size(b), mxp_array_size(a));
    assert_memory_equal(mxp_array_data(b), mxp_array_data(a), (size_t)mxp_array_size(a) * 4);
    mxp_array_free(b);
    /* A new file: 0666 less the umask, as fopen would create it. */
    const mode_t old_mask = umask(027);
    assert_int_equal(mxp_npy_save(DIR_NAME "/new.npy", a), MXP_OK);
    umask(old_mask);
    assert_int_equal(stat(DIR_NAME "/new.npy", &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    bool temp;
    assert_int_equal(count_entries(&temp), 2);
    assert_false(temp);
    mxp_array_free(a);
}

static void test_npy_save_through_a_symbolic_link_replaces_its_target(void **state)
{
    (void)state;
    size_t n;
    free(make_old_file(&n));
    assert_int_equal(symlink("x.npy", DIR_NAME "/link.npy"), 0);
    mxp_array *a = big_array(), *b = NULL;
    assert_int_equal(mxp_npy_save(DIR_NAME "/link.npy", a), MXP_OK);
    struct stat st;
    assert_int_equal(lstat(DIR_NAME "/link.npy", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(mxp_npy_load(&b, OLD_PATH), MXP_OK);
    assert_int_equal(mxp_array_size(b), mxp_array_size(a));
    mxp_array_free(b);
    mxp_array_free(a);
}

/* A link to a file that does not exist yet: the file is created, the link
 * stays (it was replaced by a regular file; issue 24 item 10). */
static void test_npy_save_through_a_dangling_link_creates_its_target(void **state)
{
    (void)state;
    assert_int_equal(symlink("new.npy", DIR_NAME "/dangling.npy"), 0);
    assert_int_equal(symlink("dangling.npy", DIR_NAME "/chain.npy"), 0); /* a link to the link */
    mxp_array *a = big_array(), *b = NULL;
    assert_int_equal(mxp_npy_save(DIR_NAME "/chain.npy", a), MXP_OK);
    struct stat st;
    assert_int_equal(lstat(DIR_NAME "/chain.npy", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(DIR_NAME "/dangling.npy", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(DIR_NAME "/new.npy", &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(mxp_npy_load(&b, DIR_NAME "/new.npy"), MXP_OK);
    assert_int_equal(mxp_array_size(b), mxp_array_size(a));
    mxp_array_free(b);
    /* a link into a folder that does not exist: an error, the link kept */
    assert_int_equal(symlink("no-such-folder/x.npy", DIR_NAME "/nowhere.npy"), 0);
    assert_int_equal(mxp_npy_save(DIR_NAME "/nowhere.npy", a), MXP_ERR_IO);
    assert_int_equal(lstat(DIR_NAME "/nowhere.npy", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    /* a loop of links: ELOOP, nothing replaced */
    assert_int_equal(symlink("loop2.npy", DIR_NAME "/loop1.npy"), 0);
    assert_int_equal(symlink("loop1.npy", DIR_NAME "/loop2.npy"), 0);
    assert_int_equal(mxp_npy_save(DIR_NAME "/loop1.npy", a), MXP_ERR_IO);
    assert_int_equal(lstat(DIR_NAME "/loop1.npy", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    mxp_array_free(a);
}

static void test_npy_save_to_dev_null_and_a_directory_removes_nothing(void **state)
{
    (void)state;
    mxp_array *a = big_array();
    struct stat st;
    assert_int_equal(mxp_npy_save("/dev/null", a), MXP_OK);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(mxp_npy_save(DIR_NAME, a), MXP_ERR_IO);
    npy_assert_contains(mxp_last_error(), "npy: " DIR_NAME ": cannot create: Is a directory");
    assert_int_equal(stat(DIR_NAME, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    mxp_array_free(a);
}

/* A FIFO is written in place: a reader gets the whole file; a reader
 * that goes away makes the save fail, and the FIFO stays. */
static void test_npy_save_to_a_fifo_writes_in_place_and_never_removes_it(void **state)
{
    (void)state;
    const char *fifo = DIR_NAME "/fifo";
    assert_int_equal(mkfifo(fifo, 0600), 0);
    mxp_array *a = big_array(), *b = NULL;
    for (int reader_reads = 1; reader_reads >= 0; reader_reads--) {
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) { /* the reader: copies the FIFO to a file, or leaves at once */
            const int in = open(fifo, O_RDONLY);
            FILE *out = fopen(DIR_NAME "/copy.npy", "wb");
            char buf[65536];
            ssize_t got;
            while (reader_reads && in >= 0 && out && (got = read(in, buf, sizeof buf)) > 0)
                fwrite(buf, 1, (size_t)got, out);
            _exit(in >= 0 && out && fclose(out) == 0 ? 0 : 1);
        }
        void (*old)(int) = signal(SIGPIPE, SIG_IGN);
        const mxp_status st = mxp_npy_save(fifo, a);
        signal(SIGPIPE, old);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(status, 0);
        if (reader_reads) {
            assert_int_equal(st, MXP_OK);
            assert_int_equal(mxp_npy_load(&b, DIR_NAME "/copy.npy"), MXP_OK);
            assert_memory_equal(mxp_array_data(b), mxp_array_data(a), (size_t)mxp_array_size(a) * 4);
            mxp_array_free(b);
        } else {
            assert_int_equal(st, MXP_ERR_IO);
            npy_assert_contains(mxp_last_error(), "write failed: Broken pipe");
        }
        struct stat sb;
        assert_int_equal(stat(fifo, &sb), 0);
        assert_true(S_ISFIFO(sb.st_mode));
    }
    mxp_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_npy_save_that_fails_keeps_the_old_file_byte_for_byte, fresh_dir),
        cmocka_unit_test_setup(test_npy_save_killed_mid_write_keeps_the_old_file, fresh_dir),
        cmocka_unit_test_setup(test_npy_save_replaces_a_file_and_keeps_its_mode, fresh_dir),
        cmocka_unit_test_setup(test_npy_save_through_a_symbolic_link_replaces_its_target, fresh_dir),
        cmocka_unit_test_setup(test_npy_save_through_a_dangling_link_creates_its_target, fresh_dir),
        cmocka_unit_test_setup(test_npy_save_to_dev_null_and_a_directory_removes_nothing, fresh_dir),
        cmocka_unit_test_setup(test_npy_save_to_a_fifo_writes_in_place_and_never_removes_it, fresh_dir),
    };
    const int failed = cmocka_run_group_tests(tests, NULL, NULL);
    fresh_dir(NULL);
    rmdir(DIR_NAME);
    return failed;
}
