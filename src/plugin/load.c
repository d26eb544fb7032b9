/* Loading operator plugins: dlopen, the registration function's
 * declarations checked and staged, then added all together or not at all. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "mxp/plugin.h"
#include "plugin/plugin-internal.h"

enum { MAX_OPS = 512, MAX_LIBS = 64, MAX_KERNELS = 64 };

typedef struct library {
    void *handle;
    char *path;
    int n_ops;
} library;

static mxp_op_entry ops[MAX_OPS];
static atomic_int n_ops_loaded; /* entries below it are complete (release/acquire) */
static library libs[MAX_LIBS];
static int n_libs;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER; /* held through a whole load */

/* The load in progress (under load_lock): its staged operators and the
 * first refusal. */
static mxp_op_entry staged[MAX_OPS];
static int n_staged;
static char refusal[512];

static _Thread_local char plugin_err[512];

const char *mxp_plugin_error(void) { return plugin_err; }
void mxp_plugin_error_clear(void) { plugin_err[0] = 0; }

static void host_set_error(mxp_plugin_host *host, const char *message)
{
    (void)host;
    snprintf(plugin_err, sizeof plugin_err, "%s", message ? message : "(no message)");
}

static int host_convert(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n)
{
    return mxp_convert(dst, dst_type, src, src_type, n, NULL) == MXP_OK ? 0 : -1;
}

static int host_declare(mxp_plugin_host *host, const mxp_op_def *def);

static mxp_plugin_host host = {
    .abi_version = MXP_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(mxp_plugin_host),
    .declare = host_declare,
    .set_error = host_set_error,
    .convert = host_convert,
};

/* ---- signatures ------------------------------------------------------- */

mxp_status mxp_op_parse_signature(const char *sig, int n, mxp_dtype *in, mxp_dtype *out, char *canon, size_t cap,
                                  const char *what)
{
    if (!sig)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: the signature is NULL", what);
    const char *arrow = strstr(sig, "->");
    if (!arrow)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: signature '%.80s' has no '->' (write \"float32->float32\")",
                         what, sig);
    int k = 0;
    size_t used = 0;
    canon[0] = 0;
    for (const char *p = sig; p <= arrow; k++) {
        const char *end = memchr(p, ',', (size_t)(arrow - p));
        end = end ? end : arrow;
        char name[32];
        size_t len = (size_t)(end - p);
        while (len && isspace((unsigned char)*p))
            p++, len--;
        while (len && isspace((unsigned char)p[len - 1]))
            len--;
        mxp_dtype dt = MXP_DTYPE_INVALID;
        if (len && len < sizeof name) {
            memcpy(name, p, len);
            name[len] = 0;
            dt = mxp_dtype_from_name(name);
        }
        if (dt == MXP_DTYPE_INVALID)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: signature '%.80s': '%.*s' is not a dtype name", what, sig,
                             (int)(len < 32 ? len : 32), p);
        if (k >= n)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: signature '%.80s' has more than %d input%s", what, sig, n,
                             n == 1 ? "" : "s");
        in[k] = dt;
        used += (size_t)snprintf(canon + used, used < cap ? cap - used : 0, "%s%s", k ? "," : "", mxp_dtype_name(dt));
        p = end + 1;
    }
    if (k != n)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: signature '%.80s' has %d input%s, the operator %d", what, sig,
                         k, k == 1 ? "" : "s", n);
    char name[32];
    const char *o = arrow + 2;
    while (isspace((unsigned char)*o))
        o++;
    size_t len = strlen(o);
    while (len && isspace((unsigned char)o[len - 1]))
        len--;
    *out = MXP_DTYPE_INVALID;
    if (len && len < sizeof name) {
        memcpy(name, o, len);
        name[len] = 0;
        *out = mxp_dtype_from_name(name);
    }
    if (*out == MXP_DTYPE_INVALID)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: signature '%.80s': its output '%.32s' is not a dtype name", what,
                         sig, o);
    used += (size_t)snprintf(canon + used, used < cap ? cap - used : 0, "->%s", mxp_dtype_name(*out));
    if (used >= cap)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: signature '%.80s' is too long", what, sig);
    return MXP_OK;
}

/* ---- declarations ----------------------------------------------------- */

/* Keeps the first refusal; -1. */
static int refuse(const char *fmt, const char *name, const char *detail)
{
    if (!refusal[0])
        snprintf(refusal, sizeof refusal, fmt, name, detail);
    return -1;
}

static bool valid_name(const char *s)
{
    if (!s || !(islower((unsigned char)*s) || *s == '_'))
        return false;
    size_t n = 0;
    for (; s[n]; n++)
        if (!(islower((unsigned char)s[n]) || isdigit((unsigned char)s[n]) || s[n] == '_'))
            return false;
    return n < MXP_OP_MAX_NAME;
}

/* "64x384,64x384": n shapes of at most MXP_MAXDIMS positive dims each. */
static bool valid_shapes(const char *s, int n)
{
    int k = 0;
    while (*s) {
        int dims = 0;
        for (;;) {
            char *end;
            long long d = strtoll(s, &end, 10);
            if (end == s || d <= 0 || d > (1 << 24) || ++dims > MXP_MAXDIMS)
                return false;
            s = end;
            if (*s != 'x')
                break;
            s++;
        }
        k++;
        if (*s == ',')
            s++;
        else if (*s)
            return false;
    }
    return k == n;
}

static int stage_kernels(mxp_op_entry *e, const mxp_op_def *def)
{
    if (!def->kernels || def->n_kernels < 1 || def->n_kernels > MAX_KERNELS)
        return refuse("operator '%s': %s", e->name, "it needs 1 to 64 kernels (kernels, n_kernels)");
    e->kernels = calloc((size_t)def->n_kernels, sizeof *e->kernels);
    if (!e->kernels)
        return refuse("operator '%s': %s", e->name, "out of memory");
    for (int i = 0; i < def->n_kernels; i++) {
        const mxp_op_kernel *k = &def->kernels[i];
        mxp_op_kernel_entry *ke = &e->kernels[i];
        char what[96];
        snprintf(what, sizeof what, "operator '%s', kernel %d", e->name, i);
        if (mxp_op_parse_signature(k->signature, def->n_inputs, ke->in, &ke->out, ke->signature,
                                   sizeof ke->signature, what) != MXP_OK)
            return refuse("%s%s", mxp_last_error(), "");
        if ((int)k->isa < 0 || k->isa >= MXP_ISA_COUNT)
            return refuse("%s: %s", what, "its isa is not an mxp_isa level");
        if (!k->fn.elementwise)
            return refuse("%s: %s", what, "its function is NULL");
        for (int j = 0; j < i; j++)
            if (!strcmp(e->kernels[j].signature, ke->signature) && e->kernels[j].isa == k->isa)
                return refuse("%s: %s", what, "an earlier kernel has the same signature and ISA level");
        ke->isa = k->isa;
        ke->fn = k->fn;
        e->n_kernels = i + 1;
    }
    return 0;
}

static int host_declare(mxp_plugin_host *h, const mxp_op_def *def)
{
    (void)h;
    if (!def)
        return refuse("%s%s", "a declaration is NULL", "");
    const char *name = valid_name(def->name) ? def->name : NULL;
    char shown[80];
    snprintf(shown, sizeof shown, "%.60s", def->name ? def->name : "(NULL)");
    if (def->abi_version != MXP_PLUGIN_ABI_VERSION) {
        char d[128];
        snprintf(d, sizeof d, "was built for plugin ABI version %u; this mxp has version %d", def->abi_version,
                 MXP_PLUGIN_ABI_VERSION);
        return refuse("operator '%s' %s", shown, d);
    }
    if (def->struct_size != sizeof(mxp_op_def))
        return refuse("operator '%s': %s", shown, "struct_size is not sizeof(mxp_op_def)");
    if (!name)
        return refuse("operator name '%s': %s", shown,
                      "names are lower-case letters, digits and '_', not starting with a digit, under 64 bytes");
    if (n_staged == MAX_OPS || atomic_load(&n_ops_loaded) + n_staged >= MAX_OPS)
        return refuse("operator '%s': %s", name, "the operator table is full (512 operators)");
    for (int i = 0; i < n_staged; i++)
        if (!strcmp(staged[i].name, name))
            return refuse("operator '%s': %s", name, "declared twice by this plugin");
    if (def->kind != MXP_OP_ELEMENTWISE && def->kind != MXP_OP_REDUCTION && def->kind != MXP_OP_GENERAL)
        return refuse("operator '%s': %s", name, "kind is not MXP_OP_ELEMENTWISE, MXP_OP_REDUCTION or MXP_OP_GENERAL");
    if (def->n_inputs < 1 || def->n_inputs > MXP_OP_MAX_INPUTS || (def->kind == MXP_OP_REDUCTION && def->n_inputs != 1))
        return refuse("operator '%s': %s", name, "n_inputs must be 1 to 8 (a reduction: 1)");
    if ((def->kind == MXP_OP_GENERAL) != (def->shape != NULL))
        return refuse("operator '%s': %s", name,
                      def->shape ? "only general operators have a shape function" : "a general operator needs a shape function");
    if (def->check_shapes && !valid_shapes(def->check_shapes, def->n_inputs))
        return refuse("operator '%s': %s", name, "check_shapes is not one shape per input like \"64x384,64x384\"");
    mxp_op_entry *e = &staged[n_staged];
    memset(e, 0, sizeof *e);
    strcpy(e->name, name);
    snprintf(e->prof_name, sizeof e->prof_name, "op:%s", name);
    e->kind = def->kind;
    e->n_inputs = def->n_inputs;
    e->reference = def->reference;
    e->shape = def->shape;
    e->ctx = def->ctx;
    n_staged++; /* from here its memory is freed with the staging */
    e->doc = strdup(def->doc ? def->doc : "");
    e->check_shapes = strdup(def->check_shapes ? def->check_shapes : "");
    if (!e->doc || !e->check_shapes)
        return refuse("operator '%s': %s", name, "out of memory");
    return stage_kernels(e, def);
}

/* ---- loading ---------------------------------------------------------- */

static void free_staged(void)
{
    for (int i = 0; i < n_staged; i++) {
        free(staged[i].doc);
        free(staged[i].check_shapes);
        free(staged[i].kernels);
    }
    n_staged = 0;
}

/* Checks the staged operators against the loaded ones and adds them. */
static mxp_status commit(const char *path, void *handle, int *n_out)
{
    int base = atomic_load(&n_ops_loaded);
    for (int i = 0; i < n_staged; i++)
        for (int j = 0; j < base; j++)
            if (!strcmp(staged[i].name, ops[j].name))
                return mxp_error(MXP_ERR_INVALID_ARGUMENT, "plugin %s: operator '%s' is already declared by %s", path,
                                 staged[i].name, ops[j].library);
    if (n_libs == MAX_LIBS)
        return mxp_error(MXP_ERR_NO_MEMORY, "plugin %s: %d plugins are loaded already", path, MAX_LIBS);
    char *kept = strdup(path);
    if (!kept)
        return mxp_error(MXP_ERR_NO_MEMORY, "plugin %s: out of memory", path);
    libs[n_libs++] = (library){ .handle = handle, .path = kept, .n_ops = n_staged };
    for (int i = 0; i < n_staged; i++) {
        ops[base + i] = staged[i];
        ops[base + i].library = kept;
    }
    atomic_store_explicit(&n_ops_loaded, base + n_staged, memory_order_release);
    *n_out = n_staged;
    n_staged = 0; /* the entries own their memory now */
    return MXP_OK;
}

static mxp_status load_locked(const char *path, void *handle, int *n_out)
{
    for (int i = 0; i < n_libs; i++) {
        if (libs[i].handle == handle) {
            dlclose(handle); /* the count dlopen took again */
            *n_out = libs[i].n_ops;
            return MXP_OK;
        }
    }
    mxp_plugin_register_fn reg;
    *(void **)&reg = dlsym(handle, MXP_PLUGIN_REGISTER_SYMBOL);
    if (!reg)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                         "%s is not an mxp plugin: it has no function " MXP_PLUGIN_REGISTER_SYMBOL, path);
    refusal[0] = 0;
    mxp_plugin_error_clear();
    n_staged = 0;
    int rc = reg(&host);
    mxp_status st = MXP_OK;
    if (refusal[0])
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "plugin %s refused: %s", path, refusal);
    else if (rc != 0)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "plugin %s: its registration failed (returned %d): %s", path, rc,
                       plugin_err[0] ? plugin_err : "it gave no reason");
    else if (n_staged == 0)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "plugin %s declared no operators", path);
    else
        st = commit(path, handle, n_out);
    free_staged();
    mxp_plugin_error_clear();
    return st;
}

mxp_status mxp_ops_load(const char *path, int *n_ops)
{
    int dummy;
    n_ops = n_ops ? n_ops : &dummy;
    *n_ops = 0;
    if (!path || !*path)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_ops_load: path is NULL or empty");
    /* A path (not a bare name the loader searches for) must be a regular
     * file: dlopen would block on a FIFO and read a device. */
    struct stat sb;
    if (strchr(path, '/') && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return mxp_error(MXP_ERR_IO, "cannot load plugin %s: it is not a regular file", path);
    pthread_mutex_lock(&load_lock);
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    mxp_status st;
    if (!handle) {
        const char *why = dlerror();
        st = mxp_error(MXP_ERR_IO, "cannot load plugin %s: %s", path, why ? why : "dlopen failed");
    } else {
        st = load_locked(path, handle, n_ops);
        if (st != MXP_OK)
            dlclose(handle);
    }
    pthread_mutex_unlock(&load_lock);
    return st;
}

/* ---- the table -------------------------------------------------------- */

int mxp_op_count(void) { return atomic_load_explicit(&n_ops_loaded, memory_order_acquire); }

const mxp_op_entry *mxp_op_lookup(const char *name)
{
    const int n = mxp_op_count();
    for (int i = 0; name && i < n; i++)
        if (!strcmp(ops[i].name, name))
            return &ops[i];
    return NULL;
}

mxp_status mxp_op_find(const char *name, const mxp_op_entry **e)
{
    if (!name)
        return *e = NULL, mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator name is NULL");
    if ((*e = mxp_op_lookup(name)))
        return MXP_OK;
    return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                     "no operator named '%.64s' is loaded (%d loaded: mxp_ops_load, mxp op list)", name,
                     mxp_op_count());
}

static mxp_status fill_info(const mxp_op_entry *e, mxp_op_info *info)
{
    if (!info)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_info: info is NULL");
    if (info->struct_size != 0 && info->struct_size != sizeof *info)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_info: info->struct_size is %zu, not 0 or %zu",
                         info->struct_size, sizeof *info);
    size_t keep = info->struct_size;
    *info = (mxp_op_info){ .struct_size = keep, .name = e->name, .doc = e->doc, .library = e->library,
                           .kind = e->kind, .n_inputs = e->n_inputs, .n_kernels = e->n_kernels,
                           .has_reference = e->reference.elementwise != NULL, .check_shapes = e->check_shapes };
    return MXP_OK;
}

mxp_status mxp_op_info_at(int index, mxp_op_info *info)
{
    int n = mxp_op_count();
    if (index < 0 || index >= n)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_info_at: index %d is not below the %d operators loaded",
                         index, n);
    return fill_info(&ops[index], info);
}

mxp_status mxp_op_info_by_name(const char *name, mxp_op_info *info)
{
    const mxp_op_entry *e;
    mxp_status st = mxp_op_find(name, &e);
    return st == MXP_OK ? fill_info(e, info) : st;
}

mxp_status mxp_op_kernel_at(const char *name, int k, const char **signature, mxp_dtype *in_types, mxp_dtype *out_type,
                            mxp_isa *isa)
{
    const mxp_op_entry *e;
    mxp_status st = mxp_op_find(name, &e);
    if (st != MXP_OK)
        return st;
    if (k < 0 || k >= e->n_kernels)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s' has %d kernels; %d is not one", name, e->n_kernels,
                         k);
    const mxp_op_kernel_entry *ke = &e->kernels[k];
    if (signature)
        *signature = ke->signature;
    if (in_types)
        memcpy(in_types, ke->in, (size_t)e->n_inputs * sizeof *in_types);
    if (out_type)
        *out_type = ke->out;
    if (isa)
        *isa = ke->isa;
    return MXP_OK;
}

const char *mxp_op_kind_name(mxp_op_kind kind)
{
    return kind == MXP_OP_ELEMENTWISE ? "elementwise"
           : kind == MXP_OP_REDUCTION ? "reduction"
           : kind == MXP_OP_GENERAL   ? "general"
                                      : "invalid";
}
