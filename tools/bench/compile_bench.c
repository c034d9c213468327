/* compile_bench: source to PTX for every shipped kernel, per stage, in one
 * process (what `tlc --emit=ptx --kernel=K FILE` does, without the process
 * start): front end (lexer, parser, sema, Tile IR verifier), layout
 * inference + planning, lowering to Thread IR, then the PTX (tlc's own
 * generator, the default, or with --backend llvm LLVM IR + the NVPTX
 * backend at -O3), as the
 * pipeline itself times them (api/stage_times.h, what
 * `tlc --time-passes` prints). Median of --runs runs (default 7) in
 * milliseconds; each run is a fresh compilation. Run it on one core (`taskset -c 0`) to compare with
 * docs/benchmarks.md.
 *
 *   tlc-compile-bench [--runs N] [--arch sm_90a] [--backend direct|llvm] [DSL_DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/compile_backend.h"
#include "support/read_file.h"
#include "target/target.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct job {
    const char *file, *kernel;
    const char *define; /* NAME=VALUE or NULL */
} job;

static const job JOBS[] = {
    {"gemm.tl", "matmul", NULL},
    {"rmsnorm.tl", "rmsnorm", NULL},
    {"rmsnorm.tl", "rmsnorm_silu", NULL},
    {"mla_decode.tl", "mla_decode_schedule", NULL},
    {"mla_decode.tl", "mla_decode_split", "dtype=bfloat16"},
    {"mla_decode.tl", "mla_decode_combine", NULL},
    {"flash_attention.tl", "flash_attention", NULL},
    {"flash_attention.tl", "flash_attention_varlen", NULL},
};
enum { NSTAGES = 4 }; /* the stages of source -> PTX: TLC_TIMED_FRONT_END .. TLC_TIMED_CODEGEN */
static const char *const STAGES[NSTAGES] = {"front end", "layouts + plan", "Thread IR", "PTX"};
_Static_assert(TLC_TIMED_FRONT_END == 0 && TLC_TIMED_CODEGEN == NSTAGES - 1, "STAGES follows tlc_timed_stage");

int main(int argc, char **argv) {
    int runs = 7;
    tlc_backend backend = TLC_BACKEND_DIRECT; /* tlc's default */
    const char *dir = TLC_SOURCE_DIR "/dsl-examples", *arch_name = "sm_90a";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc) arch_name = argv[++i];
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc && !strcmp(argv[i + 1], "direct")) {
            backend = TLC_BACKEND_DIRECT;
            i++;
        } else if (!strcmp(argv[i], "--backend") && i + 1 < argc && !strcmp(argv[i + 1], "llvm")) {
            backend = TLC_BACKEND_LLVM;
            i++;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: tlc-compile-bench [--runs N] [--arch sm_90a] [--backend direct|llvm] [DSL_DIR]\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        } else dir = argv[i];
    }
    if (runs < 1 || runs > 1000) runs = 7;
    tlc_arch arch;
    if (!tlc_arch_parse(arch_name, &arch)) {
        fprintf(stderr, "compile_bench: unknown arch %s\n", arch_name);
        return 2;
    }
    printf("| file | kernel | %s | %s | %s | %s | total ms |\n| --- | --- | --- | --- | --- | --- | --- |\n",
           STAGES[0], STAGES[1], STAGES[2], STAGES[3]);
    int failures = 0;
    for (size_t j = 0; j < sizeof JOBS / sizeof JOBS[0]; j++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, JOBS[j].file);
        size_t len = 0;
        char *src = tlc_read_file(path, &len);
        if (!src) {
            fprintf(stderr, "compile_bench: cannot read %s\n", path);
            failures++;
            continue;
        }
        char name[64] = "", value[64] = "";
        tlc_define def;
        if (JOBS[j].define && sscanf(JOBS[j].define, "%63[^=]=%63s", name, value) == 2) def = (tlc_define){name, value};
        double *t = calloc((size_t)runs * (NSTAGES + 1), sizeof(double));
        bool ok = true;
        for (int r = 0; r < runs && ok; r++) {
            tlc_compile_options o;
            tlc_compile_options_default(&o);
            o.arch = arch;
            o.backend = backend;
            o.kernel = JOBS[j].kernel;
            if (JOBS[j].define) {
                o.defines = &def;
                o.ndefines = 1;
            }
            tlc_compilation c;
            ok = tlc_compile_source(&c, JOBS[j].file, src, len, &o) && tlc_compile_ptx(&c, false) != NULL;
            if (!ok) fprintf(stderr, "compile_bench: %s %s failed:\n%s", JOBS[j].file, JOBS[j].kernel,
                             tlc_sb_cstr(&c.diag.out));
            for (int s = 0; s < NSTAGES; s++) t[s * runs + r] = c.times.ms[s];
            t[NSTAGES * runs + r] = tlc_stage_times_total(&c.times);
            tlc_compilation_free(&c);
        }
        free(src);
        if (!ok) {
            failures++;
            free(t);
            continue;
        }
        printf("| %s | %s |", JOBS[j].file, JOBS[j].kernel);
        for (int s = 0; s <= NSTAGES; s++) printf(" %.1f |", median(t + s * runs, runs));
        printf("\n");
        free(t);
    }
    return failures ? 1 : 0;
}
