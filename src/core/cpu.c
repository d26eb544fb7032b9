/* CPU feature detection (CPUID + XCR0) and the ISA level cap.
 * Queries are plain functions that report nothing on non-x86 machines. */
#define _DEFAULT_SOURCE /* syscall() (the AMX permission) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/cpu-internal.h"
#include "core/error.h"
#include "mxp/cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MXP_X86 1
#endif
#if defined(MXP_X86) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static uint64_t features;
static char features_str[256];
static char brand[49];
static char vendor[13];
static unsigned cpu_family, cpu_model;
static size_t l3_bytes; /* one L3 instance, from CPUID's cache leaves; 0 where unknown */
static mxp_uarch uarch = MXP_UARCH_OTHER;
static mxp_isa supported_isa = MXP_ISA_SCALAR;
static mxp_isa env_cap = MXP_ISA_COUNT; /* MXP_ISA, or none */
static atomic_int isa_cap;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#ifdef MXP_X86
static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* Linux hands the tiles' 8 KiB of state to a process only when it asks
 * (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, once, for every
 * thread); without the permission a tile instruction raises SIGILL.  The
 * request is refused where a thread's alternate signal stack is too small
 * for the larger signal frames: then the level stays below amx. */
static bool amx_permitted(void)
{
#ifdef __linux__
    enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
    return false;
#endif
}

/* Whether this thread's AMX tiles hold the kernels' configuration
 * (src/kernels/amx-tiles.h). */
_Thread_local bool mxp_amx_tiles_configured;

/* The bytes of the level-3 cache from CPUID's deterministic cache
 * parameters (leaf 4 on Intel, 0x8000001D on AMD: ways x partitions x line
 * x sets of one instance, the cache the cores of a CCX or die share), 0
 * where the leaf is absent or lists no level-3 cache. */
static size_t cpuid_l3_bytes(unsigned leaf)
{
    for (unsigned sub = 0; sub < 16; sub++) {
        unsigned a, b, c, d;
        __cpuid_count(leaf, sub, a, b, c, d);
        (void)d;
        if ((a & 0x1f) == 0) /* no more caches */
            return 0;
        if (((a >> 5) & 7) == 3)
            return (size_t)((b >> 22) + 1) * (((b >> 12) & 0x3ff) + 1) * ((b & 0xfff) + 1) * ((size_t)c + 1);
    }
    return 0;
}

static void detect_x86(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return;
    memcpy(vendor, &b, 4); /* CPUID.0: EBX, EDX, ECX spell the vendor */
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = '\0';
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    /* CPUID.1:EAX: family [11:8] + extended family [27:20] when it is 0xf;
     * model [7:4] with extended model [19:16] for families 6 and 0xf up. */
    unsigned fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;
    cpu_family = fam == 0xf ? fam + ((a >> 20) & 0xff) : fam;
    cpu_model = fam == 0x6 || fam == 0xf ? mod | (((a >> 16) & 0xf) << 4) : mod;
    features |= (d & (1u << 26)) ? MXP_CPU_SSE2 : 0;     /* CPUID.1:EDX.SSE2[26] */
    bool osxsave = c & (1u << 27);                         /* CPUID.1:ECX.OSXSAVE[27] */
    uint64_t xcr0 = osxsave ? read_xcr0() : 0;
    bool os_ymm = (xcr0 & 0x6) == 0x6;                     /* XCR0: SSE[1] and AVX[2] state */
    bool os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;         /* XCR0: opmask[5], ZMM_Hi256[6], Hi16_ZMM[7] */
    if (os_ymm) {
        features |= (c & (1u << 28)) ? MXP_CPU_AVX : 0;    /* CPUID.1:ECX.AVX[28] */
        features |= (c & (1u << 12)) ? MXP_CPU_FMA : 0;    /* CPUID.1:ECX.FMA[12] */
        features |= (c & (1u << 29)) ? MXP_CPU_F16C : 0;   /* CPUID.1:ECX.F16C[29] */
    }
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if (os_ymm) {
            features |= (b & (1u << 5)) ? MXP_CPU_AVX2 : 0;       /* CPUID.7.0:EBX.AVX2[5] */
        }
        if (os_zmm) {
            features |= (b & (1u << 16)) ? MXP_CPU_AVX512F : 0;   /* EBX.AVX512F[16] */
            features |= (b & (1u << 17)) ? MXP_CPU_AVX512DQ : 0;  /* EBX.AVX512DQ[17] */
            features |= (b & (1u << 30)) ? MXP_CPU_AVX512BW : 0;  /* EBX.AVX512BW[30] */
            features |= (b & (1u << 31)) ? MXP_CPU_AVX512VL : 0;  /* EBX.AVX512VL[31] */
            features |= (c & (1u << 11)) ? MXP_CPU_AVX512VNNI : 0; /* ECX.AVX512_VNNI[11] */
            features |= (c & (1u << 1)) ? MXP_CPU_AVX512VBMI : 0;  /* ECX.AVX512_VBMI[1] */
            features |= (d & (1u << 23)) ? MXP_CPU_AVX512FP16 : 0; /* EDX.AVX512_FP16[23] */
            /* EDX.AMX-BF16[22], AMX-TILE[24], AMX-INT8[25]; XCR0: XTILECFG[17], XTILEDATA[18] */
            if ((d & (1u << 24)) && (xcr0 & 0x60000) == 0x60000 && amx_permitted())
                features |= MXP_CPU_AMX_TILE | ((d & (1u << 22)) ? MXP_CPU_AMX_BF16 : 0) |
                            ((d & (1u << 25)) ? MXP_CPU_AMX_INT8 : 0);
            unsigned a1, b1, c1, d1;
            __cpuid_count(7, 1, a1, b1, c1, d1);
            features |= (a1 & (1u << 5)) ? MXP_CPU_AVX512BF16 : 0; /* CPUID.7.1:EAX.AVX512_BF16[5] */
            (void)b1; (void)c1; (void)d1;
        }
        if (os_ymm) {
            unsigned a1, b1, c1, d1;
            __cpuid_count(7, 1, a1, b1, c1, d1);
            features |= (a1 & (1u << 4)) ? MXP_CPU_AVXVNNI : 0;   /* CPUID.7.1:EAX.AVX_VNNI[4] */
            (void)b1; (void)c1; (void)d1;
        }
    }
    unsigned ext = __get_cpuid_max(0x80000000u, NULL);
    if (!strcmp(vendor, "AuthenticAMD") && ext >= 0x8000001du) {
        unsigned a1, b1, c1, d1; /* CPUID.80000001H:ECX.TopologyExtensions[22]: leaf 0x8000001D */
        __cpuid(0x80000001u, a1, b1, c1, d1);
        (void)a1, (void)b1, (void)d1;
        if (c1 & (1u << 22))
            l3_bytes = cpuid_l3_bytes(0x8000001du);
    } else if (max_leaf >= 4) {
        l3_bytes = cpuid_l3_bytes(4);
    }
    if (ext >= 0x80000004u) {
        unsigned *w = (unsigned *)(void *)brand;
        for (unsigned leaf = 0; leaf < 3; leaf++)
            __get_cpuid(0x80000002u + leaf, &w[4 * leaf], &w[4 * leaf + 1], &w[4 * leaf + 2], &w[4 * leaf + 3]);
        brand[48] = '\0';
    }
}
#endif

static const struct { uint64_t bit; const char *name; } feature_names[] = {
    { MXP_CPU_SSE2, "sse2" }, { MXP_CPU_AVX, "avx" }, { MXP_CPU_AVX2, "avx2" },
    { MXP_CPU_FMA, "fma" }, { MXP_CPU_F16C, "f16c" }, { MXP_CPU_AVX512F, "avx512f" },
    { MXP_CPU_AVX512BW, "avx512bw" }, { MXP_CPU_AVX512VL, "avx512vl" },
    { MXP_CPU_AVX512DQ, "avx512dq" }, { MXP_CPU_AVX512BF16, "avx512bf16" },
    { MXP_CPU_AVX512VNNI, "avx512vnni" }, { MXP_CPU_AVX512FP16, "avx512fp16" },
    { MXP_CPU_AVXVNNI, "avxvnni" }, { MXP_CPU_AVX512VBMI, "avx512vbmi" },
    { MXP_CPU_AMX_TILE, "amx-tile" }, { MXP_CPU_AMX_BF16, "amx-bf16" }, { MXP_CPU_AMX_INT8, "amx-int8" },
};

static const char *const isa_names[MXP_ISA_COUNT] = { "scalar", "avx2", "avx512", "avx512bf16", "amx" };

static void init(void)
{
#ifdef MXP_X86
    detect_x86();
#endif
    for (size_t i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++) {
        if (features & feature_names[i].bit) {
            if (features_str[0])
                strcat(features_str, " ");
            strcat(features_str, feature_names[i].name);
        }
    }
    const uint64_t avx2 = MXP_CPU_AVX2 | MXP_CPU_FMA | MXP_CPU_F16C;
    const uint64_t avx512 = avx2 | MXP_CPU_AVX512F | MXP_CPU_AVX512BW | MXP_CPU_AVX512VL | MXP_CPU_AVX512DQ;
    const uint64_t bf16 = avx512 | MXP_CPU_AVX512BF16 | MXP_CPU_AVX512VNNI;
    const uint64_t amx = bf16 | MXP_CPU_AMX_TILE | MXP_CPU_AMX_BF16 | MXP_CPU_AMX_INT8;
    if ((features & amx) == amx)
        supported_isa = MXP_ISA_AMX;
    else if ((features & bf16) == bf16)
        supported_isa = MXP_ISA_AVX512BF16;
    else if ((features & avx512) == avx512)
        supported_isa = MXP_ISA_AVX512;
    else if ((features & avx2) == avx2)
        supported_isa = MXP_ISA_AVX2;
    const char *env = getenv("MXP_ISA");
    if (env && *env) {
        env_cap = mxp_isa_from_name(env);
        if (env_cap == MXP_ISA_COUNT) /* caps nothing, but not silently */
            fprintf(stderr, "mxp: MXP_ISA='%.40s' is not one of scalar, avx2, avx512, avx512bf16, amx; ignored\n", env);
    }
    atomic_store(&isa_cap, (int)(env_cap < supported_isa ? env_cap : supported_isa));
    /* Zen 3 shares family 0x19 with Zen 4 but has no AVX-512. */
    if (!strcmp(vendor, "AuthenticAMD") && cpu_family == 0x19 && (features & MXP_CPU_AVX512F))
        uarch = MXP_UARCH_ZEN4;
    else if (!strcmp(vendor, "AuthenticAMD") && cpu_family == 0x1a)
        uarch = MXP_UARCH_ZEN5;
    else if (!strcmp(vendor, "GenuineIntel"))
        uarch = MXP_UARCH_INTEL;
}

const char *mxp_cpu_vendor(void)
{
    pthread_once(&once, init);
    return vendor;
}

unsigned mxp_cpu_family(void)
{
    pthread_once(&once, init);
    return cpu_family;
}

unsigned mxp_cpu_model(void)
{
    pthread_once(&once, init);
    return cpu_model;
}

mxp_uarch mxp_cpu_uarch_id(void)
{
    pthread_once(&once, init);
    return uarch;
}

const char *mxp_uarch_name(mxp_uarch u)
{
    switch (u) {
    case MXP_UARCH_ZEN4: return "zen4";
    case MXP_UARCH_ZEN5: return "zen5";
    case MXP_UARCH_INTEL: return "intel";
    default: return "other";
    }
}

const char *mxp_cpu_uarch(void)
{
    return mxp_uarch_name(mxp_cpu_uarch_id());
}

uint64_t mxp_cpu_features(void)
{
    pthread_once(&once, init);
    return features;
}

const char *mxp_cpu_features_string(void)
{
    pthread_once(&once, init);
    return features_str;
}

size_t mxp_cpu_l3_bytes(void)
{
    pthread_once(&once, init);
    return l3_bytes;
}

const char *mxp_cpu_brand(void)
{
    pthread_once(&once, init);
    const char *p = brand;
    while (*p == ' ')
        p++;
    return p;
}

mxp_isa mxp_isa_supported(void)
{
    pthread_once(&once, init);
    return supported_isa;
}

mxp_isa mxp_isa_current(void) /* the old name */
{
    return mxp_get_isa();
}

mxp_isa mxp_get_isa(void)
{
    pthread_once(&once, init);
    return (mxp_isa)atomic_load_explicit(&isa_cap, memory_order_relaxed);
}

mxp_status mxp_set_isa(mxp_isa level)
{
    pthread_once(&once, init);
    if ((unsigned)level >= MXP_ISA_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "ISA level %d is not one of mxp_isa's (0..%d)",
                         (int)level, MXP_ISA_COUNT - 1);
    mxp_isa cap = level < supported_isa ? level : supported_isa;
    atomic_store(&isa_cap, (int)(env_cap < cap ? env_cap : cap)); /* MXP_ISA still caps */
    return MXP_OK;
}

const char *mxp_isa_name(mxp_isa level)
{
    return (unsigned)level < MXP_ISA_COUNT ? isa_names[level] : "invalid";
}

mxp_isa mxp_isa_from_name(const char *name)
{
    if (!name)
        return MXP_ISA_COUNT;
    for (int i = 0; i < MXP_ISA_COUNT; i++) {
        if (!strcasecmp(name, isa_names[i]))
            return (mxp_isa)i;
    }
    return MXP_ISA_COUNT;
}
