/* Tables for the costly unary operations on 16-bit floats.
 *
 * A unary operation from float16/bfloat16 into float16/bfloat16 with a
 * deterministic rounding mode and no flag counters is a function of the
 * input's 16 bits: 65,536 results.  Once an operation (with its dtypes,
 * rounding mode, overflow policy and ISA level) has seen 65,536 elements in
 * all, its table is built by running the ordinary plan (mxp_ew_run_1d with
 * the table off) over every bit pattern, and from then on each element is
 * one lookup in a 128 KiB table that stays in the L2 cache.  The results
 * are those of the plan itself, by construction, at any stride.
 *
 * Only the costly operations (computed in float64: exp, tanh, gelu,
 * sigmoid, ...) take tables; the cheap ones run near memory speed already.
 * At most MXP_LUT16_MAX tables (8 MiB) are built in a process; the rest
 * keep the ordinary path.  The lookup loop is plain C: on a Zen 4 it gave
 * 2.2 Gelem/s against 1.8 for AVX-512 and AVX2 gathers (docs/ops.md).
 * Tables are published with a compare-and-swap: two threads that build the
 * same one at once both get a correct table, and one copy is freed. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops-internal.h"

enum {
    MXP_LUT16_BUILD = 65536, /* elements seen before a table is built */
    MXP_LUT16_MAX = 64,      /* tables per process */
    N_TYPES = 2,             /* float16, bfloat16 */
    N_ROUND = MXP_ROUND_STOCHASTIC, /* the deterministic modes */
    N_SLOTS = MXP_UNARY_OP_COUNT * N_TYPES * N_TYPES * N_ROUND * MXP_OVERFLOW_COUNT * MXP_ISA_COUNT
};

typedef struct slot {
    _Atomic(uint16_t *) table;
    atomic_size_t seen;
} slot;

static slot slots[N_SLOTS];
static atomic_int tables_built;
static atomic_bool tables_off;

static int type_index(mxp_dtype t) { return t == MXP_F16 ? 0 : t == MXP_BF16 ? 1 : -1; }

int mxp_ew_lut16_key(const mxp_ew_plan *p, int op)
{
    const int ti = type_index(p->in[0]), to = type_index(p->out);
    const mxp_rounding r = p->convert.rounding;
    const mxp_overflow o = p->convert.overflow;
    if (p->nin != 1 || !p->costly || ti < 0 || to < 0 || p->convert.flags || (unsigned)r >= N_ROUND ||
        (unsigned)o >= MXP_OVERFLOW_COUNT || (unsigned)op >= MXP_UNARY_OP_COUNT)
        return 0;
    int k = op;
    k = k * N_TYPES + ti;
    k = k * N_TYPES + to;
    k = k * N_ROUND + (int)r;
    k = k * MXP_OVERFLOW_COUNT + (int)o;
    return k + 1; /* the ISA level is added when the table is looked up */
}

static uint16_t *build(const mxp_ew_plan *p)
{
    uint16_t *in = malloc(MXP_LUT16_BUILD * sizeof *in);
    uint16_t *t = malloc(MXP_LUT16_BUILD * sizeof *t);
    if (!in || !t) {
        free(in);
        free(t);
        return NULL;
    }
    for (uint32_t i = 0; i < MXP_LUT16_BUILD; i++)
        in[i] = (uint16_t)i;
    mxp_ew_plan q = *p;
    q.lut16 = 0;
    const char *const src[2] = { (const char *)in, (const char *)in };
    const ptrdiff_t is[2] = { 2, 2 };
    mxp_ew_run_1d(&q, MXP_LUT16_BUILD, (char *)t, 2, src, is, 0);
    free(in);
    return t;
}

const uint16_t *mxp_ew_lut16(const mxp_ew_plan *p, size_t n)
{
    if (!p->lut16 || p->custom || atomic_load_explicit(&tables_off, memory_order_relaxed))
        return NULL;
    const mxp_isa isa = mxp_isa_current();
    slot *s = &slots[(size_t)(p->lut16 - 1) * MXP_ISA_COUNT + (size_t)isa];
    uint16_t *t = atomic_load_explicit(&s->table, memory_order_acquire);
    if (t)
        return t;
    const size_t seen = atomic_fetch_add_explicit(&s->seen, n, memory_order_relaxed) + n;
    if (seen < MXP_LUT16_BUILD || atomic_load_explicit(&tables_built, memory_order_relaxed) >= MXP_LUT16_MAX)
        return NULL;
    uint16_t *fresh = build(p);
    if (!fresh)
        return NULL;
    uint16_t *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&s->table, &expected, fresh, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(fresh); /* another thread's table, the same bits */
        return expected;
    }
    atomic_fetch_add_explicit(&tables_built, 1, memory_order_relaxed);
    return fresh;
}

void mxp_lut16_u16_ref(void *out, ptrdiff_t os, const void *in, ptrdiff_t is, size_t n, const uint16_t *table)
{
    char *o = out;
    const char *a = in;
    if (os == 2 && is == 2 && !(((uintptr_t)o | (uintptr_t)a) & 1)) {
        uint16_t *y = out;
        const uint16_t *x = in;
        size_t i = 0;
        for (; i + 4 <= n; i += 4) { /* four loads in flight before the stores (in place too) */
            const uint16_t r0 = table[x[i]], r1 = table[x[i + 1]], r2 = table[x[i + 2]], r3 = table[x[i + 3]];
            y[i] = r0;
            y[i + 1] = r1;
            y[i + 2] = r2;
            y[i + 3] = r3;
        }
        for (; i < n; i++)
            y[i] = table[x[i]];
        return;
    }
    for (size_t i = 0; i < n; i++) { /* any stride, any alignment */
        uint16_t v;
        memcpy(&v, a + (ptrdiff_t)i * is, 2);
        v = table[v];
        memcpy(o + (ptrdiff_t)i * os, &v, 2);
    }
}

void mxp_ew_lut16_set_enabled(bool on)
{
    atomic_store(&tables_off, !on);
}

void mxp_ew_lut16_reset(void)
{
    for (size_t i = 0; i < N_SLOTS; i++) {
        free(atomic_exchange(&slots[i].table, NULL));
        atomic_store(&slots[i].seen, 0);
    }
    atomic_store(&tables_built, 0);
}
