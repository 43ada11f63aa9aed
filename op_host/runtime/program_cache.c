/* The program cache: each (sources, options, kernel) variant is built once per context. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_host/runtime/cl_status.h"
#include "op_host/runtime/context.h"
#include "op_host/runtime/kernel_sources.h"

static char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
            if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
            } else {
                buf[n] = '\0';
                *size = (size_t)n;
            }
        }
    }
    fclose(f);
    return buf;
}

/* The text of source name: from IFA_KERNEL_DIR when it is set (*owned 1: malloc'd), else the embedded copy. */
static ifa_status load_one(const char *name, const char **text, size_t *size, int *owned) {
    const char *dir = getenv("IFA_KERNEL_DIR");
    *owned = 0, *text = NULL;
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        char *t = read_file(path, size);
        if (!t) return ifa__fail(IFA_STATUS_BUILD_FAILED, "IFA_KERNEL_DIR is set but %s cannot be read", path);
        *text = t, *owned = 1;
        return IFA_STATUS_OK;
    }
    for (int j = 0; j < ifa__kernel_source_count; ++j)
        if (strcmp(ifa__kernel_sources[j].name, name) == 0) {
            *text = ifa__kernel_sources[j].text, *size = ifa__kernel_sources[j].size;
            return IFA_STATUS_OK;
        }
    return ifa__fail(IFA_STATUS_INTERNAL, "kernel source %s is not embedded in this build", name);
}

typedef struct {
    char *p;
    size_t n, cap;
} text_buf;

static int append(text_buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return 0;
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 1;
}

/* The file a line [s, e) names when it is an include directive of a source, #include "NAME" alone on its line,
 * into name (size bytes); 0 for any other line. */
static int include_name(const char *s, const char *e, char *name, size_t size) {
    while (s < e && (*s == ' ' || *s == '\t')) ++s;
    if (s == e || *s++ != '#') return 0;
    while (s < e && (*s == ' ' || *s == '\t')) ++s;
    if ((size_t)(e - s) < 8 || strncmp(s, "include", 7) != 0) return 0;
    for (s += 7; s < e && (*s == ' ' || *s == '\t');) ++s;
    if (s == e || *s++ != '"') return 0;
    const char *q = memchr(s, '"', (size_t)(e - s));
    if (!q || q == s || (size_t)(q - s) >= size) return 0;
    for (const char *t = q + 1; t < e; ++t)
        if (*t != ' ' && *t != '\t' && *t != '\r') return 0;
    memcpy(name, s, (size_t)(q - s));
    name[q - s] = '\0';
    return 1;
}

/* text (size bytes) into b with each #include "NAME" line replaced by source NAME's text, itself expanded: the
 * kernels' shared pieces (.clh) are sources like the rest, embedded or from IFA_KERNEL_DIR, so a program needs no
 * include path at build time. depth: the includes above this text (at most 4). */
static ifa_status expand(const char *from, const char *text, size_t size, int depth, text_buf *b) {
    for (const char *s = text, *end = text + size; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end, *next = nl ? nl + 1 : end;
        char name[256];
        if (!include_name(s, e, name, sizeof name)) {
            if (!append(b, s, (size_t)(next - s))) return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "source of %s", from);
        } else {
            if (depth >= 4) return ifa__fail(IFA_STATUS_BUILD_FAILED, "%s: includes nested deeper than 4", name);
            const char *t;
            size_t n = 0;
            int owned;
            IFA__TRY(load_one(name, &t, &n, &owned));
            ifa_status st = expand(name, t, n, depth + 1, b);
            if (owned) free((void *)t);
            if (st != IFA_STATUS_OK) return st;
            if (b->n > 0 && b->p[b->n - 1] != '\n' && !append(b, "\n", 1))
                return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "source of %s", from);
        }
        s = next;
    }
    return IFA_STATUS_OK;
}

/* Fills texts[i] (owned[i] set when malloc'd: read from IFA_KERNEL_DIR, or with its includes expanded). Every
 * owned[i] is set before the first read, so that on a failure the caller frees exactly the texts read so far. */
static ifa_status load_sources(const char *const *names, int count, const char **texts, size_t *sizes, int *owned) {
    for (int i = 0; i < count; ++i) owned[i] = 0, texts[i] = NULL;
    for (int i = 0; i < count; ++i) {
        IFA__TRY(load_one(names[i], &texts[i], &sizes[i], &owned[i]));
        if (!strstr(texts[i], "#include")) continue;
        text_buf b = {0};
        ifa_status st = expand(names[i], texts[i], sizes[i], 0, &b);
        if (owned[i]) free((void *)texts[i]);
        texts[i] = b.p, sizes[i] = b.n, owned[i] = b.p != NULL;
        if (st != IFA_STATUS_OK) return st;
        if (!b.p) texts[i] = "", sizes[i] = 0;
    }
    return IFA_STATUS_OK;
}

/* Whether environment variable name is set to something other than "" or "0". */
static int env_on(const char *name) {
    const char *env = getenv(name);
    return env && *env && strcmp(env, "0") != 0;
}

/* IFA_BUILD_LOG=1: every program built prints its kernel, options and the compiler's log to stderr, so a
 * warning in a kernel variant (or a vendor compiler's complaint) is seen; tests/check_kernel_warnings.cmake
 * fails on any warning that points into ifa's sources. On NVIDIA the build also asks for -cl-nv-verbose (the
 * log then gives ptxas's registers and spills per kernel), and every device's kernel gets a line of its
 * private (spilled) and local memory. Read at each build: builds are rare and slow. */
static int build_log_on(void) { return env_on("IFA_BUILD_LOG"); }

static void print_build_log(const ifa_context *ctx, cl_program program, const char *kernel_name,
                            const char *options) {
    if (!build_log_on()) return;
    size_t n = 0;
    char *log = NULL;
    if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS && n > 0 &&
        (log = malloc(n + 1)) != NULL &&
        clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS)
        log[n] = '\0';
    else if (log)
        log[0] = '\0';
    fprintf(stderr, "ifa_build_log: kernel=%s options=\"%s\"\n%s%s", kernel_name, options, log ? log : "",
            log && *log && log[strlen(log) - 1] != '\n' ? "\n" : "");
    free(log);
}

/* IFA_DUMP_BINARIES=DIR: every program built is written to DIR as KERNEL-HASH.bin (what
 * CL_PROGRAM_BINARIES returns: PTX on NVIDIA, so that the loads a variant compiled to can be read) beside
 * KERNEL-HASH.options (its build options; HASH is theirs). For diagnosis; a failure to write is ignored. */
static void dump_binary(const ifa_context *ctx, cl_program program, const char *kernel_name, const char *options) {
    const char *dir = getenv("IFA_DUMP_BINARIES");
    if (!dir || !*dir) return;
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0) return;
    unsigned char *bin = malloc(size);
    if (!bin) return;
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS) {
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (const char *c = options; *c; ++c) h = (h ^ (unsigned char)*c) * 1099511628211ull;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s-%016llx.bin", dir, kernel_name, (unsigned long long)h);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(bin, 1, size, f);
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/%s-%016llx.options", dir, kernel_name, (unsigned long long)h);
        f = fopen(path, "w");
        if (f) {
            fprintf(f, "%s\n%s\n", ctx->device_name, options);
            fclose(f);
        }
    }
    free(bin);
}

static ifa_status build(ifa_context *ctx, const char *const *names, int count, const char *options,
                        const char *kernel_name, ifa__cached_kernel *e) {
    enum { MAX_SOURCES = 12 };
    const char *texts[MAX_SOURCES];
    size_t sizes[MAX_SOURCES];
    int owned[MAX_SOURCES];
    if (count < 1 || count > MAX_SOURCES) return ifa__fail(IFA_STATUS_INTERNAL, "program with %d sources", count);
    ifa_status st = load_sources(names, count, texts, sizes, owned);
    cl_int err = CL_SUCCESS;
    if (st == IFA_STATUS_OK) {
        e->program = clCreateProgramWithSource(ctx->cl_ctx, (cl_uint)count, texts, sizes, &err);
        if (err != CL_SUCCESS) st = ifa__fail_cl(err, "clCreateProgramWithSource", "program of %s", names[count - 1]);
    }
    for (int i = 0; i < count; ++i)
        if (owned[i]) free((void *)texts[i]);
    if (st != IFA_STATUS_OK) return st;

    char verbose[2100];
    if (build_log_on() && ctx->facts.vendor == IFA_VENDOR_NVIDIA &&
        (size_t)snprintf(verbose, sizeof verbose, "%s -cl-nv-verbose", options) < sizeof verbose)
        options = verbose;
    err = clBuildProgram(e->program, 1, &ctx->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[1536] = "";
        size_t n = 0;
        clGetProgramBuildInfo(e->program, ctx->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &n);
        log[sizeof log - 1] = '\0';
        return ifa__fail_cl(err, "clBuildProgram", "%s with options \"%s\"; build log: %s", names[count - 1], options,
                            log);
    }
    print_build_log(ctx, e->program, kernel_name, options);
    dump_binary(ctx, e->program, kernel_name, options);
    e->kernel = clCreateKernel(e->program, kernel_name, &err);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clCreateKernel", "kernel %s", kernel_name);
    err = clGetKernelWorkGroupInfo(e->kernel, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof e->max_work_group_size,
                                   &e->max_work_group_size, NULL);
    if (err == CL_SUCCESS)
        err = clGetKernelWorkGroupInfo(e->kernel, ctx->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof e->local_mem_bytes,
                                       &e->local_mem_bytes, NULL);
    if (err != CL_SUCCESS) return ifa__fail_cl(err, "clGetKernelWorkGroupInfo", "kernel %s", kernel_name);
    cl_ulong private_bytes = 0;
    if (build_log_on() && clGetKernelWorkGroupInfo(e->kernel, ctx->device, CL_KERNEL_PRIVATE_MEM_SIZE,
                                                   sizeof private_bytes, &private_bytes, NULL) == CL_SUCCESS)
        fprintf(stderr, "ifa_kernel_info: kernel=%s private_mem_bytes=%llu local_mem_bytes=%llu max_work_group_size=%zu\n",
                kernel_name, (unsigned long long)private_bytes, (unsigned long long)e->local_mem_bytes,
                e->max_work_group_size);
    return IFA_STATUS_OK;
}

static void release_entry(ifa__cached_kernel *e) {
    if (e->kernel) clReleaseKernel(e->kernel);
    if (e->program) clReleaseProgram(e->program);
    mtx_destroy(&e->lock);
    free(e->defines);
    free(e);
}

static int same_text(const char *a, const char *b) { return a == b || strcmp(a, b) == 0; }

static int entry_matches(const ifa__cached_kernel *e, const char *const *sources, int source_count,
                         const ifa__define *defines, int define_count, const char *kernel_name) {
    if (e->source_count != source_count || e->define_count != define_count || !same_text(e->kernel_name, kernel_name))
        return 0;
    for (int i = 0; i < define_count; ++i)
        if (e->defines[i].value != defines[i].value) return 0;
    for (int i = 0; i < define_count; ++i)
        if (!same_text(e->defines[i].name, defines[i].name)) return 0;
    if (e->sources != sources)
        for (int i = 0; i < source_count; ++i)
            if (!same_text(e->sources[i], sources[i])) return 0;
    return 1;
}

/* IFA_KERNEL_WERROR=1: every program is built with -Werror (an OpenCL build option), so a compiler warning in
 * a kernel variant fails its build with the log in the error message. The test script sets it: every variant
 * the suite builds with a cold kernel cache is then checked for warnings by the compile it needs anyway (a
 * failed build is never cached, and a changed source or option is a new cache entry). Off by default: another
 * vendor's compiler may warn where PoCL's does not, and an engine's decode must not fail on that. Read at each
 * build: builds are rare and slow. */
static int kernel_werror(void) { return env_on("IFA_KERNEL_WERROR"); }

/* IFA_CPU_OPT_DISABLE=1: on a CPU device every program is built with -cl-opt-disable (a standard OpenCL build
 * option), which PoCL compiles 4-5x faster (its kernel compiler's passes and codegen at -O0). For the suite's runs
 * of the GPU kernel shapes on PoCL: their production compile is the GPU's, so what those runs check is the
 * source's logic, and unoptimised PoCL code still runs the test shapes in seconds. Ignored on a GPU, where the
 * shapes' compile is the production one. The option is part of the build options, hence of PoCL's cache key:
 * an unoptimised binary is never reused by an optimised build. */
static int cpu_opt_disable(const ifa_context *ctx) {
    return ifa__vendor_is_cpu(ctx->facts.vendor) && env_on("IFA_CPU_OPT_DISABLE");
}

/* IFA_CPU and IFA_NV say what the device is, not what the plan is shaped for (a test may run a CPU-shaped plan on
 * a GPU): clang's __builtin_prefetch takes a generic pointer, which NVIDIA's OpenCL 1.2 compiler refuses a
 * __global one for; NVIDIA's compiler takes inline PTX (the lane shape's warp shuffles, the matrix shape's matrix
 * instructions), no other does. */
int ifa__format_build_options(int32_t vendor, int werror, int opt_disable, const ifa__define *defines,
                              int define_count, char *out, size_t size) {
    int n = snprintf(out, size, "-cl-std=CL1.2%s%s -D IFA_CPU=%d -D IFA_NV=%d", werror ? " -Werror" : "",
                     opt_disable ? " -cl-opt-disable" : "", ifa__vendor_is_cpu(vendor), vendor == IFA_VENDOR_NVIDIA);
    for (int i = 0; i < define_count && n > 0 && (size_t)n < size; ++i) {
        n += snprintf(out + n, size - (size_t)n, " -D %s=%lld", defines[i].name, (long long)defines[i].value);
    }
    return n > 0 && (size_t)n < size;
}

static int format_options(const ifa_context *ctx, const ifa__define *defines, int define_count, char *out,
                          size_t size) {
    return ifa__format_build_options(ctx->facts.vendor, kernel_werror(), cpu_opt_disable(ctx), defines, define_count,
                                     out, size);
}

ifa_status ifa__get_kernel(ifa_context *ctx, const char *const *sources, int source_count, const ifa__define *defines,
                           int define_count, const char *kernel_name, ifa__cached_kernel **out) {
    if (define_count < 0 || (define_count > 0 && !defines))
        return ifa__fail(IFA_STATUS_INTERNAL, "%d defines for kernel %s", define_count, kernel_name);
    if (mtx_lock(&ctx->lock) != thrd_success) return ifa__fail(IFA_STATUS_INTERNAL, "context lock failed");
    for (ifa__cached_kernel *e = ctx->programs; e; e = e->next) {
        if (entry_matches(e, sources, source_count, defines, define_count, kernel_name)) {
            mtx_unlock(&ctx->lock);
            *out = e;
            return IFA_STATUS_OK;
        }
    }
    /* Built under the context lock: a second thread asking for the same variant waits instead of building
     * it twice. */
    char options[2048];
    if (!format_options(ctx, defines, define_count, options, sizeof options)) {
        mtx_unlock(&ctx->lock);
        return ifa__fail(IFA_STATUS_INTERNAL, "build options of kernel %s longer than %zu bytes", kernel_name,
                         sizeof options);
    }
    ifa_status st = IFA_STATUS_OK;
    ifa__cached_kernel *e = calloc(1, sizeof *e);
    if (!e || (define_count > 0 && !(e->defines = malloc((size_t)define_count * sizeof *defines))) ||
        mtx_init(&e->lock, mtx_plain) != thrd_success) {
        if (e) free(e->defines);
        free(e);
        mtx_unlock(&ctx->lock);
        return ifa__fail(IFA_STATUS_OUT_OF_MEMORY, "program cache entry for %s", kernel_name);
    }
    if (define_count > 0) memcpy(e->defines, defines, (size_t)define_count * sizeof *defines);
    e->sources = sources, e->source_count = source_count, e->define_count = define_count;
    e->kernel_name = kernel_name;
    st = build(ctx, sources, source_count, options, kernel_name, e);
    if (st == IFA_STATUS_OK) {
        e->next = ctx->programs;
        ctx->programs = e;
        ctx->programs_built++;
        *out = e;
    } else {
        release_entry(e);
    }
    mtx_unlock(&ctx->lock);
    return st;
}

void ifa__program_cache_clear(ifa_context *ctx) {
    ifa__cached_kernel *e = ctx->programs;
    while (e) {
        ifa__cached_kernel *next = e->next;
        release_entry(e);
        e = next;
    }
    ctx->programs = NULL;
}
