/* MXP_NUM_THREADS, MXP_ISA and MXP_HUGEPAGES are parsed strictly: a value that is not
 * what the variable takes is ignored with one message on stderr (not
 * silently, and not half-read as atoi would: "4abc" is not 4); a thread
 * count above MXP_MAX_THREADS is capped with a message; ISA names are
 * case-insensitive.  The library reads the environment once per process,
 * so each case runs in a forked child (this process never asks first). */
#define _POSIX_C_SOURCE 200809L /* fork, setenv, waitpid */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mxp.h"

typedef enum { ASK_THREADS, ASK_ISA, ASK_HUGEPAGES } question;

/* Runs the question in a child with name=value in its environment (value
 * NULL: unset); *said gets what the child wrote to stderr, the return
 * value is the answer (the thread count, or the ISA level). */
static int ask_child(question q, const char *name, const char *value, char *said, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL); /* the child's exit() must not write this process's buffers again */
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        if (value)
            setenv(name, value, 1);
        else
            unsetenv(name);
        const int answer = q == ASK_THREADS ? mxp_get_num_threads()
                         : q == ASK_ISA     ? (int)mxp_isa_current()
                                            : (int)mxp_hugepages_enabled();
        /* asked again: no second message */
        const int again = q == ASK_THREADS ? mxp_get_num_threads()
                        : q == ASK_ISA     ? (int)mxp_isa_current()
                                           : (int)mxp_hugepages_enabled();
        dprintf(fds[1], "answer=%d\n", answer == again ? answer : -1);
        exit(0); /* not _exit: a --coverage build writes the child's counts at exit */
    }
    close(fds[1]);
    size_t len = 0;
    for (ssize_t r; len + 1 < cap && (r = read(fds[0], said + len, cap - 1 - len)) > 0;)
        len += (size_t)r;
    said[len] = '\0';
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *at = strstr(said, "answer=");
    assert_non_null(at);
    const int answer = atoi(at + 7);
    said[at - said] = '\0'; /* the messages only */
    return answer;
}

static int online_cpus(void)
{
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MXP_MAX_THREADS ? MXP_MAX_THREADS : (int)n;
}

static void test_env_num_threads_rejects_what_is_not_a_positive_integer(void **state)
{
    (void)state;
    static const char *const bad[] = { "4abc", "abc", "0", "-1", " 4", "4 ", "+4", "0x4", "1e2", "4.0" };
    char said[512], want[128];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const int n = ask_child(ASK_THREADS, "MXP_NUM_THREADS", bad[i], said, sizeof said);
        snprintf(want, sizeof want, "mxp: MXP_NUM_THREADS='%s' is not a positive integer; ignored\n", bad[i]);
        if (strcmp(said, want) != 0 || n != online_cpus()) {
            print_error("MXP_NUM_THREADS='%s': %d threads, stderr \"%s\"; want %d and \"%s\"\n", bad[i], n, said,
                        online_cpus(), want);
            fail();
        }
    }
}

static void test_env_num_threads_takes_a_count_and_caps_it(void **state)
{
    (void)state;
    char said[512];
    assert_int_equal(ask_child(ASK_THREADS, "MXP_NUM_THREADS", "3", said, sizeof said), 3);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_THREADS, "MXP_NUM_THREADS", "007", said, sizeof said), 7);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_THREADS, "MXP_NUM_THREADS", "256", said, sizeof said), 256);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_THREADS, "MXP_NUM_THREADS", "", said, sizeof said), online_cpus());
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_THREADS, "MXP_NUM_THREADS", NULL, said, sizeof said), online_cpus());
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_THREADS, "MXP_NUM_THREADS", "1000", said, sizeof said), MXP_MAX_THREADS);
    assert_string_equal(said, "mxp: MXP_NUM_THREADS='1000' is above the maximum of 256 threads; using 256\n");
    assert_int_equal(ask_child(ASK_THREADS, "MXP_NUM_THREADS", "99999999999999999999999", said, sizeof said),
                     MXP_MAX_THREADS);
    assert_non_null(strstr(said, "is above the maximum of 256 threads; using 256"));
}

static void test_env_isa_names_are_case_insensitive_and_unknown_ones_said(void **state)
{
    (void)state;
    char said[512];
    const int top = ask_child(ASK_ISA, "MXP_ISA", NULL, said, sizeof said); /* what the CPU supports */
    assert_string_equal(said, "");
    const int avx2 = top < MXP_ISA_AVX2 ? top : MXP_ISA_AVX2;
    assert_int_equal(ask_child(ASK_ISA, "MXP_ISA", "AVX2", said, sizeof said), avx2);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_ISA, "MXP_ISA", "Scalar", said, sizeof said), MXP_ISA_SCALAR);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_ISA, "MXP_ISA", "avx512bf16", said, sizeof said),
                     top < MXP_ISA_AVX512BF16 ? top : MXP_ISA_AVX512BF16);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_ISA, "MXP_ISA", "AMX", said, sizeof said), top);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_ISA, "MXP_ISA", "", said, sizeof said), top);
    assert_string_equal(said, "");
    static const char *const bad[] = { "avx3", "avx2 ", "sse", "2" };
    char want[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const int isa = ask_child(ASK_ISA, "MXP_ISA", bad[i], said, sizeof said);
        snprintf(want, sizeof want, "mxp: MXP_ISA='%s' is not one of scalar, avx2, avx512, avx512bf16, amx; ignored\n",
                 bad[i]);
        if (strcmp(said, want) != 0 || isa != top) {
            print_error("MXP_ISA='%s': level %d, stderr \"%s\"; want %d and \"%s\"\n", bad[i], isa, said, top, want);
            fail();
        }
    }
    assert_int_equal(mxp_isa_from_name("AVX512"), MXP_ISA_AVX512);
    assert_int_equal(mxp_isa_from_name("avx-512"), MXP_ISA_COUNT);
}

/* The default: on, off in an AddressSanitizer build (src/core/alloc.c). */
#if defined(__SANITIZE_ADDRESS__)
#define HUGE_DEFAULT 0
#else
#define HUGE_DEFAULT 1
#endif

static void test_env_hugepages_takes_0_or_1_only(void **state)
{
    (void)state;
    char said[512];
    assert_int_equal(ask_child(ASK_HUGEPAGES, "MXP_HUGEPAGES", NULL, said, sizeof said), HUGE_DEFAULT);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_HUGEPAGES, "MXP_HUGEPAGES", "0", said, sizeof said), 0);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_HUGEPAGES, "MXP_HUGEPAGES", "1", said, sizeof said), 1);
    assert_string_equal(said, "");
    assert_int_equal(ask_child(ASK_HUGEPAGES, "MXP_HUGEPAGES", "", said, sizeof said), HUGE_DEFAULT);
    assert_string_equal(said, "");
    static const char *const bad[] = { "yes", "2", "01", " 0", "0 ", "off", "-1" };
    char want[160];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const int on = ask_child(ASK_HUGEPAGES, "MXP_HUGEPAGES", bad[i], said, sizeof said);
        snprintf(want, sizeof want, "mxp: MXP_HUGEPAGES='%s' is not 0 or 1; ignored\n", bad[i]);
        if (strcmp(said, want) != 0 || on != HUGE_DEFAULT) {
            print_error("MXP_HUGEPAGES='%s': %d, stderr \"%s\"; want %d and \"%s\"\n", bad[i], on, said, HUGE_DEFAULT,
                        want);
            fail();
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_num_threads_rejects_what_is_not_a_positive_integer),
        cmocka_unit_test(test_env_num_threads_takes_a_count_and_caps_it),
        cmocka_unit_test(test_env_isa_names_are_case_insensitive_and_unknown_ones_said),
        cmocka_unit_test(test_env_hugepages_takes_0_or_1_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
