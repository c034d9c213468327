/* The LLVM IR pass pipeline tlc runs at -O3: default<O3>'s passes, in its
 * order and with its options, less those that leave tlc's code unchanged.
 * What lowering hands LLVM is one kernel function with no calls, already
 * in SSA form (codegen_vars.c), whose loops are either fully unrolled
 * (fragment slots) or kept (pipelined main loops); the inliner, the
 * coroutine, OpenMP and global passes, jump threading, loop unswitching,
 * the loop vectorizer and three of the eight InstCombine runs do nothing to
 * it, and they took a sixth of the pipeline's time. The passes left out
 * were found by taking default<O3>'s out one at a time and keeping out
 * those without which the PTX of the shipped kernels, ports and golden
 * tests stayed byte for byte the same (docs/benchmarks.md, compile time;
 * one golden's induction registers come out numbered in another order).
 * Three more are out because ptxas makes the same machine code without
 * them: DSE (its walks past the wgmma asm statements took mla_decode_split
 * 14 ms), the SLP vectorizer (the NVPTX backend's load/store vectorizer
 * forms the same vector accesses) and the InstCombine after SCCP; over the
 * shipped kernels and ports on sm_90a and sm_80, every kernel's SASS stays
 * instruction for instruction the same.
 * SROA stays although those kernels do without it: a register array
 * indexed by a loop counter needs it after unrolling, and it costs nothing
 * where there is no such array.
 * -O0 .. -O2 keep LLVM's default pipelines. */
#include "codegen_internal.h"

#define IC "instcombine<max-iterations=1;no-verify-fixpoint>"
#define CFG_OPTS(fwd, r2i, arith, lookup, loops, hoist, hoist_ls, sink, unpred)                     \
    "simplifycfg<bonus-inst-threshold=1;" fwd "forward-switch-cond;" r2i "switch-range-to-icmp;" arith \
    "switch-to-arithmetic;" lookup "switch-to-lookup;" loops "keep-loops;" hoist "hoist-common-insts;"  \
    hoist_ls "hoist-loads-stores-with-cond-faulting;" sink "sink-common-insts;speculate-blocks;"        \
    "simplify-cond-branch;" unpred "speculate-unpredictables>"
#define CFG_EARLY CFG_OPTS("no-", "no-", "no-", "no-", "", "no-", "no-", "no-", "no-")
#define CFG_MID CFG_OPTS("no-", "", "no-", "no-", "", "no-", "no-", "no-", "no-")
#define CFG_LATE CFG_OPTS("", "", "", "", "no-", "", "no-", "", "no-")
#define CFG_LAST CFG_OPTS("no-", "", "", "no-", "", "no-", "", "no-", "")
#define LICM "loop-mssa(licm<allowspeculation>)"

/* The list, with or without (LATE_IC) the InstCombine in front of the
 * late unroller. */
#define TLC_O3_LIST(LATE_IC)                                                                                           \
    /* nvvm-intr-range bounds tid / ctaid for the folds below */                                                      \
    "function(nvvm-intr-range," CFG_EARLY ",sroa<modify-cfg>,early-cse<>),"                                            \
    "ipsccp,"                                                                                                          \
    "function(" IC "," CFG_MID "),"                                                                                    \
    /* default<O3>'s function simplification, then the kernel's attributes */                                          \
    "cgscc(function(sroa<modify-cfg>,early-cse<memssa>,speculative-execution<only-if-divergent-target>," IC           \
    ",reassociate,"                                                                                                    \
    "loop-mssa(licm<no-allowspeculation>,loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>),"  \
    CFG_MID "," IC ",loop(indvars,loop-unroll-full),sroa<modify-cfg>,vector-combine,mldst-motion<no-split-footer-bb>," \
    "gvn<>,sccp,correlated-propagation," LICM "),function-attrs),"                                                    \
    /* the late function passes */                                                                                     \
    "function(loop(loop-deletion),infer-alignment," CFG_LATE "," LATE_IC "loop-unroll<O3>,"                           \
    "sroa<preserve-cfg>,infer-alignment," IC "," LICM ",div-rem-pairs," CFG_LAST "),"                                  \
    "globaldce"

static const char TLC_O3_PIPELINE[] = TLC_O3_LIST(IC ",");
/* A large function (lowering's unrolled fragment code: the attention and
 * MLA kernels, 7,262-12,312 instructions as built) goes without the
 * InstCombine in front of the late unroller. On those kernels it changes
 * nothing: their PTX is byte for byte the same without it, and it cost
 * mla_decode_split 36M instructions of 1,305M. In a small function it
 * tidies loops before the unroller sizes them: without it, a golden
 * kernel's runtime loop is unrolled and its code doubles
 * (docs/benchmarks.md, compile time, ninth session). */
static const char TLC_O3_LARGE_PIPELINE[] = TLC_O3_LIST("");

const char *cg_opt_pipeline(int opt_level, bool large) {
    if (opt_level >= 3) return large ? TLC_O3_LARGE_PIPELINE : TLC_O3_PIPELINE;
    return opt_level <= 0 ? "default<O0>" : opt_level == 1 ? "default<O1>" : "default<O2>";
}
