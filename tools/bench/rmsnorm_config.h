/* Launch configuration of dsl-examples/rmsnorm.tl for a rows x C input
 * (C a multiple of 32), shared by the GPU test (tests/gpu/test_rmsnorm.c)
 * and the benchmark (tools/bench/rmsnorm_bench.py, whose rule() is the same
 * function in Python). A rule, measured on an H100 (docs/benchmarks.md,
 * "The configuration rule"):
 *
 * - Up to 2048 columns a thread takes one 16-byte vector of a row (8
 *   elements) and a block the fewest rows (a power of two) that make whole
 *   warps, at least four: rows of 96 columns (12 vectors) go 16 to a
 *   192-thread block, rows of 1024 one to a 128-thread block. (Blocks of
 *   two and three warps were level or 1-2 points of the copy bandwidth
 *   slower at 302400 rows, 96 columns the most.)
 * - Wider rows go one to a block, over whole warps of at least
 *   16 * ceil(C / 8192) elements each: 16 up to 8192 columns, 32 up to
 *   16384, at most 512 threads above. With the launches overlapped
 *   (pdl_sync / pdl_trigger), more threads holding less of the row come
 *   out ahead where rows are few (4096 x 8192 with SiLU: 128 threads of 64
 *   94% of the copy bandwidth, 512 of 16 96%) and equal where they are
 *   many (16384 x 8192: 99-100%); 1024 threads at 16384 columns drop to 82%.
 *
 * The rule does not depend on the row count: at 1 and 7 rows the time is
 * launch latency, and configurations differ there by less than the spread
 * between runs. $TLC_RMSNORM_CONFIGS ("C:BLOCK_M:threads,...") overrides it
 * per C in the test and the benchmark (the benchmark's --sweep writes one). */
#ifndef TLC_BENCH_RMSNORM_CONFIG_H
#define TLC_BENCH_RMSNORM_CONFIG_H
#include <stdint.h>

typedef struct tlc_rmsnorm_config {
    int C, block_m, threads;
} tlc_rmsnorm_config;

static inline tlc_rmsnorm_config tlc_rmsnorm_config_for(int C) {
    tlc_rmsnorm_config c = {C, 1, 0};
    if (C <= 2048) {
        int vectors = C / 8 > 0 ? C / 8 : 1; /* per row */
        while (c.block_m < 64 && ((c.block_m * vectors) % 32 || c.block_m * vectors < 128)) c.block_m *= 2;
        c.threads = c.block_m * vectors;
        return c;
    }
    int per_thread = 16 * ((C + 8191) / 8192);
    c.threads = (C + per_thread - 1) / per_thread;
    c.threads = (c.threads + 31) / 32 * 32;
    return c;
}
#endif
