/* Progress on stderr for work that takes more than about a second, drawn
 * by a thread of its own so that a long single library call (loading a
 * file, one big conversion) still shows the time passing.  Only when
 * stderr is a terminal: in a pipe, a log or a test, nothing is printed. */
#define _POSIX_C_SOURCE 200809L /* isatty, fileno, clock_gettime */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool running, stop, drawn;
    const char *cmd, *phase;
    double fraction, start, delay;
} p = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

/* Under the lock. */
static void draw(void)
{
    const double elapsed = cli_now() - p.start;
    if (elapsed < p.delay)
        return;
    fprintf(stderr, "\r\033[Kmxp %s: %s", p.cmd, p.phase ? p.phase : "working");
    if (p.fraction >= 0)
        fprintf(stderr, " %3.0f%%", 100 * p.fraction);
    fprintf(stderr, "  (%.0f s)", elapsed);
    fflush(stderr);
    p.drawn = true;
}

static void *ticker(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&p.lock);
    while (!p.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 250 * 1000 * 1000;
        if (until.tv_nsec >= 1000 * 1000 * 1000) {
            until.tv_sec++;
            until.tv_nsec -= 1000 * 1000 * 1000;
        }
        pthread_cond_timedwait(&p.wake, &p.lock, &until);
        if (!p.stop)
            draw();
    }
    pthread_mutex_unlock(&p.lock);
    return NULL;
}

void cli_progress_begin(const char *cmd)
{
    if (p.running || !isatty(fileno(stderr)))
        return;
    const char *env = getenv("MXP_PROGRESS_DELAY");
    char *end;
    double delay = env && *env ? strtod(env, &end) : 1.0;
    if (env && *env && (*end || !(delay >= 0)))
        delay = 1.0;
    pthread_mutex_lock(&p.lock);
    p.cmd = cmd;
    p.phase = NULL;
    p.fraction = -1;
    p.start = cli_now();
    p.delay = delay;
    p.stop = p.drawn = false;
    p.running = pthread_create(&p.thread, NULL, ticker, NULL) == 0;
    pthread_mutex_unlock(&p.lock);
}

void cli_progress_set(const char *phase, double fraction)
{
    if (!p.running)
        return;
    pthread_mutex_lock(&p.lock);
    p.phase = phase;
    p.fraction = fraction;
    draw(); /* at once: a new phase, or a finished chunk */
    pthread_mutex_unlock(&p.lock);
}

void cli_progress_end(void)
{
    if (!p.running)
        return;
    pthread_mutex_lock(&p.lock);
    p.stop = true;
    pthread_cond_signal(&p.wake);
    pthread_mutex_unlock(&p.lock);
    pthread_join(p.thread, NULL);
    p.running = false;
    if (p.drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}
