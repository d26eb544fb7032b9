/* The profiler's report: each operation kind's rates against the
 * roofline, its verdict and advice, and the writers (table, JSON, Chrome
 * trace) (docs/profiling.md). */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/abi.h"
#include "core/error.h"
#include "core/profile-internal.h"
#include "core/write-file.h"

static const double MAJOR_S = 50e-6; /* a major fault's cost (a read from disk or swap) */

const char *mxp_verdict_name(mxp_verdict v)
{
    static const char *const names[MXP_VERDICT_COUNT] = { "memory-bound", "compute-bound", "overhead-bound",
                                                          "fault-bound" };
    return (unsigned)v < MXP_VERDICT_COUNT ? names[v] : "invalid";
}

static void judge(mxp_profile_entry *e, const mxp_prof_kind *k, const mxp_profile_machine *m)
{
    const double sampled_s = k->sampled_calls ? e->total_s * (double)k->sampled_calls / (double)e->calls : 0;
    const double fault_s = (double)k->minflt * m->fault_us * 1e-6 + (double)k->majflt * MAJOR_S;
    const double ridge = m->peak_gflops * e->max_threads / m->memory_gbps; /* FLOPs per byte */
    if (k->small_s > 0.5 * k->total_s) { /* most of the time in calls under 10 us */
        e->verdict = MXP_VERDICT_OVERHEAD;
        e->advice = "most time in calls under 10 us: fixed costs dominate; batch the work into fewer, larger calls";
    } else if (sampled_s > 0 && fault_s > 0.3 * sampled_s) {
        e->verdict = MXP_VERDICT_FAULTS;
        e->advice = "page faults on fresh buffers: reuse outputs (out=, the _into calls) or keep huge pages on";
    } else if (e->flops <= 0 || e->flops / e->bytes < ridge) {
        e->verdict = MXP_VERDICT_MEMORY;
        e->advice = e->memory_fraction < 0.5
                        ? "memory bandwidth unused: contiguous arrays, more threads, fewer passes (or a costly function)"
                        : "at the memory roof: move fewer bytes (a narrower dtype, fused operations)";
    } else {
        e->verdict = MXP_VERDICT_COMPUTE;
        e->advice = e->peak_fraction < 0.5 ? "compute units idle: raise parallelism (threads, larger tiles or batches)"
                                           : "near the FMA peak: a lower precision (bf16, int8) is the next step";
    }
}

static int by_time(const void *a, const void *b)
{
    const mxp_prof_kind *x = a, *y = b;
    return x->total_s < y->total_s ? 1 : x->total_s > y->total_s ? -1 : strcmp(x->op, y->op);
}

/* The kinds, slowest first. */
static int kinds_sorted(mxp_prof_kind *k)
{
    const int n = mxp_prof_snapshot(k, MXP_PROF_MAX_KINDS);
    qsort(k, (size_t)n, sizeof *k, by_time);
    return n;
}

static void entry_of(const mxp_prof_kind *k, const mxp_profile_machine *m, mxp_profile_entry *e)
{
    *e = (mxp_profile_entry){ .op = k->op, .calls = k->calls, .total_s = k->total_s, .min_s = k->min_s,
                              .max_s = k->max_s, .bytes = k->bytes, .flops = k->flops,
                              .minor_faults = k->minflt, .major_faults = k->majflt,
                              .max_threads = k->max_threads ? k->max_threads : 1 };
    e->gbps = k->total_s > 0 ? k->bytes / k->total_s / 1e9 : 0;
    e->gflops = k->total_s > 0 ? k->flops / k->total_s / 1e9 : 0;
    e->memory_fraction = e->gbps / m->memory_gbps;
    e->peak_fraction = e->gflops / (m->peak_gflops * e->max_threads);
    judge(e, k, m);
}

int mxp_profile_count(void) { return mxp_prof_snapshot(NULL, 0); }

mxp_status mxp_profile_entry_at(int index, mxp_profile_entry *e)
{
    MXP_ABI_OUT(e, profile_entry, "mxp_profile_entry_at");
    if (!e)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_entry_at: e is NULL");
    mxp_prof_kind k[MXP_PROF_MAX_KINDS];
    const int n = kinds_sorted(k);
    if (index < 0 || index >= n)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_entry_at: index %d is not below the %d kinds recorded",
                         index, n);
    mxp_profile_machine m = { 0 };
    mxp_status st = mxp_profile_get_machine(&m);
    if (st != MXP_OK)
        return st;
    mxp_profile_entry full;
    entry_of(&k[index], &m, &full);
    mxp_abi_out(e, &full, e_abi_n_, &mxp_abi_profile_entry);
    return MXP_OK;
}

/* ---- writers ------------------------------------------------------------ */

static const char *source_name(int s) { return s == 0 ? "measured" : s == 1 ? "cached" : "MXP_PROFILE_MACHINE"; }

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void write_table(FILE *f, const mxp_prof_kind *k, int n, const mxp_profile_machine *m)
{
    fprintf(f, "mxp profile: %s; memory %.1f GB/s (streaming copy), float32 FMA peak %.1f GFLOPS per core, "
               "page fault %.2f us (%s)\n",
            m->cpu, m->memory_gbps, m->peak_gflops, m->fault_us, source_name(m->source));
    fprintf(f, "%-22s %7s %10s %9s %8s %8s %6s %6s %7s %3s  %-14s %s\n", "op", "calls", "total ms", "mean us",
            "GB/s", "GFLOPS", "%mem", "%peak", "faults", "thr", "verdict", "advice");
    for (int i = 0; i < n; i++) {
        mxp_profile_entry e;
        entry_of(&k[i], m, &e);
        fprintf(f, "%-22.22s %7llu %10.3f %9.1f %8.2f %8.2f %5.0f%% %5.0f%% %7llu %3d  %-14s %s\n", e.op,
                (unsigned long long)e.calls, e.total_s * 1e3, e.total_s / (double)e.calls * 1e6, e.gbps, e.gflops,
                100 * e.memory_fraction, 100 * e.peak_fraction,
                (unsigned long long)(e.minor_faults + e.major_faults), e.max_threads, mxp_verdict_name(e.verdict),
                e.advice);
    }
    if (n == 0)
        fprintf(f, "(no mxp operations were recorded)\n");
}

static void write_json(FILE *f, const mxp_prof_kind *k, int n, const mxp_profile_machine *m)
{
    fprintf(f, "{\"cpu\": ");
    json_str(f, m->cpu);
    fprintf(f, ", \"memory_gbps\": %.6g, \"peak_gflops\": %.6g, \"fault_us\": %.6g, \"machine\": \"%s\", "
               "\"entries\": [", m->memory_gbps, m->peak_gflops, m->fault_us, source_name(m->source));
    for (int i = 0; i < n; i++) {
        mxp_profile_entry e;
        entry_of(&k[i], m, &e);
        fprintf(f, "%s\n  {\"op\": ", i ? "," : "");
        json_str(f, e.op);
        fprintf(f, ", \"calls\": %llu, \"total_s\": %.9g, \"mean_s\": %.9g, \"min_s\": %.9g, \"max_s\": %.9g, "
                   "\"bytes\": %.17g, \"flops\": %.17g, \"gbps\": %.6g, \"gflops\": %.6g, \"memory_fraction\": %.6g, "
                   "\"peak_fraction\": %.6g, \"minor_faults\": %llu, \"major_faults\": %llu, \"max_threads\": %d, "
                   "\"verdict\": \"%s\", \"advice\": ",
                (unsigned long long)e.calls, e.total_s, e.total_s / (double)e.calls, e.min_s, e.max_s, e.bytes,
                e.flops, e.gbps, e.gflops, e.memory_fraction, e.peak_fraction, (unsigned long long)e.minor_faults,
                (unsigned long long)e.major_faults, e.max_threads, mxp_verdict_name(e.verdict));
        json_str(f, e.advice);
        fputc('}', f);
    }
    fprintf(f, "%s]}\n", n ? "\n" : "");
}

static mxp_status write_trace(FILE *f, const mxp_profile_machine *m)
{
    mxp_prof_event *ev;
    size_t n;
    uint64_t dropped;
    mxp_status st = mxp_prof_events(&ev, &n, &dropped);
    if (st != MXP_OK)
        return st;
    const int pid = (int)getpid();
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"cpu\": ");
    json_str(f, m->cpu);
    fprintf(f, ", \"dropped_events\": %llu}, \"traceEvents\": [", (unsigned long long)dropped);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n{\"name\": ", i ? "," : "");
        json_str(f, ev[i].op);
        fprintf(f, ", \"cat\": \"mxp\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, \"tid\": %u, "
                   "\"args\": {\"bytes\": %.17g, \"flops\": %.17g}}",
                ev[i].ts_us, ev[i].dur_us, pid, ev[i].tid, ev[i].bytes, ev[i].flops);
    }
    fprintf(f, "%s]}\n", n ? "\n" : "");
    free(ev);
    return MXP_OK;
}

mxp_status mxp_profile_write(FILE *f, mxp_profile_format format)
{
    if (!f)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_write: f is NULL");
    if ((unsigned)format >= MXP_PROFILE_FORMAT_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_write: format %d is not an mxp_profile_format",
                         (int)format);
    mxp_profile_machine m = { 0 };
    mxp_status st = mxp_profile_get_machine(&m);
    if (st != MXP_OK)
        return st;
    if (format == MXP_PROFILE_TRACE)
        return write_trace(f, &m);
    mxp_prof_kind k[MXP_PROF_MAX_KINDS];
    const int n = kinds_sorted(k);
    (format == MXP_PROFILE_TABLE ? write_table : write_json)(f, k, n, &m);
    return ferror(f) ? mxp_error(MXP_ERR_IO, "mxp_profile_write: the stream reports a write error") : MXP_OK;
}

mxp_status mxp_profile_save(const char *path, mxp_profile_format format)
{
    if (!path || !*path)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_save: path is NULL or empty");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_profile_save: no memory for the report");
    mxp_status st = mxp_profile_write(f, format);
    fclose(f);
    if (st == MXP_OK) {
        const mxp_write_piece piece = { buf, len, NULL, NULL };
        st = mxp_write_file("mxp_profile_save", path, &piece, 1);
    }
    free(buf);
    return st;
}
