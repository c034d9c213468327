/* The target table (target.h). Limits from NVIDIA's CUDA C++ Programming
 * Guide, "Technical Specifications per Compute Capability". PTX ISA 8.0 for
 * every target: the first that knows sm_90a (wgmma, setmaxnreg); ptxas
 * 12.0+ and drivers from CUDA 12.0 on accept it. */
#include "target.h"
#include <stdio.h>
#include <string.h>

static const tlc_target TARGETS[TLC_ARCH_COUNT] = {
    {.arch = TLC_SM80, .name = "sm_80", .sm = 80, .ptx_isa = 80, .cp_async = true, .mbarrier = true,
     .max_shared_per_block = 166912, .shared_per_sm = 167936, .regs_per_sm = 65536, .max_regs_per_thread = 255,
     .max_threads_per_block = 1024, .num_sms = 108},
    {.arch = TLC_SM86, .name = "sm_86", .sm = 86, .ptx_isa = 80, .cp_async = true, .mbarrier = true,
     .max_shared_per_block = 101376, .shared_per_sm = 102400, .regs_per_sm = 65536, .max_regs_per_thread = 255,
     .max_threads_per_block = 1024, .num_sms = 84},
    {.arch = TLC_SM89, .name = "sm_89", .sm = 89, .ptx_isa = 80, .cp_async = true, .mbarrier = true,
     .max_shared_per_block = 101376, .shared_per_sm = 102400, .regs_per_sm = 65536, .max_regs_per_thread = 255,
     .max_threads_per_block = 1024, .num_sms = 142},
    {.arch = TLC_SM90, .name = "sm_90", .sm = 90, .ptx_isa = 80, .cp_async = true, .mbarrier = true, .tma = true,
     .stmatrix = true, .clusters = true, .griddepcontrol = true, .max_shared_per_block = 232448, .shared_per_sm = 233472,
     .regs_per_sm = 65536, .max_regs_per_thread = 255, .max_threads_per_block = 1024, .num_sms = 132},
    {.arch = TLC_SM90A, .name = "sm_90a", .sm = 90, .ptx_isa = 80, .arch_specific = true, .cp_async = true,
     .mbarrier = true, .tma = true, .stmatrix = true, .clusters = true, .wgmma = true, .setmaxnreg = true,
     .griddepcontrol = true, .max_shared_per_block = 232448, .shared_per_sm = 233472, .regs_per_sm = 65536, .max_regs_per_thread = 255,
     .max_threads_per_block = 1024, .num_sms = 132},
};

const tlc_target *tlc_target_of(tlc_arch a) {
    return (unsigned)a < TLC_ARCH_COUNT ? &TARGETS[a] : &TARGETS[TLC_DEFAULT_ARCH];
}

const char *tlc_arch_name(tlc_arch a) { return (unsigned)a < TLC_ARCH_COUNT ? TARGETS[a].name : "sm_?"; }

bool tlc_arch_parse(const char *s, tlc_arch *out) {
    for (int i = 0; s && i < TLC_ARCH_COUNT; i++)
        if (strcmp(s, TARGETS[i].name) == 0) {
            *out = TARGETS[i].arch;
            return true;
        }
    return false;
}

bool tlc_arch_for_device(const char *name, tlc_arch *out) {
    if (tlc_arch_parse(name, out)) return true;
    int sm = 0;
    if (!name || sscanf(name, "sm_%d", &sm) != 1) return false;
    int newest = -1;
    for (int i = 0; i < TLC_ARCH_COUNT; i++) {
        if (TARGETS[i].sm >= sm) return false; /* an SM tlc knows, in a variant it does not */
        if (!TARGETS[i].arch_specific) newest = i;
    }
    if (newest < 0) return false;
    *out = TARGETS[newest].arch;
    return true;
}

void tlc_arch_names(char *buf, size_t len, const char *last_sep) {
    size_t o = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < TLC_ARCH_COUNT && o < len; i++) {
        const char *sep = i == 0 ? "" : i == TLC_ARCH_COUNT - 1 ? last_sep : ", ";
        int n = snprintf(buf + o, len - o, "%s%s", sep, TARGETS[i].name);
        if (n < 0) break;
        o += (size_t)n;
    }
}
