/* Launch configuration of dsl-examples/rmsnorm.tl per row length C, shared
 * by the GPU test (tests/gpu/test_rmsnorm.c) and the benchmark
 * (tools/bench/rmsnorm_bench.py, which parses the lines marked
 * RMSNORM_CONFIG below: keep one entry per line, "{C, BLOCK_M, threads}").
 *
 * Rule of thumb behind the table: about 16 elements (two 16-byte vectors of
 * a 2-byte dtype) per thread, so x and x^2 take ~32 registers and a full SM
 * still keeps ~64 KB of loads in flight; several rows per block when rows are
 * short so that blocks are not tiny. The benchmark can sweep alternatives
 * (--sweep) and prints the winner per C. */
#ifndef TLC_BENCH_RMSNORM_CONFIG_H
#define TLC_BENCH_RMSNORM_CONFIG_H

typedef struct tlc_rmsnorm_config {
    int C, block_m, threads;
} tlc_rmsnorm_config;

static const tlc_rmsnorm_config TLC_RMSNORM_CONFIGS[] = {
    {96, 32, 192},   /* RMSNORM_CONFIG */
    {160, 16, 160},  /* RMSNORM_CONFIG */
    {192, 16, 192},  /* RMSNORM_CONFIG */
    {256, 8, 128},   /* RMSNORM_CONFIG */
    {320, 16, 320},  /* RMSNORM_CONFIG */
    {384, 8, 192},   /* RMSNORM_CONFIG */
    {512, 4, 128},   /* RMSNORM_CONFIG */
    {640, 4, 160},   /* RMSNORM_CONFIG */
    {1024, 2, 128},  /* RMSNORM_CONFIG */
    {4096, 1, 256},  /* RMSNORM_CONFIG */
    {8192, 1, 512},  /* RMSNORM_CONFIG */
};

/* The table's entry for C, else the same rule: ~16 elements per thread. */
static inline tlc_rmsnorm_config tlc_rmsnorm_config_for(int C) {
    for (unsigned i = 0; i < sizeof TLC_RMSNORM_CONFIGS / sizeof TLC_RMSNORM_CONFIGS[0]; i++)
        if (TLC_RMSNORM_CONFIGS[i].C == C) return TLC_RMSNORM_CONFIGS[i];
    tlc_rmsnorm_config c = {C, 1, 128};
    if (C >= 2048) {
        c.threads = C / 16 > 1024 ? 1024 : C / 16;
    } else {
        while (c.block_m * C < 16 * 128) c.block_m *= 2;
    }
    return c;
}
#endif
