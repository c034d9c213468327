/* The inline PTX tlc emits where LLVM has no intrinsic: one typed builder
 * per instruction, and the only place PTX text is written. A builder
 * returns the asm text and its LLVM constraint string; its comment lists
 * the operands the caller passes ($0, $1, ... in that order; outputs first
 * where the instruction has any). Lowering wraps the result in a Thread IR
 * asm statement (lowerkit: tlc_emit_ptx). */
#ifndef TLC_TARGET_PTX_H
#define TLC_TARGET_PTX_H
#include <stdbool.h>
#include "../support/arena.h"

typedef struct tlc_ptx {
    const char *text;
    const char *constraints;
} tlc_ptx;

/* ---- mbarriers (64-bit, in shared::cta; $0 is the mbarrier's 32-bit shared address) ---- */
tlc_ptx tlc_ptx_mbarrier_init(tlc_arena *a, int count); /* $0; expected arrivals per phase: count */
tlc_ptx tlc_ptx_mbarrier_init_fence(void);              /* makes the inits visible to the async proxy */
tlc_ptx tlc_ptx_mbarrier_arrive(void);                  /* $0 */
/* arrives on mbarrier $0 once the thread's earlier cp.async copies are done,
 * without raising the phase's pending count */
tlc_ptx tlc_ptx_cp_async_mbarrier_arrive_noinc(void);
tlc_ptx tlc_ptx_mbarrier_arrive_expect_tx(void);        /* $0, $1 transaction bytes (u32) */
tlc_ptx tlc_ptx_mbarrier_expect_tx(void);               /* $0, $1 transaction bytes (u32), no arrival */
tlc_ptx tlc_ptx_mbarrier_wait_parity(void);             /* $0, $1 phase parity: spins until that phase completed */
/* Thread block clusters (sm_90): */
tlc_ptx tlc_ptx_mbarrier_init_count(void);         /* $0, $1 expected arrivals per phase (u32 register) */
tlc_ptx tlc_ptx_cluster_rank(void);                /* $0 = this block's rank in its cluster */
tlc_ptx tlc_ptx_cluster_blocks(void);              /* $0 = the blocks in this cluster */
tlc_ptx tlc_ptx_cluster_sync(void);                /* every thread of every block of the cluster */
/* $0 (own address) in the block of rank $1; the default semantics
 * (release, CTA scope) as CUTLASS's cluster pipelines arrive: what it
 * orders are reads by wgmma that have retired */
tlc_ptx tlc_ptx_mbarrier_arrive_remote(void);

/* ---- the run-time tile scheduler (a counter pair in global memory) ---- */
tlc_ptx tlc_ptx_atom_add_global_u32(void); /* output $0 (the old value), $1 address (u64), $2 addend (u32) */
/* The same, acquire and release at GPU scope, of a u32 or f32 */
tlc_ptx tlc_ptx_atom_add_acq_rel_gpu(bool f32);
/* A thread's own add, relaxed (CUDA's atomicAdd): $0 the old u32 / f32,
 * $1 the address (global: u64; shared: u32), $2 the addend */
tlc_ptx tlc_ptx_atom_add(bool f32, bool shared);
tlc_ptx tlc_ptx_st_global_u32(void);       /* $0 address (u64), $1 u32 */
tlc_ptx tlc_ptx_fence_acq_rel_gpu(void);
tlc_ptx tlc_ptx_ld_shared_b32(void);       /* output $0 (u32), $1 shared address */

/* ---- cp.async (sm_80+) ---- */
/* 16 bytes global -> shared, cached at L2 only: $0 shared address (u32),
 * $1 global address (u64), and with `src_size` $2 the bytes to read (the
 * rest of the 16 is zero-filled). */
tlc_ptx tlc_ptx_cp_async_16(bool src_size);
/* cp.async of 4, 8 or 16 bytes [$0] <- [$1], $2 of them read (the rest zeros) */
tlc_ptx tlc_ptx_cp_async_bytes(tlc_arena *a, int bytes);
tlc_ptx tlc_ptx_cp_async_commit(void);
tlc_ptx tlc_ptx_cp_async_wait(tlc_arena *a, int pending); /* until at most `pending` groups are in flight */

/* ---- TMA (sm_90+) ---- */
/* cp.async.bulk.tensor of a `rank`-d box completing on an mbarrier: $0
 * shared address, $1 tensor map (u64 generic address), $2 .. $rank+1 the
 * box's coordinates innermost first, $rank+2 the mbarrier. */
tlc_ptx tlc_ptx_tma_load(tlc_arena *a, int rank);
/* The same, written into every block of the cluster whose bit is set in
 * the mask, after the mbarrier: $(3 + rank), a u32 of which 16 bits count;
 * each block's mbarrier at that address gets its bytes. */
tlc_ptx tlc_ptx_tma_load_multicast(tlc_arena *a, int rank);
/* The same in im2col mode (a map from cuTensorMapEncodeIm2col): $0 shared
 * address, $1 tensor map, $2 .. $rank+1 the coordinates innermost first
 * (channel, then the spatial dims of the first pixel's window, then the
 * image), $rank+2 the mbarrier, then rank - 2 offsets (u32, of which 16
 * bits count) added to the spatial coordinates, innermost first. */
tlc_ptx tlc_ptx_tma_load_im2col(tlc_arena *a, int rank);

/* ---- warp specialization (sm_90a) ---- */
tlc_ptx tlc_ptx_setmaxnreg(tlc_arena *a, bool increase, int regs);
/* Named barrier `id` of `nthreads`: this warp arrives without waiting
 * (its earlier shared-memory writes are visible to the threads whose
 * bar.sync on `id` completes the barrier). */
tlc_ptx tlc_ptx_bar_arrive(tlc_arena *a, int id, int nthreads);

/* ---- tensor cores ---- */
/* ldmatrix m8n8 .x`num` (2 or 4) b16, optionally .trans: outputs $0 ..
 * $num-1 (u32), then the shared address. */
tlc_ptx tlc_ptx_ldmatrix(int num, bool trans);
/* mma.sync m16n8k16 row.col, f16 or bf16 (`bf16`) operands. f32
 * accumulator: outputs $0..$3 (f32), A $4..$7, B $8..$9 (u32), C tied to
 * the outputs. f16 accumulator (`f16_acc`, f16 operands only): outputs $0,
 * $1 (b32, each two halves in the f32 accumulator's element order), A
 * $2..$5, B $6, $7, C tied. */
tlc_ptx tlc_ptx_mma_m16n8k16(bool bf16, bool f16_acc);
/* mma.sync m16n8k32 of float8_e4m3 (or, e5m2, float8_e5m2) operands into float32 (sm_89+, PTX ISA 8.4) */
tlc_ptx tlc_ptx_mma_m16n8k32_fp8(bool e5m2);
/* mma.sync m16n8k8 of tf32 operands (float32 registers) into float32 */
tlc_ptx tlc_ptx_mma_m16n8k8_tf32(void);
/* mma.sync m16n8k32 of int8 operands into int32 */
tlc_ptx tlc_ptx_mma_m16n8k32_s8(void);
/* wgmma.mma_async m64n`n`k16 `acc` += `ty` x `ty` (acc "f32", or "f16"
 * with ty "f16"; ty "f16" / "bf16"), A from a shared-memory descriptor or
 * (a_regs) from four b32 registers (pairs of halves), B from a descriptor;
 * trans_a / trans_b: MN-major A / K-major B (the instruction's transpose
 * bits). */
typedef struct tlc_wgmma_shape {
    int n;
    const char *acc, *ty;
    bool a_regs, trans_a, trans_b;
} tlc_wgmma_shape;
/* `ninst` such instructions in one asm statement, instruction q adding into
 * accumulator group group[q] (groups numbered from 0). Operands: each
 * group's accumulator outputs in turn (n/2 f32, or n/4 b32 holding two
 * halves each in the f32 accumulator's element order), then each
 * instruction's A operand(s) and B descriptor (u64), then the accumulator
 * inputs tied to the outputs. One statement instead of one per instruction
 * leaves LLVM one call and no per-instruction copies of the accumulators
 * (mla_decode_split's 40 wgmmas were 1,664 extracted values). */
tlc_ptx tlc_ptx_wgmma_chain(tlc_arena *a, const tlc_wgmma_shape *w, int ninst, const int *group);
tlc_ptx tlc_ptx_wgmma_fence(void);
/* Programmatic dependent launch (sm_90): wait for the stream's previous
 * grid, or let the next one be scheduled. */
tlc_ptx tlc_ptx_griddepcontrol_wait(void);
/* sync_grid's part in thread 0 (ops/sync_grid.c): fence, add $0 (u32) to
 * the module variable `counter`, wait until its top bit flips, fence */
tlc_ptx tlc_ptx_grid_sync(tlc_arena *a, const char *counter);
tlc_ptx tlc_ptx_griddepcontrol_launch_dependents(void);
/* cp.async.bulk.prefetch.L2 (sm_90) of the 16-byte chunks from the one
 * holding $0 up to the one holding $0 + $1, that one excluded: $0 global
 * address (u64), $1 bytes (u32); nothing when they are the same chunk. */
tlc_ptx tlc_ptx_bulk_prefetch_l2(void);
tlc_ptx tlc_ptx_wgmma_commit(void);
tlc_ptx tlc_ptx_wgmma_wait(tlc_arena *a, int pending);
/* generic-proxy writes to shared memory before async-proxy reads (wgmma, TMA) */
tlc_ptx tlc_ptx_fence_proxy_async(void);

/* ---- shared-memory staging (the whole-tile epilogue) ---- */
tlc_ptx tlc_ptx_stmatrix_x4(void);     /* $0 shared address, $1..$4 u32 (pairs of b16) */
tlc_ptx tlc_ptx_st_shared_b32(void);   /* $0 shared address, $1 u32 */
tlc_ptx tlc_ptx_ld_shared_v4_b32(void); /* outputs $0..$3 (u32), $4 shared address */
tlc_ptx tlc_ptx_read_tid_x(void);   /* $0 = %tid.x; $1 an input it does not read (see lower.c) */
tlc_ptx tlc_ptx_bar_warp_sync(void);   /* all lanes of the warp */
#endif
