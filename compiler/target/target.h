/* Target descriptions: one row per architecture tlc compiles for, with its
 * capabilities, limits and PTX ISA version. Passes ask the row; nothing
 * else compares architecture values. Depends on nothing but the C library,
 * so every folder may ask it. */
#ifndef TLC_TARGET_TARGET_H
#define TLC_TARGET_TARGET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { TLC_SM80, TLC_SM86, TLC_SM89, TLC_SM90, TLC_SM90A, TLC_ARCH_COUNT } tlc_arch;
/* What tlc compiles for when no arch is given. */
#define TLC_DEFAULT_ARCH TLC_SM90A

typedef struct tlc_target {
    tlc_arch arch;
    const char *name;     /* "sm_90a": the ptxas / LLVM CPU name */
    int sm;               /* 90 */
    int ptx_isa;          /* PTX ISA version emitted, major * 10 + minor */
    bool arch_specific;   /* an "a" target: runs only on that exact SM */
    /* capabilities */
    bool cp_async;        /* cp.async (16-byte global -> shared) */
    bool mbarrier;        /* mbarrier objects in shared memory */
    bool tma;             /* cp.async.bulk.tensor with tensor maps */
    bool stmatrix;        /* stmatrix.sync.aligned */
    bool clusters;        /* thread block clusters */
    bool wgmma;           /* wgmma.mma_async (warpgroup MMA) */
    bool setmaxnreg;      /* setmaxnreg.inc / .dec */
    bool griddepcontrol;  /* programmatic dependent launch: griddepcontrol.wait / .launch_dependents */
    /* limits */
    int64_t max_shared_per_block; /* dynamic shared memory per block, opt-in maximum */
    int64_t shared_per_sm;        /* shared memory of one SM (blocks and their 1 KiB reserves) */
    int regs_per_sm;              /* 32-bit registers of one SM */
    int max_regs_per_thread;
    int max_threads_per_block;
    /* SMs of the data-center part of this arch (A100 108, A40 84, L40S
     * 142, H100 SXM and H200 132): what a kernel asking for the device's
     * SM count (TileLang's driver.get_num_sms()) is compiled with when no
     * device or option gives the real one */
    int num_sms;
} tlc_target;

/* The row of a (valid) arch. */
const tlc_target *tlc_target_of(tlc_arch a);
const char *tlc_arch_name(tlc_arch a);         /* "sm_90a"; "sm_?" when out of range */
bool tlc_arch_parse(const char *s, tlc_arch *out); /* exact names only */
/* The target a GPU reporting `name` ("sm_90a", "sm_100") runs: its own row,
 * or for a newer SM than any row the newest target that is not
 * arch-specific. False when neither. */
bool tlc_arch_for_device(const char *name, tlc_arch *out);
/* Every target name, separated by ", " and the last by `last_sep` (", " or
 * " or "): "sm_80, sm_86, sm_89, sm_90 or sm_90a". Truncated to fit. */
void tlc_arch_names(char *buf, size_t len, const char *last_sep);
#endif
