/* fork() while other threads of the program are inside mxp: the child
 * never inherits one of mxp's locks held by a thread that does not exist
 * in it (the allocator's, the operator registry's, the thread pool's), and
 * its thread pool works (the parent's workers do not exist there).  Many
 * children are forked while threads hammer the allocator, the registry
 * and threaded GEMMs; each child runs a threaded GEMM and a custom
 * operator, checks the results and exits; an alarm in the child turns a
 * hang into a failure. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid, alarm */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mxp.h"

enum { CHILDREN = 200, HANG_SECONDS = 20 };
enum { M = 128, N = 128, K = 256 }; /* M N K > 4e6: two threads */

static atomic_int stop;

static void *hammer_allocator(void *arg)
{
    uint64_t s = (uintptr_t)arg;
    while (!atomic_load(&stop)) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        void *p = mxp_malloc((size_t)(s >> 52) + 1);
        mxp_free(p);
    }
    return NULL;
}

static void negate(void *out, const void *in, size_t n, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        ((float *)out)[i] = -((const float *)in)[i];
}

static mxp_array *ramp(void)
{
    mxp_array *x = NULL;
    if (mxp_array_arange(&x, MXP_F32, 0, 64, 1) != MXP_OK)
        return NULL;
    return x;
}

/* The registry's lock, taken by every lookup. */
static void *hammer_registry(void *arg)
{
    (void)arg;
    mxp_array *x = ramp();
    while (x && !atomic_load(&stop)) {
        mxp_array *y = NULL;
        mxp_call_unary_op(&y, "test_fork_negate", x, NULL);
        mxp_array_free(y);
    }
    mxp_array_free(x);
    return NULL;
}

/* Registrations: the registry's lock and little else. */
static void *hammer_registrations(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        mxp_register_unary_op("test_fork_other", MXP_F64, negate, NULL);
    return NULL;
}

static float a[M * K], b[K * N];

/* C = A B with small integers: exact, so every run gives the same C. */
static bool gemm_is_right(void)
{
    static _Thread_local float c[M * N];
    if (mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c, MXP_F32, N,
                 NULL) != MXP_OK)
        return false;
    for (int i = 0; i < M; i += 17)
        for (int j = 0; j < N; j += 13) {
            float want = 0;
            for (int p = 0; p < K; p++)
                want += a[i * K + p] * b[p * N + j];
            if (c[i * N + j] != want)
                return false;
        }
    return true;
}

static void *hammer_gemm(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        if (!gemm_is_right())
            return (void *)1;
    return NULL;
}

/* In the child: a threaded GEMM, an allocation, a custom operator. */
static int child(void)
{
    alarm(HANG_SECONDS); /* a hang ends as SIGALRM */
    if (!gemm_is_right())
        return 1;
    mxp_array *x = ramp(), *y = NULL;
    if (!x || mxp_call_unary_op(&y, "test_fork_negate", x, NULL) != MXP_OK)
        return 2;
    const float *v = mxp_array_data(y);
    const int ok = v[5] == -5.0f;
    mxp_array_free(y);
    mxp_array_free(x);
    return ok ? 0 : 3;
}

/* The sanitizers' allocators (GCC 12's libasan and libtsan) are not
 * fork-safe themselves: a child's malloc can wait for their lock, held by
 * a hammering thread at the fork, whatever mxp does.  The plain build
 * (make check) runs this test. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_ALLOCATOR 1
#endif
#endif

static void test_fork_child_runs_threaded_gemm_while_other_threads_hold_locks(void **state)
{
    (void)state;
#ifdef SANITIZER_ALLOCATOR
    skip();
#endif
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 5 - 2);
    assert_int_equal(mxp_register_unary_op("test_fork_negate", MXP_F32, negate, NULL), MXP_OK);
    assert_int_equal(mxp_set_num_threads(2), MXP_OK);
    assert_true(gemm_is_right()); /* the parent's pool exists */
    enum { HAMMERS = 5 };
    pthread_t th[HAMMERS];
    void *(*const fns[HAMMERS])(void *) = { hammer_gemm, hammer_allocator, hammer_allocator, hammer_registry,
                                            hammer_registrations };
    for (int t = 0; t < HAMMERS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, fns[t], (void *)(uintptr_t)(t + 1)), 0);
    int failed = 0, hung = 0;
    for (int i = 0; i < CHILDREN && !hung && !failed; i++) {
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(child());
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
            print_error("child %d of %d hung (no exit within %d s)\n", i + 1, CHILDREN, HANG_SECONDS);
            hung++;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            print_error("child %d of %d failed: status 0x%x\n", i + 1, CHILDREN, (unsigned)status);
            failed++;
        }
    }
    atomic_store(&stop, 1);
    void *gemm_result = NULL;
    for (int t = 0; t < HAMMERS; t++)
        assert_int_equal(pthread_join(th[t], t == 0 ? &gemm_result : NULL), 0);
    assert_null(gemm_result);
    assert_int_equal(hung, 0);
    assert_int_equal(failed, 0);
    assert_true(gemm_is_right()); /* and the parent's pool still works */
    assert_int_equal(mxp_unregister_op("test_fork_negate"), MXP_OK);
    assert_int_equal(mxp_unregister_op("test_fork_other"), MXP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_child_runs_threaded_gemm_while_other_threads_hold_locks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
