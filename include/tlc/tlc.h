/* libtlc's public API: the JIT. Compile tlc DSL source (with -D style
 * parameters) to PTX for one GPU arch, through an on-disk cache, and load
 * the result with libtlrt (runtime.h).
 *
 *   tlc_jit *jit;  char *err = NULL;
 *   if (tlc_jit_create(NULL, &jit, &err) != TLC_OK) { puts(err); ... }
 *   tlc_jit_define d[] = {{"C", "4096"}, {"BLOCK_M", "1"}};
 *   tlrt_module *mod; tlrt_kernel *k;
 *   tlc_jit_load_kernel(jit, ctx, src, len, "rmsnorm.tl", d, 2, "rmsnorm", &mod, &k, &err);
 *   ... tlrt_launch(k, args, 3, NULL) ...
 *   tlrt_module_unload(ctx, mod); tlc_jit_destroy(jit);
 *
 * Cache: key = SHA-256 of (source, defines sorted by name, kernel filter,
 * arch, optimization level, tlc version); entries under the cache dir are written atomically and
 * verified on read (a truncated or corrupted entry is recompiled, never
 * used). A hit never runs the compiler. Any number of tlc_jit objects, in
 * any number of threads and processes, may share one cache dir.
 *
 * Thread safety: a tlc_jit is immutable after creation except for its
 * statistics counters (atomic), so one object may be used from many threads
 * at once. No global state.
 *
 * Memory: every char* this API hands out (PTX, error text) is malloc'd;
 * release it with tlc_free (or free). */
#ifndef TLC_TLC_H
#define TLC_TLC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TLC_OK = 0,
    TLC_ERROR_INVALID_ARGUMENT, /* NULL where something is needed, a bad arch string, ... */
    TLC_ERROR_OUT_OF_MEMORY,
    TLC_ERROR_COMPILE,          /* the source did not compile: the error text has file:line:col diagnostics */
    TLC_ERROR_IO,               /* a file could not be read, or no cache dir could be determined */
    TLC_ERROR_NO_DEVICE,        /* arch not given and no GPU to ask (no driver, no device) */
    TLC_ERROR_RUNTIME,          /* libtlrt refused (module load, kernel lookup): its message is the error text */
} tlc_status;

TLC_API const char *tlc_status_string(tlc_status s); /* "TLC_ERROR_COMPILE" */
TLC_API const char *tlc_version(void);               /* "0.1.0" */
TLC_API void tlc_free(void *p);

/* A compile-time parameter, as `-D NAME=VALUE` on the command line:
 * {"C", "4096"}, {"dtype", "bfloat16"}, {"eps", "1e-6"}. */
typedef struct tlc_jit_define {
    const char *name;
    const char *value;
} tlc_jit_define;

/* LLVM's optimization level (backend "llvm"), as tlc's -O0 .. -O3.
 * TLC_OPT_DEFAULT, what a zero-initialized tlc_jit_options holds, is -O3. */
typedef enum tlc_opt_level {
    TLC_OPT_DEFAULT = 0,
    TLC_OPT_O0,
    TLC_OPT_O1,
    TLC_OPT_O2,
    TLC_OPT_O3,
} tlc_opt_level;

typedef struct tlc_jit_options {
    const char *cache_dir; /* NULL: $TLC_CACHE_DIR, else ~/.cache/tlc (created when first stored to) */
    const char *arch;      /* "sm_80" .. "sm_90a"; NULL: the GPU's (of ctx, or of device 0) */
    tlrt_context *ctx;     /* only read to find the arch when arch is NULL; may be NULL */
    bool disable_cache;    /* always compile, never read or write the cache */
    tlc_opt_level opt_level; /* part of the cache key (LLVM's only: tlc's own generator has no levels) */
    /* who writes the PTX: "direct" (tlc's own generator) or "llvm" (LLVM's
     * NVPTX backend at opt_level); NULL: $TLC_BACKEND if set, else "direct".
     * Part of the cache key. */
    const char *backend;
    /* the SM count a kernel asking for it (TileLang's driver.get_num_sms())
     * is compiled with; 0: the GPU's when the arch is found from the GPU
     * (arch NULL), else the target's data-center part (132 for sm_90a).
     * Part of the cache key. */
    int num_sms;
} tlc_jit_options;

typedef struct tlc_jit tlc_jit;

/* opt may be NULL (all defaults). On failure *out is NULL and *err (if err is
 * not NULL) gets the reason. */
TLC_API tlc_status tlc_jit_create(const tlc_jit_options *opt, tlc_jit **out, char **err);
TLC_API void tlc_jit_destroy(tlc_jit *jit);
TLC_API const char *tlc_jit_arch(const tlc_jit *jit);      /* canonical: "sm_90a" */
TLC_API const char *tlc_jit_cache_dir(const tlc_jit *jit); /* "" when the cache is disabled */
/* Who writes this JIT's PTX, as the options, $TLC_BACKEND or the default
 * decided: "direct" (tlc's own generator) or "llvm". */
TLC_API const char *tlc_jit_backend(const tlc_jit *jit);

typedef struct tlc_jit_stats {
    uint64_t hits;           /* compiles answered from the cache */
    uint64_t misses;         /* compiles that ran the compiler (corrupt entries included) */
    uint64_t corrupt;        /* cache entries that failed verification (removed, recompiled) */
    uint64_t compile_errors; /* sources that did not compile */
    uint64_t store_errors;   /* results that could not be written to the cache (still returned) */
    /* tlc_jit_load_kernel: modules loaded from the machine code the cache
     * keeps for the device and driver (no PTX compiled), and loads that had
     * the driver make it (then kept) */
    uint64_t machine_code_hits;
    uint64_t machine_code_misses;
} tlc_jit_stats;
TLC_API void tlc_jit_get_stats(const tlc_jit *jit, tlc_jit_stats *out);

/* DSL source -> PTX (with its `// tlc.meta` launch metadata block), NUL
 * terminated, in *ptx. kernel: compile only that kernel (NULL: all).
 * source_name is used in diagnostics (NULL: "<source>"). On
 * TLC_ERROR_COMPILE, *errtext holds the compiler's diagnostics
 * ("rmsnorm.tl:12:5: error: ..."); on any other failure a one-line reason.
 * errtext may be NULL. Cache I/O trouble never fails a compile. */
TLC_API tlc_status tlc_jit_compile(tlc_jit *jit, const char *source, size_t len, const char *source_name,
                           const tlc_jit_define *defines, int ndefines, const char *kernel, char **ptx,
                           char **errtext);

/* Same, reading the source from a file (source_name = path). */
TLC_API tlc_status tlc_jit_compile_file(tlc_jit *jit, const char *path, const tlc_jit_define *defines, int ndefines,
                                const char *kernel, char **ptx, char **errtext);

/* Compiles (through the cache) only `kernel`, loads the PTX into ctx and
 * looks the kernel up. *module is the caller's (tlrt_module_unload); *out
 * lives as long as it. */
TLC_API tlc_status tlc_jit_load_kernel(tlc_jit *jit, tlrt_context *ctx, const char *source, size_t len,
                               const char *source_name, const tlc_jit_define *defines, int ndefines,
                               const char *kernel, tlrt_module **module, tlrt_kernel **out, char **errtext);

/* The same for a function with several `with Kernel` blocks (its kernels
 * NAME_k0, NAME_k1, ... launched in order by one tlrt_launch_function call,
 * its workspaces allocated by the runtime): compiles only that function,
 * loads it into ctx and looks it up. *module is the caller's; *out lives as
 * long as it. */
TLC_API tlc_status tlc_jit_load_function(tlc_jit *jit, tlrt_context *ctx, const char *source, size_t len,
                                         const char *source_name, const tlc_jit_define *defines, int ndefines,
                                         const char *function, tlrt_module **module, tlrt_function **out,
                                         char **errtext);

#ifdef __cplusplus
}
#endif
#endif
