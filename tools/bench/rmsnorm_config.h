/* Launch configuration of dsl-examples/rmsnorm.tl for a rows x C input,
 * shared by the GPU test (tests/gpu/test_rmsnorm.c) and the benchmark
 * (tools/bench/rmsnorm_bench.py, which parses the lines marked
 * RMSNORM_CONFIG, RMSNORM_SMALL_CONFIG and RMSNORM_SMALL_BLOCKS below and
 * applies the same rule as tlc_rmsnorm_config_rows: keep one entry per
 * line, "{C, BLOCK_M, threads}").
 *
 * Many rows (TLC_RMSNORM_CONFIGS): what `rmsnorm_bench.py --sweep` picked
 * on an H100 (least sum of the rmsnorm and rmsnorm_silu times at 302400
 * rows, 16384 for C >= 4096; docs/benchmarks.md): 6..32 (mostly 8) elements per
 * thread, and thread counts of 3, 5 or 6 warps where they split a block's
 * rows evenly (a row of 160 halves is 20 vectors: 4 lanes x 5 warps).
 *
 * Few rows (TLC_RMSNORM_SMALL_CONFIGS, used below TLC_RMSNORM_SMALL_BLOCKS
 * blocks of the many-rows BLOCK_M, when the launch cannot fill an H100's
 * 132 SMs and the time is latency, 4.4..6 us): the same sweep's pick at 1
 * and 7 rows among one row per block with 32..256 threads and the
 * many-rows config. At these sizes the configs differ by less than the
 * spread between runs (+-0.5 us); one warp per row (no barrier at all) was
 * not faster than blocks of several warps. */
#ifndef TLC_BENCH_RMSNORM_CONFIG_H
#define TLC_BENCH_RMSNORM_CONFIG_H
#include <stdint.h>

typedef struct tlc_rmsnorm_config {
    int C, block_m, threads;
} tlc_rmsnorm_config;

static const tlc_rmsnorm_config TLC_RMSNORM_CONFIGS[] = {
    {96, 8, 128},     /* RMSNORM_CONFIG */
    {160, 8, 160},    /* RMSNORM_CONFIG */
    {192, 4, 96},     /* RMSNORM_CONFIG */
    {256, 4, 64},     /* RMSNORM_CONFIG */
    {320, 4, 160},    /* RMSNORM_CONFIG */
    {384, 4, 192},    /* RMSNORM_CONFIG */
    {512, 4, 256},    /* RMSNORM_CONFIG */
    {640, 2, 160},    /* RMSNORM_CONFIG */
    {1024, 2, 256},   /* RMSNORM_CONFIG */
    {4096, 2, 512},   /* RMSNORM_CONFIG */
    {8192, 2, 512},   /* RMSNORM_CONFIG */
};

#define TLC_RMSNORM_SMALL_BLOCKS 132 /* RMSNORM_SMALL_BLOCKS */

static const tlc_rmsnorm_config TLC_RMSNORM_SMALL_CONFIGS[] = {
    {96, 8, 128},     /* RMSNORM_SMALL_CONFIG */
    {160, 16, 160},   /* RMSNORM_SMALL_CONFIG */
    {192, 8, 96},     /* RMSNORM_SMALL_CONFIG */
    {256, 4, 64},     /* RMSNORM_SMALL_CONFIG */
    {320, 1, 64},     /* RMSNORM_SMALL_CONFIG */
    {384, 4, 96},     /* RMSNORM_SMALL_CONFIG */
    {512, 4, 64},     /* RMSNORM_SMALL_CONFIG */
    {640, 4, 160},    /* RMSNORM_SMALL_CONFIG */
    {1024, 2, 128},   /* RMSNORM_SMALL_CONFIG */
    {4096, 2, 512},   /* RMSNORM_SMALL_CONFIG */
    {8192, 2, 512},   /* RMSNORM_SMALL_CONFIG */
};

#define TLC_RMSNORM_NCONFIGS(t) (sizeof(t) / sizeof((t)[0]))

/* Many rows: the table's entry for C, else 128 threads (256 for C >= 2048)
 * and rows per block doubled while a thread has under 8 elements. */
static inline tlc_rmsnorm_config tlc_rmsnorm_config_for(int C) {
    for (unsigned i = 0; i < TLC_RMSNORM_NCONFIGS(TLC_RMSNORM_CONFIGS); i++)
        if (TLC_RMSNORM_CONFIGS[i].C == C) return TLC_RMSNORM_CONFIGS[i];
    tlc_rmsnorm_config c = {C, 1, C >= 2048 ? 256 : 128};
    while (c.block_m < 64 && c.block_m * C < 8 * c.threads) c.block_m *= 2;
    return c;
}

/* Few rows: the small table's entry for C, else `big` (C's many-rows config). */
static inline tlc_rmsnorm_config tlc_rmsnorm_small_config_or(int C, tlc_rmsnorm_config big) {
    for (unsigned i = 0; i < TLC_RMSNORM_NCONFIGS(TLC_RMSNORM_SMALL_CONFIGS); i++)
        if (TLC_RMSNORM_SMALL_CONFIGS[i].C == C) return TLC_RMSNORM_SMALL_CONFIGS[i];
    return big;
}

/* The config for rows x C, given the many-rows config `big` for C (the
 * table's, or an override). */
static inline tlc_rmsnorm_config tlc_rmsnorm_pick(tlc_rmsnorm_config big, tlc_rmsnorm_config small, int64_t rows) {
    return rows < (int64_t)TLC_RMSNORM_SMALL_BLOCKS * big.block_m ? small : big;
}

static inline tlc_rmsnorm_config tlc_rmsnorm_config_rows(int C, int64_t rows) {
    tlc_rmsnorm_config big = tlc_rmsnorm_config_for(C);
    return tlc_rmsnorm_pick(big, tlc_rmsnorm_small_config_or(C, big), rows);
}
#endif
