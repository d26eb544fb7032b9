/* Huge pages: the settings (mxp_set_hugepages, MXP_HUGEPAGES, the size
 * threshold), mxp's own 2 MiB-aligned mappings advised MADV_HUGEPAGE for the
 * allocator's large blocks (src/core/alloc.c), and the freed mappings kept
 * for the next block of about their size.  The cache has a lock of its own,
 * a leaf like the allocator's: nothing else is locked or called while
 * either is held, so the two never nest. */
#define _DEFAULT_SOURCE /* mmap, madvise, MADV_HUGEPAGE */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/alloc-internal.h"
#include "core/error.h"

/* ---- huge pages ----------------------------------------------------------- */

enum { HUGE_PAGE = 2u << 20 };

static atomic_int huge_requested = -1;          /* -1: not set by mxp_set_hugepages */
static atomic_size_t huge_threshold = 4u << 20; /* bytes; see docs/architecture.md */
static int huge_env = -1;                       /* MXP_HUGEPAGES: 0, 1, or -1 unset/invalid */
static pthread_once_t huge_once = PTHREAD_ONCE_INIT;
/* On by default, except under AddressSanitizer, which does not see mxp's own
 * mappings: there every block comes from malloc, so overruns are caught. */
#if defined(__SANITIZE_ADDRESS__)
#define HUGE_DEFAULT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HUGE_DEFAULT 0
#endif
#endif
#ifndef HUGE_DEFAULT
#define HUGE_DEFAULT 1
#endif
static atomic_ullong huge_count;                /* allocations advised (stats.hugepage_allocations) */

/* Read once per process; a value other than 0 or 1 is ignored with one
 * message, as MXP_NUM_THREADS is (docs/reliability.md). */
static void read_huge_env(void)
{
    const char *env = getenv("MXP_HUGEPAGES");
    if (!env || !*env)
        return;
    if (!strcmp(env, "0") || !strcmp(env, "1"))
        huge_env = env[0] - '0';
    else
        fprintf(stderr, "mxp: MXP_HUGEPAGES='%.40s' is not 0 or 1; ignored\n", env);
}

void mxp_set_hugepages(bool enabled)
{
    atomic_store(&huge_requested, enabled ? 1 : 0);
}

bool mxp_hugepages_enabled(void)
{
    const int r = atomic_load(&huge_requested);
    if (r >= 0)
        return r;
    pthread_once(&huge_once, read_huge_env);
    return huge_env >= 0 ? huge_env : HUGE_DEFAULT;
}

mxp_status mxp_set_hugepage_threshold(size_t bytes)
{
    if (bytes < HUGE_PAGE)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "huge-page threshold %zu bytes is below one huge page (2 MiB)",
                         bytes);
    atomic_store(&huge_threshold, bytes);
    return MXP_OK;
}

size_t mxp_hugepage_threshold(void)
{
    return atomic_load(&huge_threshold);
}

const char *mxp_hugepages_system_mode(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    static const char *const modes[] = { "always", "madvise", "never" };
    for (int i = 0; i < 3; i++) {
        char want[16];
        snprintf(want, sizeof want, "[%s]", modes[i]);
        if (strstr(line, want))
            return modes[i];
    }
    return "unavailable";
}

/* ---- huge-page blocks: mxp's own mappings, and the freed ones kept --------- */

/* A freed block of mxp's own is kept for the next block of about its size
 * (at most HUGE_CACHE_BLOCKS, mxp_hugepage_cache_limit() bytes; the oldest go first):
 * its pages stay mapped, so a new array of a size used before is written
 * at memory speed instead of faulting and zeroing every page again. */
enum { HUGE_CACHE_BLOCKS = 4 };
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { void *base; size_t len; } huge_cache[HUGE_CACHE_BLOCKS]; /* under cache_lock, oldest first */
static uint64_t cache_bytes, cache_hits; /* under cache_lock */
static int huge_cached;

/* The kept blocks' bytes at most: a sixteenth of the machine's memory,
 * between 256 MiB and 1 GiB (a float32 array of 64M elements, 256 MiB and
 * a header, is kept on a machine of 4.5 GiB and more). */
static size_t cache_limit;
static pthread_once_t cache_limit_once = PTHREAD_ONCE_INIT;

static void read_cache_limit(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t lo = (size_t)256 << 20, hi = (size_t)1 << 30;
    size_t v = lo;
    if (pages > 0 && page > 0 && (size_t)pages / 16 <= SIZE_MAX / (size_t)page)
        v = (size_t)pages / 16 * (size_t)page;
    cache_limit = v < lo ? lo : v > hi ? hi : v;
}

size_t mxp_hugepage_cache_limit(void)
{
    pthread_once(&cache_limit_once, read_cache_limit);
    return cache_limit;
}

static void huge_unmap(void *base, size_t len)
{
    munmap(base, len);
}

/* A 2 MiB-aligned mapping of at least total bytes (*mapped: its length),
 * whole 2 MiB pages advised; NULL when huge pages are off or the block is
 * small (the caller then uses the allocator). */
void *mxp_huge_map(size_t total, size_t *mapped)
{
#ifdef MADV_HUGEPAGE
    if (total < atomic_load(&huge_threshold) || total > SIZE_MAX / 2 || !mxp_hugepages_enabled())
        return NULL;
    const size_t len = (total + 4095) / 4096 * 4096;
    pthread_mutex_lock(&cache_lock);
    int best = -1;
    for (int i = 0; i < huge_cached; i++) /* the smallest that fits, wasting at most a quarter */
        if (huge_cache[i].len >= len && huge_cache[i].len - len <= len / 4 &&
            (best < 0 || huge_cache[i].len < huge_cache[best].len))
            best = i;
    if (best >= 0) {
        void *base = huge_cache[best].base;
        *mapped = huge_cache[best].len;
        cache_bytes -= *mapped;
        cache_hits++;
        for (int i = best; i + 1 < huge_cached; i++)
            huge_cache[i] = huge_cache[i + 1];
        huge_cached--;
        pthread_mutex_unlock(&cache_lock);
        return base;
    }
    pthread_mutex_unlock(&cache_lock);
    unsigned char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    unsigned char *start = m + ((HUGE_PAGE - (uintptr_t)m % HUGE_PAGE) % HUGE_PAGE);
    if (start > m)
        munmap(m, (size_t)(start - m));
    if (start + len < m + len + HUGE_PAGE)
        munmap(start + len, (size_t)(m + len + HUGE_PAGE - (start + len)));
    /* the tail after the last whole 2 MiB stays in 4 KiB pages (a 4 MiB
     * array with its header takes 4 MiB + 4 KiB, not 6 MiB); EINVAL
     * without THP: small pages, still correct */
    if (madvise(start, total / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE) == 0)
        atomic_fetch_add(&huge_count, 1);
    *mapped = len;
    return start;
#else
    (void)total;
    (void)mapped;
    return NULL;
#endif
}

void mxp_huge_release(void *base, size_t len)
{
    void *drop[HUGE_CACHE_BLOCKS];
    size_t drop_len[HUGE_CACHE_BLOCKS];
    int dropped = 0;
    const size_t limit = mxp_hugepage_cache_limit(); /* read once, before the lock */
    pthread_mutex_lock(&cache_lock);
    const bool keep = len <= limit;
    while (keep && (huge_cached == HUGE_CACHE_BLOCKS || cache_bytes + len > limit)) {
        drop[dropped] = huge_cache[0].base; /* the oldest */
        drop_len[dropped++] = huge_cache[0].len;
        cache_bytes -= huge_cache[0].len;
        for (int i = 0; i + 1 < huge_cached; i++)
            huge_cache[i] = huge_cache[i + 1];
        huge_cached--;
    }
    if (keep) {
        huge_cache[huge_cached].base = base;
        huge_cache[huge_cached++].len = len;
        cache_bytes += len;
    }
    pthread_mutex_unlock(&cache_lock);
    for (int i = 0; i < dropped; i++)
        huge_unmap(drop[i], drop_len[i]);
    if (!keep)
        huge_unmap(base, len);
}

void mxp_huge_drain(void)
{
    void *drop[HUGE_CACHE_BLOCKS];
    size_t drop_len[HUGE_CACHE_BLOCKS];
    pthread_mutex_lock(&cache_lock);
    const int n = huge_cached;
    for (int i = 0; i < n; i++) {
        drop[i] = huge_cache[i].base;
        drop_len[i] = huge_cache[i].len;
    }
    huge_cached = 0;
    cache_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
    for (int i = 0; i < n; i++)
        huge_unmap(drop[i], drop_len[i]);
}

void mxp_huge_stats(uint64_t *allocations, uint64_t *kept_bytes, uint64_t *hits)
{
    pthread_mutex_lock(&cache_lock);
    *kept_bytes = cache_bytes;
    *hits = cache_hits;
    pthread_mutex_unlock(&cache_lock);
    *allocations = atomic_load(&huge_count);
}

void mxp_huge_stats_reset(void)
{
    pthread_mutex_lock(&cache_lock);
    cache_hits = 0;
    pthread_mutex_unlock(&cache_lock);
    atomic_store(&huge_count, 0);
}

/* fork: as the allocator's lock (src/core/alloc.c), taken before and
 * released after in both processes. */
static void lock_before_fork(void) { pthread_mutex_lock(&cache_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&cache_lock); }

__attribute__((constructor)) static void register_atfork(void)
{
    pthread_atfork(lock_before_fork, unlock_after_fork, unlock_after_fork);
}
