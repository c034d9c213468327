/* The kernel plan: every decision the planning pass (transform/plan.c)
 * makes once per kernel, recorded for lowering and the ops to read. Nothing
 * after planning decides any of these again. `tlc --emit=plan` prints it
 * (transform/plan_print.c). */
#ifndef TLC_LOWERKIT_PLAN_H
#define TLC_LOWERKIT_PLAN_H
#include "../ir/tir.h"
#include "../layout/gemm_layouts.h"

/* One Pipelined loop: the copies global -> shared at the top of its body
 * (after at most some lets they use) that get one buffer per stage, and the
 * copy engine that fills them. */
#define TLC_PIPE_MAX_COPIES 8
/* A Parallel loop that gathers rows of a global tensor into a whole 2-d
 * shared buffer (transform/pipeline_gather.c), `dst[r, j] = src[..., e +
 * j]` under a condition on r (0 where it fails): a stage load too, each
 * thread issuing 16-byte cp.async chunks of rows. */
typedef struct tlc_gather {
    const tir_stmt *loop;      /* the Parallel loop; NULL: the load is a copy */
    const tir_var *row, *col;  /* its variables (r, j) */
    tir_stmt *const *lets;     /* the lets its body opens with (they read no j) */
    int nlets;
    const tir_buffer *dst;
    const tir_expr *src;       /* TE_LOAD of the global tensor, its last index e + j */
    const tir_expr *cond;      /* NULL: every row is loaded */
} tlc_gather;
typedef struct tlc_pipe_plan {
    const tir_stmt *loop;
    int stages;
    int ncopies;
    /* the stage loads: TS_COPY statements, or Parallel loops where
     * gathers[i].loop or im2col[i] is set */
    const tir_stmt *copies[TLC_PIPE_MAX_COPIES];
    tlc_gather gathers[TLC_PIPE_MAX_COPIES];
    /* T.im2col's tiles that TMA loads in im2col mode (with `tma`; the
     * loop's description of its tile), NULL for the other loads */
    const tir_im2col *im2col[TLC_PIPE_MAX_COPIES];
    int nprefix; /* body statements up to the last pipelined copy (lets and those copies) */
    bool tma;    /* the copies by TMA on mbarriers; else cp.async with commit / wait groups */
    int ngathers; /* of the loads, gathers (always cp.async chunks) */
    /* With cp.async chunks, the body's last statement when it is a wgmma
     * gemm (float32 accumulator, not continuing another's): the next
     * stage's loads are issued between its commit and its wait. NULL: before
     * the body. */
    const tir_stmt *loads_under;
    int64_t mbar; /* TMA without warp specialization: byte offset of the stages' mbarriers (else -1) */
} tlc_pipe_plan;

/* One gemm: its instruction and how the warps (warpgroups) split it.
 * Two wgmma gemms in a row into the same accumulator, split the same way,
 * form a chain: the first leaves its wgmmas in flight (no wait_group) and
 * the second accumulates onto them, as the k steps of one gemm do. */
typedef struct tlc_gemm_op_plan {
    const tir_stmt *op;
    tlc_gemm_plan inst;
    bool chain_next; /* the next statement is a gemm that continues this one's wgmmas */
    bool chain_prev; /* this gemm continues the previous statement's wgmmas */
    /* A wgmma gemm left in flight past the statements after it that do not
     * touch what it uses (transform/gemm_retire.c): its wait_group stands
     * just before `retire_before`, the first later statement of its
     * sequence that reads or writes its accumulator or writes an operand
     * (NULL: the sequence's end). */
    bool deferred;
    const tir_stmt *retire_before;
} tlc_gemm_op_plan;
/* Statements a gemm stays in flight past at most (its wait then stands
 * before the next one): planning and the walks that read it stay linear in
 * a long sequence. */
#define TLC_GEMM_MAX_AHEAD 32

/* Warp specialization (transform/warp_specialize.c): a producer warpgroup
 * added after the user's threads issues the loads of one Pipelined loop;
 * the user's threads become the consumers. */
/* Run-time tiles' ring in shared memory: 2 full and 2 empty mbarriers, then
 * 2 u32 slots (tlc_ws_decision.tile_full, tile_empty, tile_slots). */
#define TLC_WS_TILE_RING_BYTES (2 * 8 + 2 * 8 + 2 * 4)
typedef struct tlc_ws_decision {
    const tir_stmt *loop; /* NULL: the kernel is not warp-specialized */
    const tlc_pipe_plan *pipe;
    int consumer_threads; /* the user's block */
    int producer_threads; /* one warpgroup */
    int max_wgmma_n;      /* widest wgmma of the consumers (their register need) */
    int blocks_per_sm;    /* minnctapersm */
    int reg_dec, reg_inc; /* setmaxnreg of the producer / the consumers */
    /* the kernel's disable_warp_group_reg_alloc(): no setmaxnreg; every
     * warpgroup keeps the launch's registers (reg_dec, reg_inc: those) */
    bool keep_regs;
    bool persistent;      /* blocks walk the logical grid's tiles */
    int64_t full, empty;  /* byte offsets of the stages' mbarriers */
    /* The body after the loads is nothing but wgmma gemms: one arrival per
     * consumer warp releases a stage. With three stages or more
     * (`late_release`) the consumers keep the last wgmma group in flight
     * and release a stage one iteration late; with two that would leave
     * the producer one stage to fill ahead, so they wait for their
     * wgmmas and release it at the end of its iteration. Otherwise (an
     * attention loop) every consumer thread arrives at the end of the
     * iteration. */
    bool gemm_only;
    bool late_release;
    /* The loop sits inside serial loops (MLA's walk over sequences): both
     * roles count stages and phases over all its runs. */
    bool nested;
    /* What the producer runs besides the loads, in program order: the
     * scalar statements (lets, assignments, var stores) that the loads'
     * coordinates, the loop's trip count and the enclosing loops' bounds
     * depend on; the enclosing loops themselves are replayed around them. */
    const tir_stmt **slice; int nslice;
    /* Consumer overlap (not gemm_only): the first `lookahead` statements
     * after the loads, a chain of wgmma gemms that clears its accumulator
     * (attention's scores), run one iteration ahead: iteration k issues
     * them for k + 1 into a second register copy of the accumulator, then
     * runs the rest of its body (the softmax) while they execute. */
    int lookahead;
    /* Deferred output gemm (FlashAttention-3's overlap; an attention body,
     * no turns, taken before `lookahead`): the body after its loads is
     * G (the score gemms, after statements that only set their
     * accumulator) X P R O (copies the producer issues aside), where O is
     * the last statement, a wgmma
     * gemm with A in registers, P the last statement writing O's A (the
     * scores as the input type) and R what lies between (the rescale of O's
     * accumulator). Iteration k issues G(k), then runs R and O of
     * iteration k - 1 (O reading the previous stage), waits for G(k) alone,
     * runs X(k) while O(k - 1) executes, waits for it, releases its stage
     * and runs P(k). Iteration 0's G X P run before the loop, the last R O
     * after it. defer_x, defer_p, defer_r: the first index in the body of
     * X, P and R (0: no deferral). */
    int defer_x, defer_p, defer_r;
    /* Run-time tile scheduler (persistent attention bodies whose trip count
     * depends on the block indices, so tiles differ in work: causal
     * attention): the producer takes each next tile from a counter in
     * global memory (metadata `tile_counter`) and passes it to the
     * consumers through a two-slot ring in shared memory, so a block that
     * finished early takes more tiles. With heaviest_first (the trip count
     * depends on block index x and no swizzle remaps the grid) the (y, z)
     * planes go out in groups of about three tiles per block, and within a
     * group x descends slowest: causal row blocks heaviest first over the
     * group's heads, so each group, the last one included, ends with its
     * lightest tiles, and a group's K and V stay in L2. */
    bool dynamic_tiles, heaviest_first;
    /* TMA multicast (the kernel runs in clusters, cluster_dims, and what the
     * producer computes, its loops' bounds and its loads' coordinates do not
     * depend on a block index that varies within a cluster, so every block
     * of a cluster loads the same tiles in the same order): the loop's
     * loads are shared out over the cluster's blocks, panel i by the block
     * of rank i % blocks, each sent to all of them (.multicast::cluster);
     * every block's full barrier still counts all the bytes. A stage may be
     * refilled only when it is free in every block: each consumer warp, by
     * its lane 0 once the warp is done with the stage, arrives at `empty`
     * of that stage in every block of the cluster (count: warps x blocks),
     * so each producer waits for its own `empty` alone. multicast_refused
     * says why a clustered kernel loads without. */
    bool multicast;
    const char *multicast_refused;
    int64_t tile_full, tile_empty, tile_slots; /* byte offsets: 2 mbarriers each, 2 u32 slots */
    /* Warpgroup turns (the loop's tir_turns, taken when the loop is warp-
     * specialized with two consumer warpgroups and every fragment the owner
     * computes is held whole by each warpgroup): byte offsets of the
     * published and handed-over fragments' slots, in the order of the
     * turns' lists. turns_refused says why a turns loop runs without. */
    const tir_turns *turns;
    const char *turns_refused;
    int64_t *published_at, *handed_at;
    /* Warpgroup roles (roles=True on a turns loop): instead of the two
     * warpgroups taking turns, a score warpgroup added after the consumers
     * (threads consumer_threads .. + 127, tid - consumer_threads in its
     * fragments, so it holds warpgroup 0's copy of each) runs every
     * iteration's score gemms and owner and late statements and publishes
     * through the same slots; the consumers run only the shared statements
     * (the output gemm), iteration k's while the score warpgroup computes
     * k + 1's scores. It replays the loop's ancestors and score_slice (the
     * scalar statements its statements need), runs score_inits (the
     * statements before the loop in its sequence that set the handed-over
     * fragments) where they stand, and hands over after each run.
     * roles_refused says why a roles=True loop runs in turns instead. */
    bool roles;
    const char *roles_refused;
    int score_threads; /* 128 with roles, else 0 */
    int reg_score;     /* the score warpgroup's setmaxnreg */
    const tir_stmt **score_slice; int nscore_slice;
    const tir_stmt **score_inits; int nscore_inits;
    /* byte offsets of the roles' two mbarriers: `published` (the score
     * warpgroup's threads arrive: iteration k's scores, or a run's hand-
     * over, are in shared memory) and `freed` (the consumers' threads
     * arrive: their writes before the loop are done, or iteration k's
     * output gemm has retired) */
    int64_t role_published, role_freed;
    /* Preloads: copies global -> shared standing before the loop in its own
     * sequence (attention's Q tile) whose buffers nothing but the loop's
     * body reads and nothing but the copy writes, and whose regions the
     * producer can compute. The producer issues them by TMA before the
     * loop's loads, on their own mbarrier pair (pre_full: one arrival with
     * their bytes; pre_empty: every consumer thread); the consumers wait on
     * pre_full where the first copy stands and release the buffers once the
     * loop has read them: with the deferred output gemm, when only the
     * score gemms read them, as soon as the last score gemm has retired
     * (preload_early), else after the loop. The buffers get bytes of their
     * own (shared_alloc.c), so the next run's preload overlaps the
     * consumers' epilogue. The producer issues a run's preloads after its
     * first `preload_after_loads` stage loads: those that wait only for
     * stages the consumers free before they release the preloads. */
#define TLC_WS_MAX_PRELOADS 4
    const tir_stmt *preloads[TLC_WS_MAX_PRELOADS]; int npreloads;
    bool preload_early;
    int preload_after_loads;
    int64_t pre_full, pre_empty; /* byte offsets of the preloads' mbarriers */
} tlc_ws_decision;

/* Shared memory (transform/shared_alloc.c): buffer offsets are in their
 * layouts (layout->offset); this holds the tile ops' scratch and, per
 * shared region (the shared buffers in id order, region_of_buffer, then
 * the scratch from scratch_region0 on), the others whose bytes overlap
 * it, so that lowering keys barriers by bytes. Only shared memory has
 * regions: a kernel's register and local buffers cost its barrier
 * tracking nothing. */
typedef struct tlc_smem_scratch {
    const tir_stmt *op;
    int64_t offset, bytes;
} tlc_smem_scratch;
typedef struct tlc_smem_plan {
    int nbuffers;
    tlc_smem_scratch *scratch; int nscratch;
    int64_t top; /* end of the buffers and the planned scratch */
    int *region_of_buffer; /* per buffer id: its region, -1 outside shared memory */
    int nregions, scratch_region0;
    int **alias; int *nalias; /* per region */
} tlc_smem_plan;

typedef struct tlc_kernel_plan {
    tlc_arch arch;
    tlc_pipe_plan *pipes; int npipes;    /* in program order */
    tlc_gemm_op_plan *gemms; int ngemms; /* in program order */
    tlc_ws_decision ws;
    tlc_smem_plan smem;
    tlc_smem_scratch *fresh; int nfresh; /* ops' fresh scratch (tlc_op_desc.fresh_scratch_bytes), after the mbarriers */
    int64_t smem_bytes;    /* buffers, planned scratch, mbarriers and fresh scratch */
    /* byte offset of the kernel's own mbarriers (tir_kernel.mbarriers: a
     * hand-pipelined kernel's), 8 bytes each, after the planned ones; -1: none */
    int64_t user_mbar;
    int min_blocks_per_sm; /* minnctapersm (0: none asked) */
    /* warp specialization without persistent tiles: with them the kernel's
     * shared memory did not fit (stage buffers live across tiles, so the
     * epilogue's buffers cannot reuse them) */
    bool ws_one_tile;
    /* warp specialization without preloads: with them (their buffers
     * reusing nobody's bytes) the kernel's shared memory did not fit */
    bool ws_no_preload;
    /* Why the loop that qualified for warp specialization was left without
     * it (NULL: none was): the unspecialized kernel runs more warpgroups per
     * SM (tlc_ws_occupancy_refusal); min_blocks_per_sm is then its count. */
    const char *ws_refused;
} tlc_kernel_plan;

/* The plan of a Pipelined loop (NULL: it runs as a serial loop), of a gemm,
 * of an op's scratch (NULL: none planned). */
const tlc_pipe_plan *tlc_plan_pipe(const tlc_kernel_plan *p, const tir_stmt *loop);
const tlc_gemm_plan *tlc_plan_gemm(const tlc_kernel_plan *p, const tir_stmt *op);
const tlc_gemm_op_plan *tlc_plan_gemm_op(const tlc_kernel_plan *p, const tir_stmt *op);
/* s is one of the loop's pipelined copies (or gathers). */
bool tlc_pipe_is_copy(const tlc_pipe_plan *pp, const tir_stmt *s);
/* Which of the loop's stage loads s is (-1: none). */
int tlc_pipe_load_index(const tlc_pipe_plan *pp, const tir_stmt *s);
/* The plan loads something by cp.async chunks (copies without TMA,
 * gathers). */
bool tlc_pipe_has_chunks(const tlc_pipe_plan *pp);
/* The shared buffer stage load i fills. */
const tir_buffer *tlc_pipe_load_dst(const tlc_pipe_plan *pp, int i);
/* s is one of the warp-specialized loop's preloads (tlc_ws_decision). */
bool tlc_ws_is_preload(const tlc_ws_decision *d, const tir_stmt *s);
const tlc_smem_scratch *tlc_plan_scratch(const tlc_kernel_plan *p, const tir_stmt *op);
const tlc_smem_scratch *tlc_plan_fresh_scratch(const tlc_kernel_plan *p, const tir_stmt *op);
#endif
