/* Layouts fixed by the tensor-core instructions (docs/architecture.md, "Layouts"):
 * how a gemm's M x N tile is split over the block's warps (mma.sync
 * m16n8k16, one warp per instruction) or warpgroups (wgmma m64nNk16, four
 * consecutive warps per instruction) under a warp policy, the accumulator
 * fragment that follows, the operand fragments for A or B held in registers,
 * and the swizzled shared-memory layouts of operands. */
#ifndef TLC_GEMM_LAYOUTS_H
#define TLC_GEMM_LAYOUTS_H
#include "../ir/tir.h"
#include "fragment.h"

typedef enum { TLC_INST_MMA_SYNC, TLC_INST_WGMMA } tlc_mma_inst;

typedef struct tlc_gemm_plan {
    tlc_mma_inst inst;
    int m, n, k;
    int k_step;         /* K of one instruction: 16, or 32 for 8-bit operands (32 bytes either way) */
    int units;          /* warps (mma.sync) or warpgroups (wgmma) */
    int units_m, units_n; /* split of M and N over the units (units_m * units_n == units) */
    int tile_m, tile_n; /* per unit: m / units_m, n / units_n */
    int inst_m, inst_n; /* one instruction: 16 x 8 (mma.sync), 64 x inst_n (wgmma) */
    tir_gemm_policy policy;
    /* > 1: the units above span one warpgroup and each of the block's
     * `replicas` warpgroups computes the whole tile (a per-warpgroup gemm,
     * tir.h); the fragments are replicated over them */
    int replicas;
} tlc_gemm_plan;

/* Chooses the instruction (wgmma on sm_90a when the block is whole
 * warpgroups and the tile splits into m64 pieces; else mma.sync) and the
 * split. False with a reason in `why` when no split fits. */
bool tlc_gemm_plan_make(tlc_gemm_plan *p, tlc_arch arch, int threads, int m, int n, int k, int k_step,
                        tir_gemm_policy policy, bool allow_wgmma, char *why, int whylen);
/* A wgmma plan's instruction narrowed to at most max_n columns (the widest
 * multiple of 8 dividing the unit's N). */
void tlc_gemm_plan_cap_n(tlc_gemm_plan *p, int max_n);
/* Accumulator fragment over [m, n]: per unit, the instruction's tiles
 * repeated over tile_m x tile_n. Slot of (instruction tile mi, ni, register
 * r) is tlc_gemm_acc_slot. */
tlc_fragment *tlc_gemm_acc_fragment(tlc_arena *a, const tlc_gemm_plan *p);
/* mma.sync: tiles of 16 x 8, r in 0..3. wgmma: tiles of 64 x inst_n, r in 0..inst_n/2-1. */
int64_t tlc_gemm_acc_slot(const tlc_gemm_plan *p, int mi, int ni, int r);
/* A operand in registers over [m, k] (mma.sync only): the m16n8k16 A
 * fragment per warp, replicated over the warps that split N. Slot of
 * (m tile mi, k tile ki, f16 register r in 0..7) is 8 * (ki + (k/16) * mi) + r. */
tlc_fragment *tlc_gemm_a_fragment(tlc_arena *a, const tlc_gemm_plan *p);
/* B operand in registers over [k, n] (mma.sync only: wgmma reads B from
 * shared memory): the m16n8k16 B fragment per warp, replicated over the
 * warps that split M. Its b32 register r in 0..1 of (n tile ni, k tile ki)
 * holds slots e (r + 2 (ki + (k / k_step) ni)) .. + e - 1, e = k_step / 8
 * elements of one column. */
tlc_fragment *tlc_gemm_b_fragment(tlc_arena *a, const tlc_gemm_plan *p);

/* Shared layout for a gemm operand (or any tile that TMA fills): the widest
 * hardware swizzle (128/64/32 bytes) that divides the row, rows wider than
 * the swizzle stored as column panels of swizzle bytes (what TMA boxes and
 * wgmma descriptors address); row-major when the row is under 32 bytes or
 * the rows do not come in groups of 8. */
tlc_layout *tlc_layout_gemm_operand(tlc_arena *a, int rank, const int64_t *shape, int elem_bytes);
#endif
