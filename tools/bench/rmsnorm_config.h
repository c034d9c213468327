/* Launch configuration of dsl-examples/rmsnorm.tl per row length C, shared
 * by the GPU test (tests/gpu/test_rmsnorm.c) and the benchmark
 * (tools/bench/rmsnorm_bench.py, which parses the lines marked
 * RMSNORM_CONFIG below: keep one entry per line, "{C, BLOCK_M, threads}").
 *
 * The table is what `rmsnorm_bench.py --sweep` picked on an H100 (least sum
 * of the rmsnorm and rmsnorm_silu times at 302400 rows, 16384 for C >= 4096;
 * docs/benchmarks.md). What it shows: a power-of-two thread count, 5..32
 * elements per thread, and few rows per block. Thread counts such as 160 or
 * 320 that do not split a block's rows evenly over whole warps make the
 * current layout inference replicate work across warps (4x slower at C=640).
 * The fallback rule below follows the same pattern. */
#ifndef TLC_BENCH_RMSNORM_CONFIG_H
#define TLC_BENCH_RMSNORM_CONFIG_H

typedef struct tlc_rmsnorm_config {
    int C, block_m, threads;
} tlc_rmsnorm_config;

static const tlc_rmsnorm_config TLC_RMSNORM_CONFIGS[] = {
    {96, 8, 128},     /* RMSNORM_CONFIG */
    {160, 4, 128},    /* RMSNORM_CONFIG */
    {192, 4, 128},    /* RMSNORM_CONFIG */
    {256, 4, 128},    /* RMSNORM_CONFIG */
    {320, 2, 128},    /* RMSNORM_CONFIG */
    {384, 2, 128},    /* RMSNORM_CONFIG */
    {512, 1, 64},     /* RMSNORM_CONFIG */
    {640, 2, 64},     /* RMSNORM_CONFIG */
    {1024, 1, 128},   /* RMSNORM_CONFIG */
    {4096, 1, 256},   /* RMSNORM_CONFIG */
    {8192, 1, 256},   /* RMSNORM_CONFIG */
};

/* The table's entry for C, else: 128 threads (256 for C >= 2048), and rows
 * per block doubled while a thread has under 8 elements. */
static inline tlc_rmsnorm_config tlc_rmsnorm_config_for(int C) {
    for (unsigned i = 0; i < sizeof TLC_RMSNORM_CONFIGS / sizeof TLC_RMSNORM_CONFIGS[0]; i++)
        if (TLC_RMSNORM_CONFIGS[i].C == C) return TLC_RMSNORM_CONFIGS[i];
    tlc_rmsnorm_config c = {C, 1, C >= 2048 ? 256 : 128};
    while (c.block_m < 64 && c.block_m * C < 8 * c.threads) c.block_m *= 2;
    return c;
}
#endif
