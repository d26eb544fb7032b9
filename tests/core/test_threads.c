#define _POSIX_C_SOURCE 200809L
/* mxp_parallel and its persistent pool: every share runs exactly once with
 * the right (thread, nthreads), for counts growing and shrinking; nested
 * calls (from a worker and from the caller's share) complete; several
 * program threads calling at once (the busy pool's fallback) all complete;
 * a forked child gets a working pool; the thread-count API; mxp_shutdown
 * joins the workers, the pool restarts after it, and it is harmless from
 * inside a job and while other threads run jobs. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <dirent.h>

#include "mxp.h"
#include "core/threads-internal.h"

enum { MAXT = 16 };

typedef struct job {
    atomic_int hits[MAXT];
    atomic_int bad;
    int expect_n;
} job;

static void count_share(void *ctx, int t, int n)
{
    job *j = ctx;
    if (n != j->expect_n || t < 0 || t >= n)
        atomic_fetch_add(&j->bad, 1);
    else
        atomic_fetch_add(&j->hits[t], 1);
}

static void expect_each_share_once(int n)
{
    job j;
    memset(&j, 0, sizeof j);
    j.expect_n = n;
    mxp_parallel(n, count_share, &j);
    assert_int_equal(atomic_load(&j.bad), 0);
    for (int t = 0; t < n; t++)
        assert_int_equal(atomic_load(&j.hits[t]), 1);
    for (int t = n; t < MAXT; t++)
        assert_int_equal(atomic_load(&j.hits[t]), 0);
}

static void test_every_share_once_for_any_count(void **state)
{
    (void)state;
    const int counts[] = { 1, 2, 3, 8, 2, 16, 1, 5, 4, 2 };
    for (int rep = 0; rep < 200; rep++)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
            expect_each_share_once(counts[c]);
}

/* each share of the outer job runs an inner job of 3 shares */
typedef struct nest {
    atomic_int inner_total;
} nest;

static void inner_share(void *ctx, int t, int n)
{
    (void)t;
    (void)n;
    atomic_fetch_add(&((nest *)ctx)->inner_total, 1);
}

static void outer_share(void *ctx, int t, int n)
{
    (void)t;
    (void)n;
    mxp_parallel(3, inner_share, ctx);
}

static void test_nested_calls_complete(void **state)
{
    (void)state;
    for (int rep = 0; rep < 50; rep++) {
        nest s = { 0 };
        mxp_parallel(4, outer_share, &s);
        assert_int_equal(atomic_load(&s.inner_total), 12);
    }
}

static void *program_thread(void *arg)
{
    (void)arg;
    for (int rep = 0; rep < 100; rep++) {
        job j;
        memset(&j, 0, sizeof j);
        j.expect_n = 3;
        mxp_parallel(3, count_share, &j);
        if (atomic_load(&j.bad) || atomic_load(&j.hits[0]) != 1 || atomic_load(&j.hits[1]) != 1 ||
            atomic_load(&j.hits[2]) != 1)
            return (void *)1;
    }
    return NULL;
}

static void test_concurrent_callers_complete(void **state)
{
    (void)state;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, program_thread, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *r = (void *)1;
        assert_int_equal(pthread_join(th[i], &r), 0);
        assert_null(r);
    }
}

static void test_forked_child_has_a_working_pool(void **state)
{
    (void)state;
#ifdef __SANITIZE_THREAD__
    skip(); /* ThreadSanitizer does not support threads started after a multi-threaded fork */
#endif
    expect_each_share_once(4); /* the parent's pool exists */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        job j;
        memset(&j, 0, sizeof j);
        j.expect_n = 4;
        mxp_parallel(4, count_share, &j);
        int ok = !atomic_load(&j.bad);
        for (int t = 0; t < 4; t++)
            ok = ok && atomic_load(&j.hits[t]) == 1;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    expect_each_share_once(4); /* and the parent's still works */
}

static void test_thread_count_api(void **state)
{
    (void)state;
    assert_int_equal(mxp_set_num_threads(3), MXP_OK);
    assert_int_equal(mxp_get_num_threads(), 3);
    assert_int_equal(mxp_set_num_threads(-1), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_set_num_threads(100000), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_get_num_threads(), 3);
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
    assert_true(mxp_get_num_threads() >= 1);
}

/* The pool's workers alive in this process (named mxp-worker, counted in
 * /proc; -1 where there is none).  Only they are counted: a sanitizer's
 * background thread may start at any time. */
static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(comm, sizeof comm, f))
                comm[0] = 0;
            fclose(f);
        }
        n += strcmp(comm, "mxp-worker\n") == 0;
    }
    closedir(d);
    return n;
}

/* count_threads() once it equals want, or after 2 s.  A joined thread
 * leaves /proc a moment after pthread_join returns (the kernel wakes the
 * joiner when the thread clears its tid, before it reaps the task). */
static int count_threads_settled(int want)
{
    int n = count_threads();
    for (int i = 0; i < 2000 && n != want; i++) {
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
        n = count_threads();
    }
    return n;
}

static void test_shutdown_joins_the_workers_and_the_pool_restarts(void **state)
{
    (void)state;
    mxp_shutdown();
    const int before = count_threads_settled(0);
    if (before >= 0)
        assert_int_equal(before, 0); /* every worker joined */
    for (int round = 0; round < 3; round++) {
        expect_each_share_once(4); /* 3 workers */
        if (before >= 0)
            assert_int_equal(count_threads(), before + 3);
        mxp_shutdown();
        if (before >= 0)
            assert_int_equal(count_threads_settled(before), before);
        mxp_shutdown(); /* twice: nothing left to join */
    }
    expect_each_share_once(16);
    mxp_shutdown();
}

static void shutdown_share(void *ctx, int t, int n)
{
    mxp_shutdown(); /* from inside a job, on the caller's thread (t = 0) and on workers: nothing */
    count_share(ctx, t, n);
}

static void test_shutdown_inside_a_job_does_nothing(void **state)
{
    (void)state;
    for (int rep = 0; rep < 20; rep++) {
        job j;
        memset(&j, 0, sizeof j);
        j.expect_n = 3;
        mxp_parallel(3, shutdown_share, &j);
        assert_int_equal(atomic_load(&j.bad), 0);
        for (int t = 0; t < 3; t++)
            assert_int_equal(atomic_load(&j.hits[t]), 1);
    }
    mxp_shutdown();
}

static void test_shutdown_while_other_threads_run_jobs(void **state)
{
    (void)state;
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, program_thread, NULL), 0);
    for (int rep = 0; rep < 200; rep++)
        mxp_shutdown();
    for (int i = 0; i < 3; i++) {
        void *r = (void *)1;
        assert_int_equal(pthread_join(th[i], &r), 0);
        assert_null(r);
    }
    mxp_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_share_once_for_any_count),
        cmocka_unit_test(test_nested_calls_complete),
        cmocka_unit_test(test_concurrent_callers_complete),
        cmocka_unit_test(test_forked_child_has_a_working_pool),
        cmocka_unit_test(test_thread_count_api),
        cmocka_unit_test(test_shutdown_joins_the_workers_and_the_pool_restarts),
        cmocka_unit_test(test_shutdown_inside_a_job_does_nothing),
        cmocka_unit_test(test_shutdown_while_other_threads_run_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
