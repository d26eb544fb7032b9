/* The profiler's roofline: this machine's memory bandwidth and one core's
 * float32 FMA peak, measured once and kept in a cache file per CPU and
 * ISA level (mxp_profile_get_machine, profile.h). */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_NOHUGEPAGE */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "core/abi.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/profile-internal.h"
#include "mxp/cpu.h"

enum { COPY_BYTES = 64 << 20, COPY_RUNS = 5 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mxp_profile_machine known[MXP_ISA_COUNT]; /* per ISA level, once measured or read */
static int have[MXP_ISA_COUNT];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A streaming copy of COPY_BYTES, bytes read + written per second, the
 * best of COPY_RUNS (interference only slows a run). */
static double copy_gbps(void)
{
    char *a = malloc(COPY_BYTES), *b = malloc(COPY_BYTES);
    double best = 0;
    if (a && b) {
        memset(a, 1, COPY_BYTES);
        memset(b, 2, COPY_BYTES); /* both touched: no page faults timed */
        for (int r = 0; r < COPY_RUNS; r++) {
            const double t0 = now_s();
            memcpy(r & 1 ? a : b, r & 1 ? b : a, COPY_BYTES);
            const double g = 2.0 * COPY_BYTES / (now_s() - t0) / 1e9;
            best = g > best ? g : best;
        }
    }
    free(a);
    free(b);
    return best;
}

/* A minor fault's cost: fresh 4 KiB pages touched one byte each (no huge
 * pages), the best of 3 mappings. */
static double fault_us(void)
{
    enum { BYTES = 32 << 20, PAGE = 4096 };
    double best = 0;
    for (int r = 0; r < 3; r++) {
        char *p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            break;
#ifdef MADV_NOHUGEPAGE
        madvise(p, BYTES, MADV_NOHUGEPAGE);
#endif
        const double t0 = now_s();
        for (size_t i = 0; i < BYTES; i += PAGE)
            p[i] = 1;
        const double us = (now_s() - t0) * 1e6 / (BYTES / PAGE);
        best = best == 0 || us < best ? us : best;
        munmap(p, BYTES);
    }
    return best;
}

/* The key of this CPU and level in the cache file: no tabs or newlines. */
static void cache_key(char *key, size_t cap)
{
    snprintf(key, cap, "%s|%s|%s", mxp_cpu_brand(), mxp_cpu_features_string(), mxp_isa_name(mxp_get_isa()));
    for (char *p = key; *p; p++)
        if (*p == '\t' || *p == '\n')
            *p = ' ';
}

static int cache_path(char *path, size_t cap, bool make_dir)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[512];
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/mxp", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/mxp", home);
    else
        return -1;
    if (make_dir) {
        char parent[512];
        snprintf(parent, sizeof parent, "%.*s", (int)(strrchr(dir, '/') - dir), dir);
        mkdir(parent, 0755); /* ~/.cache may not exist yet */
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
    }
    return snprintf(path, cap, "%s/roofline", dir) < (int)cap ? 0 : -1;
}

static bool cache_read(const char *key, double *gbps, double *gflops, double *fault)
{
    char path[600], line[1024];
    if (cache_path(path, sizeof path, false) != 0)
        return false;
    FILE *f = fopen(path, "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (tab && (size_t)(tab - line) == strlen(key) && !strncmp(line, key, strlen(key)))
            found = sscanf(tab + 1, "%lf\t%lf\t%lf", gbps, gflops, fault) == 3 && *gbps > 0 && *gflops > 0 &&
                    *fault > 0;
    }
    if (f)
        fclose(f);
    return found;
}

/* Appends a line; a cache that cannot be written is only a cost (the next
 * process measures again). */
static void cache_write(const char *key, double gbps, double gflops, double fault)
{
    char path[600];
    if (cache_path(path, sizeof path, true) != 0)
        return;
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s\t%.3f\t%.3f\t%.4f\n", key, gbps, gflops, fault);
        fclose(f);
    }
}

static void machine_now(mxp_profile_machine *m)
{
    char key[512];
    cache_key(key, sizeof key);
    snprintf(m->cpu, sizeof m->cpu, "%s (%s)", mxp_cpu_brand(), mxp_isa_name(mxp_get_isa()));
    const char *env = getenv("MXP_PROFILE_MACHINE");
    m->fault_us = 0.25;
    if (env && sscanf(env, "%lf,%lf,%lf", &m->memory_gbps, &m->peak_gflops, &m->fault_us) >= 2 &&
        m->memory_gbps > 0 && m->peak_gflops > 0 && m->fault_us > 0) {
        m->source = 2;
        return;
    }
    if (cache_read(key, &m->memory_gbps, &m->peak_gflops, &m->fault_us)) {
        m->source = 1;
        return;
    }
    m->memory_gbps = copy_gbps();
    m->peak_gflops = mxp_peak_gflops_any_level(MXP_PEAK_F32_FMA, 3);
    m->fault_us = fault_us();
    m->source = 0;
    if (m->memory_gbps > 0 && m->peak_gflops > 0 && m->fault_us > 0)
        cache_write(key, m->memory_gbps, m->peak_gflops, m->fault_us);
}

mxp_status mxp_profile_get_machine(mxp_profile_machine *m)
{
    MXP_ABI_OUT(m, profile_machine, "mxp_profile_get_machine");
    if (!m)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_get_machine: m is NULL");
    const mxp_isa isa = mxp_get_isa();
    mxp_profile_machine full = { 0 };
    pthread_mutex_lock(&lock);
    const char *env = getenv("MXP_PROFILE_MACHINE");
    if (!have[isa] || (env && *env)) { /* the variable is read every time: tests change it */
        machine_now(&known[isa]);
        have[isa] = known[isa].source != 2;
    } else if (known[isa].source == 0) {
        known[isa].source = 1; /* measured earlier in this process */
    }
    full = known[isa];
    pthread_mutex_unlock(&lock);
    if (full.memory_gbps <= 0 || full.peak_gflops <= 0 || full.fault_us <= 0)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_profile_get_machine: the bandwidth or peak measurement failed "
                         "(no memory for two 64 MiB buffers?)");
    mxp_abi_out(m, &full, m_abi_n_, &mxp_abi_profile_machine);
    return MXP_OK;
}
