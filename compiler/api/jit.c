/* The JIT (include/tlc/tlc.h): DSL source + defines -> PTX for one arch,
 * through the on-disk cache of jit_cache.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tlc/tlc.h"
#include "compile_backend.h"
#include "jit_cache.h"

#ifndef TLC_VERSION
#define TLC_VERSION "unknown"
#endif
#include "tlc_build_id.h" /* TLC_BUILD_ID, generated (cmake/build_id.cmake) */

/* What compiled code in the cache must come from: this version and this
 * build (its commit and uncommitted changes), so that a cache filled by
 * another build of tlc, whose code generation may differ, misses. */
static const char COMPILER_ID[] = TLC_VERSION "+" TLC_BUILD_ID;

enum { CACHE_DIR_MAX = 4096, ERR_MAX = 512 };

struct tlc_jit {
    tlc_arch arch;
    char arch_name[16];
    int opt_level;       /* 0..3 */
    int backend;         /* tlc_backend: from the options, else $TLC_BACKEND, else TLC_DEFAULT_BACKEND */
    char opt_key[32];    /* "O3", "direct/sms132": the level's and SM count's part of the cache key */
    int num_sms;         /* driver.get_num_sms(): the options', else the GPU's when the arch is, else 0 (the target's) */
    bool use_cache;
    char cache_dir[CACHE_DIR_MAX];
    /* The only state that changes after creation. */
    _Atomic uint64_t hits, misses, corrupt, compile_errors, store_errors;
    _Atomic uint64_t machine_hits, machine_misses;
};

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r) memcpy(r, s, n + 1);
    return r;
}

/* Sets *err (if wanted) to a malloc'd formatted message; returns st. */
static tlc_status fail(char **err, tlc_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tlc_status fail(char **err, tlc_status st, const char *fmt, ...) {
    if (!err) return st;
    char buf[ERR_MAX + CACHE_DIR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    *err = dup_str(buf);
    return st;
}

const char *tlc_status_string(tlc_status s) {
    switch (s) {
    case TLC_OK: return "TLC_OK";
    case TLC_ERROR_INVALID_ARGUMENT: return "TLC_ERROR_INVALID_ARGUMENT";
    case TLC_ERROR_OUT_OF_MEMORY: return "TLC_ERROR_OUT_OF_MEMORY";
    case TLC_ERROR_COMPILE: return "TLC_ERROR_COMPILE";
    case TLC_ERROR_IO: return "TLC_ERROR_IO";
    case TLC_ERROR_NO_DEVICE: return "TLC_ERROR_NO_DEVICE";
    case TLC_ERROR_RUNTIME: return "TLC_ERROR_RUNTIME";
    }
    return "TLC_ERROR_?";
}

const char *tlc_version(void) { return TLC_VERSION; }

void tlc_free(void *p) { free(p); }

/* The arch of a device: tlrt says "sm_90a", "sm_86", ...; GPUs newer than
 * tlc's targets get sm_90 PTX, which the driver compiles forward. Its SM
 * count too (*num_sms; 0 when the driver does not say). */
static tlc_status device_arch(tlrt_context *given, tlc_arch *out, int *num_sms, char **err) {
    tlrt_context *ctx = given;
    if (!ctx) {
        tlrt_status st = tlrt_init(&ctx, -1);
        if (st != TLRT_SUCCESS) {
            tlc_status r = fail(err, TLC_ERROR_NO_DEVICE, "tlc_jit: no arch given and no GPU to ask: %s",
                                ctx ? tlrt_last_error(ctx) : tlrt_status_string(st));
            tlrt_destroy(ctx);
            return r;
        }
    }
    char name[32];
    tlrt_status st = tlrt_device_arch(ctx, name, sizeof name);
    tlc_status r = TLC_OK;
    if (st != TLRT_SUCCESS) {
        r = fail(err, TLC_ERROR_NO_DEVICE, "tlc_jit: no arch given and no GPU to ask: %s", tlrt_last_error(ctx));
    } else if (!tlc_arch_for_device(name, out)) {
        char names[128];
        tlc_arch_names(names, sizeof names, ", ");
        r = fail(err, TLC_ERROR_NO_DEVICE, "tlc_jit: the GPU's arch %s is not one tlc targets (%s)", name, names);
    } else {
        tlrt_device_props pr;
        *num_sms = tlrt_device_properties(ctx, &pr) == TLRT_SUCCESS && pr.sm_count > 0 ? pr.sm_count : 0;
    }
    if (!given) tlrt_destroy(ctx);
    return r;
}

tlc_status tlc_jit_create(const tlc_jit_options *opt, tlc_jit **out, char **err) {
    if (err) *err = NULL;
    if (!out) return fail(err, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_create: out is NULL");
    *out = NULL;
    tlc_jit_options o = {0};
    if (opt) o = *opt;
    tlc_jit *j = calloc(1, sizeof *j);
    if (!j) return fail(err, TLC_ERROR_OUT_OF_MEMORY, "tlc_jit_create: out of memory");
    tlc_status st = TLC_OK;
    /* an enum may be unsigned: compare as int */
    if ((int)o.opt_level < (int)TLC_OPT_DEFAULT || (int)o.opt_level > (int)TLC_OPT_O3) {
        st = fail(err, TLC_ERROR_INVALID_ARGUMENT,
                  "tlc_jit_create: unknown opt_level %d (expected TLC_OPT_DEFAULT or TLC_OPT_O0 .. TLC_OPT_O3)",
                  (int)o.opt_level);
    } else if (o.arch) {
        if (!tlc_arch_parse(o.arch, &j->arch)) {
            char names[128];
            tlc_arch_names(names, sizeof names, ", ");
            st = fail(err, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_create: unknown arch '%s' (%s)", o.arch, names);
        }
    } else {
        st = device_arch(o.ctx, &j->arch, &j->num_sms, err);
    }
    if (st == TLC_OK && o.num_sms < 0)
        st = fail(err, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_create: num_sms %d is negative", o.num_sms);
    if (o.num_sms > 0) j->num_sms = o.num_sms;
    if (st == TLC_OK) {
        snprintf(j->arch_name, sizeof j->arch_name, "%s", tlc_arch_name(j->arch));
        j->opt_level = o.opt_level == TLC_OPT_DEFAULT ? 3 : (int)o.opt_level - (int)TLC_OPT_O0;
        /* tlc's own generator ignores the level: one cache entry serves them all */
        const char *be = o.backend ? o.backend : getenv("TLC_BACKEND");
        if (!be || !*be) j->backend = TLC_DEFAULT_BACKEND;
        else if (strcmp(be, "direct") == 0) j->backend = TLC_BACKEND_DIRECT;
        else if (strcmp(be, "llvm") == 0) j->backend = TLC_BACKEND_LLVM;
        else st = fail(err, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_create: unknown backend '%.64s'%s (expected direct or llvm)",
                       be, o.backend ? "" : " in $TLC_BACKEND");
        /* the SM count is a constant of the compile (driver.get_num_sms()) */
        if (j->backend == TLC_BACKEND_DIRECT) snprintf(j->opt_key, sizeof j->opt_key, "direct");
        else snprintf(j->opt_key, sizeof j->opt_key, "O%d", j->opt_level);
        if (j->num_sms > 0) {
            size_t used = strlen(j->opt_key);
            snprintf(j->opt_key + used, sizeof j->opt_key - used, "/sms%d", j->num_sms);
        }
        j->use_cache = !o.disable_cache;
        if (st == TLC_OK && j->use_cache) {
            char e[ERR_MAX] = "";
            if (o.cache_dir) {
                if (!*o.cache_dir || strlen(o.cache_dir) >= sizeof j->cache_dir - 80)
                    st = fail(err, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_create: cache dir is empty or too long");
                else snprintf(j->cache_dir, sizeof j->cache_dir, "%s", o.cache_dir);
            } else if (!tlc_jit_cache_default_dir(j->cache_dir, sizeof j->cache_dir - 80, e, sizeof e)) {
                st = fail(err, TLC_ERROR_IO, "tlc_jit_create: %s", e);
            }
        }
    }
    if (st != TLC_OK) {
        free(j);
        return st;
    }
    *out = j;
    return TLC_OK;
}

void tlc_jit_destroy(tlc_jit *jit) { free(jit); }

const char *tlc_jit_arch(const tlc_jit *jit) { return jit ? jit->arch_name : ""; }

const char *tlc_jit_cache_dir(const tlc_jit *jit) { return jit && jit->use_cache ? jit->cache_dir : ""; }

const char *tlc_jit_backend(const tlc_jit *jit) {
    if (!jit) return "";
    return jit->backend == TLC_BACKEND_LLVM ? "llvm" : "direct";
}

void tlc_jit_get_stats(const tlc_jit *jit, tlc_jit_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!jit) return;
    tlc_jit *j = (tlc_jit *)jit; /* atomic loads take non-const pointers in C11 */
    out->hits = atomic_load(&j->hits);
    out->misses = atomic_load(&j->misses);
    out->corrupt = atomic_load(&j->corrupt);
    out->compile_errors = atomic_load(&j->compile_errors);
    out->store_errors = atomic_load(&j->store_errors);
    out->machine_code_hits = atomic_load(&j->machine_hits);
    out->machine_code_misses = atomic_load(&j->machine_misses);
}

tlc_status tlc_jit_compile(tlc_jit *jit, const char *source, size_t len, const char *source_name,
                           const tlc_jit_define *defines, int ndefines, const char *kernel, char **ptx,
                           char **errtext) {
    if (errtext) *errtext = NULL;
    if (ptx) *ptx = NULL;
    if (!jit || !ptx || (!source && len) || ndefines < 0 || (ndefines && !defines))
        return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_compile: invalid arguments");
    for (int i = 0; i < ndefines; i++)
        if (!defines[i].name || !defines[i].value || !*defines[i].name)
            return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_compile: define %d has no name or value", i);
    if (!source) source = "";
    if (!source_name) source_name = "<source>";

    /* The public define type mirrors the compiler's; copy rather than cast. */
    tlc_define *defs = NULL;
    if (ndefines) {
        defs = malloc((size_t)ndefines * sizeof *defs);
        if (!defs) return fail(errtext, TLC_ERROR_OUT_OF_MEMORY, "tlc_jit_compile: out of memory");
        for (int i = 0; i < ndefines; i++) defs[i] = (tlc_define){defines[i].name, defines[i].value};
    }

    tlc_jit_key key;
    if (jit->use_cache) {
        tlc_jit_key_input in = {.source = source, .source_len = len, .defines = defs, .ndefines = ndefines,
                                .kernel = kernel, .arch = jit->arch_name, .compiler_version = COMPILER_ID,
                                .options = jit->opt_key};
        tlc_jit_key_compute(&in, &key);
        char e[ERR_MAX];
        size_t plen = 0;
        char *payload = NULL;
        tlc_jit_cache_result r = tlc_jit_cache_lookup(jit->cache_dir, &key, &payload, &plen, e, sizeof e);
        if (r == TLC_JIT_CACHE_HIT) {
            atomic_fetch_add(&jit->hits, 1);
            free(defs);
            *ptx = payload;
            return TLC_OK;
        }
        free(payload);
        if (r == TLC_JIT_CACHE_CORRUPT) atomic_fetch_add(&jit->corrupt, 1);
    }

    atomic_fetch_add(&jit->misses, 1);
    char *err = NULL;
    tlc_compile_options co;
    tlc_compile_options_default(&co);
    co.arch = jit->arch;
    co.backend = jit->backend;
    co.defines = defs;
    co.ndefines = ndefines;
    co.kernel = kernel;
    co.opt_level = jit->opt_level;
    co.num_sms = jit->num_sms;
    char *out = tlc_compile_to_ptx_with(source_name, source, len, &co, &err);
    free(defs);
    if (!out) {
        atomic_fetch_add(&jit->compile_errors, 1);
        if (errtext) *errtext = err ? err : dup_str("tlc_jit_compile: compilation failed");
        else free(err);
        return TLC_ERROR_COMPILE;
    }
    free(err);
    if (jit->use_cache) {
        char e[ERR_MAX];
        if (!tlc_jit_cache_store(jit->cache_dir, &key, out, strlen(out), e, sizeof e))
            atomic_fetch_add(&jit->store_errors, 1);
    }
    *ptx = out;
    return TLC_OK;
}

/* Whole file into a malloc'd buffer. */
static tlc_status read_file(const char *path, char **text, size_t *len, char **err) {
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, TLC_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 14, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *bigger = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf) return fail(err, TLC_ERROR_OUT_OF_MEMORY, "%s: too large or out of memory", path);
    if (bad) {
        free(buf);
        return fail(err, TLC_ERROR_IO, "%s: read error", path);
    }
    *text = buf;
    *len = n;
    return TLC_OK;
}

tlc_status tlc_jit_compile_file(tlc_jit *jit, const char *path, const tlc_jit_define *defines, int ndefines,
                                const char *kernel, char **ptx, char **errtext) {
    if (errtext) *errtext = NULL;
    if (ptx) *ptx = NULL;
    if (!path) return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_compile_file: path is NULL");
    char *text = NULL;
    size_t len = 0;
    tlc_status st = read_file(path, &text, &len, errtext);
    if (st != TLC_OK) return st;
    st = tlc_jit_compile(jit, text, len, path, defines, ndefines, kernel, ptx, errtext);
    free(text);
    return st;
}

/* What the cache keeps, in place of machine code, for PTX whose linked
 * machine code is worse than its own load's (not an ELF image). */
static const char PTX_ONLY_MARKER[] = "tlc: load this PTX, not the linker's machine code\n";

/* Machine code from the toolkit's ptxas (not relocatable, as the PTX's own
 * load compiles it) for the context's device, loaded; NULL when there is no
 * ptxas, it fails, or the code needs more local memory than `own_local`.
 * *image: the cubin (malloc'd) on success. */
static tlrt_module *ptxas_module(tlrt_context *ctx, const char *ptx, size_t len, int own_local, void **image,
                                 size_t *image_len) {
    char name[32];
    tlc_arch arch;
    *image = NULL;
    if (!tlc_ptxas_available() || tlrt_device_arch(ctx, name, sizeof name) != TLRT_SUCCESS ||
        !tlc_arch_for_device(name, &arch))
        return NULL;
    tlc_arena a;
    tlc_arena_init(&a);
    tlc_diag d;
    tlc_diag_init(&d, NULL);
    size_t n = 0;
    unsigned char *cubin = tlc_ptxas_assemble(ptx, arch, &n, &a, &d);
    tlrt_module *m = NULL;
    int local = 0;
    if (cubin && tlrt_module_load_cubin(ctx, cubin, n, ptx, len, &m) == TLRT_SUCCESS &&
        (tlrt_module_local_bytes(m, &local) != TLRT_SUCCESS || local > own_local)) {
        tlrt_module_unload(ctx, m);
        m = NULL;
    }
    if (m && (*image = malloc(n ? n : 1))) {
        memcpy(*image, cubin, n);
        *image_len = n;
    } else if (m) {
        tlrt_module_unload(ctx, m);
        m = NULL;
    }
    tlc_diag_free(&d);
    tlc_arena_free(&a);
    return m;
}

/* The driver's linker compiles PTX as relocatable code, where a
 * warp-specialized kernel whose consumers raise their register count
 * (setmaxnreg) can spill what the PTX's own load keeps in registers (a
 * 128 x 128 gemm with two blocks per SM: 1104 bytes of stack, 18x slower).
 * `linked`: the linker's module, *image / *n its machine code. Returns the
 * module to use: `linked` when it needs no more local memory than the
 * PTX's own load; else the toolkit's ptxas build (*image its cubin), or
 * the PTX loaded (*image NULL: the cache keeps the marker). */
static tlrt_module *best_module(tlrt_context *ctx, tlrt_module *linked, void **image, size_t *n, const char *ptx,
                                size_t len) {
    int linked_local = 0, own = 0;
    if (tlrt_module_local_bytes(linked, &linked_local) != TLRT_SUCCESS || linked_local == 0) return linked;
    tlrt_module *p = NULL;
    if (tlrt_module_load_ptx(ctx, ptx, len, &p) != TLRT_SUCCESS) return linked;
    if (tlrt_module_local_bytes(p, &own) != TLRT_SUCCESS || own >= linked_local) {
        tlrt_module_unload(ctx, p);
        return linked;
    }
    tlrt_module_unload(ctx, linked);
    free(*image);
    *image = NULL;
    tlrt_module *q = ptxas_module(ctx, ptx, len, own, image, n);
    if (!q) return p;
    tlrt_module_unload(ctx, p);
    return q;
}

/* The module of this PTX from the machine code the cache keeps for the
 * context's device and driver; on a miss the driver's linker makes it and
 * it is stored (or, where it spills more than the PTX's own load, the
 * toolkit's ptxas makes it where installed, else a marker sends later
 * loads to the PTX). NULL (no message) when that fails in
 * any way or the marker is found: the caller loads the PTX, which compiles
 * it again. */
static tlrt_module *load_machine_code(tlc_jit *jit, tlrt_context *ctx, const char *ptx) {
    size_t ptx_len = strlen(ptx);
    tlrt_device_props pr;
    if (tlrt_device_properties(ctx, &pr) != TLRT_SUCCESS) return NULL;
    char device[400], arch[16];
    snprintf(arch, sizeof arch, "sm_%d", pr.sm);
    snprintf(device, sizeof device, "machine code; driver %d; %s", pr.driver_version, pr.name);
    tlc_jit_key_input in = {.source = ptx, .source_len = ptx_len, .arch = arch, .compiler_version = COMPILER_ID,
                            .options = device};
    tlc_jit_key key;
    tlc_jit_key_compute(&in, &key);
    char e[ERR_MAX];
    char *image = NULL;
    size_t n = 0;
    tlrt_module *m = NULL;
    tlc_jit_cache_result r = tlc_jit_cache_lookup(jit->cache_dir, &key, &image, &n, e, sizeof e);
    if (r == TLC_JIT_CACHE_HIT) {
        if (n == sizeof PTX_ONLY_MARKER - 1 && memcmp(image, PTX_ONLY_MARKER, n) == 0) {
            free(image);
            return NULL;
        }
        if (tlrt_module_load_cubin(ctx, image, n, ptx, ptx_len, &m) == TLRT_SUCCESS) {
            atomic_fetch_add(&jit->machine_hits, 1);
            free(image);
            return m;
        }
        m = NULL; /* an entry the driver refuses: made again below */
    } else if (r == TLC_JIT_CACHE_CORRUPT) {
        atomic_fetch_add(&jit->corrupt, 1);
    }
    free(image);
    image = NULL;
    atomic_fetch_add(&jit->machine_misses, 1);
    if (tlrt_compile_ptx(ctx, ptx, ptx_len, (void **)&image, &n) != TLRT_SUCCESS) return NULL;
    if (tlrt_module_load_cubin(ctx, image, n, ptx, ptx_len, &m) != TLRT_SUCCESS) {
        free(image);
        return NULL;
    }
    m = best_module(ctx, m, (void **)&image, &n, ptx, ptx_len);
    const void *keep = image ? (const void *)image : PTX_ONLY_MARKER;
    size_t keep_len = image ? n : sizeof PTX_ONLY_MARKER - 1;
    if (!tlc_jit_cache_store(jit->cache_dir, &key, keep, keep_len, e, sizeof e)) atomic_fetch_add(&jit->store_errors, 1);
    free(image);
    return m;
}

/* Compiles only `name` (a kernel, or a function of several kernels) and
 * loads its module. */
static tlc_status load_module(tlc_jit *jit, tlrt_context *ctx, const char *source, size_t len, const char *source_name,
                              const tlc_jit_define *defines, int ndefines, const char *name, tlrt_module **out,
                              char **errtext) {
    char *ptx = NULL;
    tlc_status st = tlc_jit_compile(jit, source, len, source_name, defines, ndefines, name, &ptx, errtext);
    if (st != TLC_OK) return st;
    tlrt_module *m = jit->use_cache ? load_machine_code(jit, ctx, ptx) : NULL;
    tlrt_status rs = m ? TLRT_SUCCESS : tlrt_module_load_ptx(ctx, ptx, strlen(ptx), &m);
    free(ptx);
    if (rs != TLRT_SUCCESS) return fail(errtext, TLC_ERROR_RUNTIME, "loading the PTX of %s: %s", name, tlrt_last_error(ctx));
    *out = m;
    return TLC_OK;
}

/* tlc_jit_load_kernel and tlc_jit_load_function: `name` compiled alone,
 * loaded, and looked up as a kernel (kout) or as a function of several
 * kernels (fout; the other is NULL). */
static tlc_status load_entry(tlc_jit *jit, tlrt_context *ctx, const char *source, size_t len, const char *source_name,
                             const tlc_jit_define *defines, int ndefines, const char *name, bool function,
                             tlrt_module **module, tlrt_kernel **kout, tlrt_function **fout, char **errtext) {
    const char *what = function ? "function" : "kernel";
    if (errtext) *errtext = NULL;
    if (module) *module = NULL;
    if (kout) *kout = NULL;
    if (fout) *fout = NULL;
    if (!ctx || !name || !module || (function ? !fout : !kout))
        return fail(errtext, TLC_ERROR_INVALID_ARGUMENT, "tlc_jit_load_%s: ctx, %s, module and out are required", what,
                    what);
    tlrt_module *m = NULL;
    tlc_status st = load_module(jit, ctx, source, len, source_name, defines, ndefines, name, &m, errtext);
    if (st != TLC_OK) return st;
    tlrt_status rs = function ? tlrt_function_get(m, name, fout) : tlrt_kernel_get(m, name, kout);
    if (rs != TLRT_SUCCESS) {
        st = fail(errtext, TLC_ERROR_RUNTIME, "%s %s: %s", what, name, tlrt_last_error(ctx));
        tlrt_module_unload(ctx, m);
        return st;
    }
    *module = m;
    return TLC_OK;
}

tlc_status tlc_jit_load_kernel(tlc_jit *jit, tlrt_context *ctx, const char *source, size_t len,
                               const char *source_name, const tlc_jit_define *defines, int ndefines,
                               const char *kernel, tlrt_module **module, tlrt_kernel **out, char **errtext) {
    return load_entry(jit, ctx, source, len, source_name, defines, ndefines, kernel, false, module, out, NULL, errtext);
}

tlc_status tlc_jit_load_function(tlc_jit *jit, tlrt_context *ctx, const char *source, size_t len,
                                 const char *source_name, const tlc_jit_define *defines, int ndefines,
                                 const char *function, tlrt_module **module, tlrt_function **out, char **errtext) {
    return load_entry(jit, ctx, source, len, source_name, defines, ndefines, function, true, module, NULL, out,
                      errtext);
}
