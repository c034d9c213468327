/* The PTX text builders (ptx.h). */
#include "ptx.h"
#include <string.h>
#include "../support/strbuf.h"

static tlc_ptx ptx(const char *text, const char *constraints) { return (tlc_ptx){text, constraints}; }

tlc_ptx tlc_ptx_mbarrier_init(tlc_arena *a, int count) {
    return ptx(tlc_arena_printf(a, "mbarrier.init.shared::cta.b64 [$0], %d;", count), "r");
}

tlc_ptx tlc_ptx_mbarrier_init_fence(void) { return ptx("fence.mbarrier_init.release.cluster;", ""); }

tlc_ptx tlc_ptx_mbarrier_arrive(void) { return ptx("mbarrier.arrive.shared::cta.b64 _, [$0];", "r"); }

tlc_ptx tlc_ptx_cp_async_mbarrier_arrive_noinc(void) {
    return ptx("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r");
}

tlc_ptx tlc_ptx_mbarrier_expect_tx(void) {
    return ptx("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;", "r,r");
}

tlc_ptx tlc_ptx_mbarrier_arrive_expect_tx(void) {
    return ptx("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r");
}

tlc_ptx tlc_ptx_mbarrier_wait_parity(void) {
    /* ${:uid} makes the label unique per inlined copy */
    return ptx("{\n\t.reg .pred tlc_p;\n\tTLC_WAIT${:uid}:\n\tmbarrier.try_wait.parity.shared::cta.b64 tlc_p, [$0], $1;\n"
               "\t@!tlc_p bra TLC_WAIT${:uid};\n\t}",
               "r,r");
}

tlc_ptx tlc_ptx_mbarrier_init_count(void) { return ptx("mbarrier.init.shared::cta.b64 [$0], $1;", "r,r"); }

tlc_ptx tlc_ptx_cluster_rank(void) { return ptx("mov.u32 $0, %cluster_ctarank;", "=r"); }

tlc_ptx tlc_ptx_cluster_blocks(void) { return ptx("mov.u32 $0, %cluster_nctarank;", "=r"); }

tlc_ptx tlc_ptx_cluster_sync(void) {
    return ptx("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;", "");
}

tlc_ptx tlc_ptx_mbarrier_arrive_remote(void) {
    return ptx("{\n\t.reg .b32 tlc_r;\n\tmapa.shared::cluster.u32 tlc_r, $0, $1;\n"
               "\tmbarrier.arrive.shared::cluster.b64 _, [tlc_r];\n\t}",
               "r,r");
}

tlc_ptx tlc_ptx_atom_add_global_u32(void) { return ptx("atom.global.add.u32 $0, [$1], $2;", "=r,l,r"); }

tlc_ptx tlc_ptx_atom_add_acq_rel_gpu(bool f32) {
    return f32 ? ptx("atom.acq_rel.gpu.global.add.f32 $0, [$1], $2;", "=f,l,f")
               : ptx("atom.acq_rel.gpu.global.add.u32 $0, [$1], $2;", "=r,l,r");
}

tlc_ptx tlc_ptx_atom_add(bool f32, bool shared) {
    if (shared)
        return f32 ? ptx("atom.shared.add.f32 $0, [$1], $2;", "=f,r,f") : ptx("atom.shared.add.u32 $0, [$1], $2;", "=r,r,r");
    return f32 ? ptx("atom.global.add.f32 $0, [$1], $2;", "=f,l,f") : ptx("atom.global.add.u32 $0, [$1], $2;", "=r,l,r");
}

tlc_ptx tlc_ptx_st_global_u32(void) { return ptx("st.global.u32 [$0], $1;", "l,r"); }

tlc_ptx tlc_ptx_fence_acq_rel_gpu(void) { return ptx("fence.acq_rel.gpu;", ""); }

tlc_ptx tlc_ptx_ld_shared_b32(void) { return ptx("ld.shared.b32 $0, [$1];", "=r,r"); }

tlc_ptx tlc_ptx_cp_async_16(bool src_size) {
    return src_size ? ptx("cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r")
                    : ptx("cp.async.cg.shared.global [$0], [$1], 16;", "r,l");
}

tlc_ptx tlc_ptx_cp_async_bytes(tlc_arena *a, int bytes) {
    /* .cg (L2 only) takes 16 bytes alone */
    return ptx(tlc_arena_printf(a, "cp.async.%s.shared.global [$0], [$1], %d, $2;", bytes == 16 ? "cg" : "ca", bytes),
               "r,l,r");
}

tlc_ptx tlc_ptx_cp_async_commit(void) { return ptx("cp.async.commit_group;", ""); }

tlc_ptx tlc_ptx_cp_async_wait(tlc_arena *a, int pending) {
    return ptx(tlc_arena_printf(a, "cp.async.wait_group %d;", pending), "");
}

typedef enum { TMA_TILE, TMA_MULTICAST, TMA_IM2COL } tma_mode;

/* cp.async.bulk.tensor of a `rank`-d box; the 16-bit operands after the
 * mbarrier (the multicast mask, the im2col offsets) come as u32 operands
 * and are narrowed first. */
static tlc_ptx tma_load(tlc_arena *a, int rank, tma_mode mode) {
    int n16 = mode == TMA_MULTICAST ? 1 : mode == TMA_IM2COL ? rank - 2 : 0;
    tlc_strbuf text, cons, narrow;
    tlc_sb_init(&text);
    tlc_sb_init(&cons);
    tlc_sb_init(&narrow);
    for (int o = 0; o < n16; o++) {
        if (mode == TMA_MULTICAST) tlc_sb_puts(&narrow, "tlc_m");
        else tlc_sb_printf(&narrow, "%stlc_o%d", o ? ", " : "", o);
    }
    if (n16) {
        tlc_sb_printf(&text, "{\n\t.reg .b16 %s;\n\t", mode == TMA_MULTICAST ? "tlc_m" : "tlc_o<3>");
        for (int o = 0; o < n16; o++) {
            if (mode == TMA_MULTICAST) tlc_sb_printf(&text, "cvt.u16.u32 tlc_m, $%d;\n\t", 3 + rank);
            else tlc_sb_printf(&text, "cvt.u16.u32 tlc_o%d, $%d;\n\t", o, 3 + rank + o);
        }
    }
    tlc_sb_printf(&text, "cp.async.bulk.tensor.%dd.shared::cluster.global%s.mbarrier::complete_tx::bytes%s [$0], [$1, {",
                  rank, mode == TMA_IM2COL ? ".im2col" : "", mode == TMA_MULTICAST ? ".multicast::cluster" : "");
    tlc_sb_puts(&cons, "r,l");
    for (int d = 0; d < rank; d++) {
        tlc_sb_printf(&text, "%s$%d", d ? ", " : "", 2 + d);
        tlc_sb_puts(&cons, ",r");
    }
    tlc_sb_printf(&text, "}], [$%d]", 2 + rank);
    tlc_sb_puts(&cons, ",r");
    if (mode == TMA_MULTICAST) tlc_sb_printf(&text, ", %s", tlc_sb_cstr(&narrow));
    if (mode == TMA_IM2COL) tlc_sb_printf(&text, ", {%s}", tlc_sb_cstr(&narrow));
    tlc_sb_putc(&text, ';');
    for (int o = 0; o < n16; o++) tlc_sb_puts(&cons, ",r");
    if (n16) tlc_sb_puts(&text, "\n\t}");
    tlc_ptx r = ptx(tlc_arena_strdup(a, tlc_sb_cstr(&text)), tlc_arena_strdup(a, tlc_sb_cstr(&cons)));
    tlc_sb_free(&text);
    tlc_sb_free(&cons);
    tlc_sb_free(&narrow);
    return r;
}

tlc_ptx tlc_ptx_tma_load(tlc_arena *a, int rank) { return tma_load(a, rank, TMA_TILE); }
tlc_ptx tlc_ptx_tma_load_multicast(tlc_arena *a, int rank) { return tma_load(a, rank, TMA_MULTICAST); }
tlc_ptx tlc_ptx_tma_load_im2col(tlc_arena *a, int rank) { return tma_load(a, rank, TMA_IM2COL); }

tlc_ptx tlc_ptx_setmaxnreg(tlc_arena *a, bool increase, int regs) {
    return ptx(tlc_arena_printf(a, "setmaxnreg.%s.sync.aligned.u32 %d;", increase ? "inc" : "dec", regs), "");
}

tlc_ptx tlc_ptx_bar_arrive(tlc_arena *a, int id, int nthreads) {
    return ptx(tlc_arena_printf(a, "bar.arrive %d, %d;", id, nthreads), "");
}

tlc_ptx tlc_ptx_ldmatrix(int num, bool trans) {
    if (num == 4)
        return trans ? ptx("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r")
                     : ptx("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r");
    return trans ? ptx("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {$0, $1}, [$2];", "=r,=r,r")
                 : ptx("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {$0, $1}, [$2];", "=r,=r,r");
}

tlc_ptx tlc_ptx_mma_m16n8k16(bool bf16, bool f16_acc) {
    static const char cons[] = "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3";
    if (f16_acc)
        return ptx("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {$0, $1}, {$2, $3, $4, $5}, {$6, $7}, {$8, $9};",
                   "=r,=r,r,r,r,r,r,r,0,1");
    return bf16 ? ptx("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
                      "{$8, $9}, {$10, $11, $12, $13};",
                      cons)
                : ptx("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
                      "{$8, $9}, {$10, $11, $12, $13};",
                      cons);
}

tlc_ptx tlc_ptx_mma_m16n8k32_fp8(bool e5m2) {
    return e5m2 ? ptx("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
                      "{$8, $9}, {$10, $11, $12, $13};",
                      "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3")
                : ptx("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
                      "{$8, $9}, {$10, $11, $12, $13};",
                      "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3");
}

tlc_ptx tlc_ptx_mma_m16n8k8_tf32(void) {
    return ptx("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
               "{$8, $9}, {$10, $11, $12, $13};",
               "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3");
}

tlc_ptx tlc_ptx_mma_m16n8k32_s8(void) {
    return ptx("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, "
               "{$8, $9}, {$10, $11, $12, $13};",
               "=r,=r,=r,=r,r,r,r,r,r,r,0,1,2,3");
}

/* A chain of wgmma m64nNk16 (k32: 8-bit types, k8: tf32) instructions in one asm statement. Operands:
 * every group's accumulator outputs (n/2 f32, or n/4 b32 of two halves,
 * per group), then each instruction's A (a shared-memory descriptor, or
 * four b32 registers) and B descriptor, then the accumulator inputs tied to
 * the outputs. */
tlc_ptx tlc_ptx_wgmma_chain(tlc_arena *a, const tlc_wgmma_shape *w, int ninst, const int *group) {
    bool f16_acc = strcmp(w->acc, "f16") == 0;
    int nregs = f16_acc ? w->n / 4 : w->n / 2, nin = w->a_regs ? 5 : 2, ngroups = 0;
    for (int q = 0; q < ninst; q++)
        if (group[q] + 1 > ngroups) ngroups = group[q] + 1;
    int nouts = ngroups * nregs;
    tlc_strbuf text, cons;
    tlc_sb_init(&text);
    tlc_sb_init(&cons);
    /* 8-bit operands: k32, tf32: k8 (32 bytes a row, as k16 of 16-bit
     * ones), K-major only, so the instruction takes no transpose immediates */
    bool tf32 = strcmp(w->ty, "tf32") == 0;
    bool s8 = strcmp(w->ty, "s8") == 0;
    bool byte_ty = strcmp(w->ty, "e4m3") == 0 || strcmp(w->ty, "e5m2") == 0 || s8 || tf32;
    for (int q = 0; q < ninst; q++) {
        int o = group[q] * nregs, in = nouts + q * nin;
        tlc_sb_printf(&text, "%swgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", q ? "\n\t" : "", w->n,
                      tf32 ? 8 : byte_ty ? 32 : 16, w->acc, w->ty, w->ty);
        for (int i = 0; i < nregs; i++) tlc_sb_printf(&text, "%s$%d", i ? ", " : "", o + i);
        if (w->a_regs) /* A's four registers, B's descriptor */
            tlc_sb_printf(&text, "}, {$%d, $%d, $%d, $%d}, $%d", in, in + 1, in + 2, in + 3, in + 4);
        else /* A's and B's descriptors */
            tlc_sb_printf(&text, "}, $%d, $%d", in, in + 1);
        if (s8) /* integer: scale-d only */
            tlc_sb_puts(&text, ", 1;");
        else if (byte_ty) /* scale-d, the scales of A and B */
            tlc_sb_puts(&text, ", 1, 1, 1;");
        else if (w->a_regs) /* and B's transpose */
            tlc_sb_printf(&text, ", 1, 1, 1, %d;", w->trans_b ? 1 : 0);
        else
            tlc_sb_printf(&text, ", 1, 1, 1, %d, %d;", w->trans_a ? 1 : 0, w->trans_b ? 1 : 0);
    }
    for (int i = 0; i < nouts; i++) tlc_sb_puts(&cons, f16_acc || strcmp(w->acc, "s32") == 0 ? "=r," : "=f,");
    for (int q = 0; q < ninst; q++) tlc_sb_printf(&cons, "%s%s", q ? "," : "", w->a_regs ? "r,r,r,r,l" : "l,l");
    for (int i = 0; i < nouts; i++) tlc_sb_printf(&cons, ",%d", i);
    tlc_ptx r = ptx(tlc_arena_strdup(a, tlc_sb_cstr(&text)), tlc_arena_strdup(a, tlc_sb_cstr(&cons)));
    tlc_sb_free(&text);
    tlc_sb_free(&cons);
    return r;
}

tlc_ptx tlc_ptx_wgmma_fence(void) { return ptx("wgmma.fence.sync.aligned;", ""); }

tlc_ptx tlc_ptx_griddepcontrol_wait(void) { return ptx("griddepcontrol.wait;", ""); }

tlc_ptx tlc_ptx_grid_sync(tlc_arena *a, const char *counter) {
    return ptx(tlc_arena_printf(a,
                                "{\n\t.reg .pred tlc_p;\n\t.reg .b32 tlc_old, tlc_now;\n\tfence.acq_rel.gpu;\n"
                                "\tatom.release.gpu.global.add.u32 tlc_old, [%s], $0;\n\tTLC_GRID${:uid}:\n"
                                "\tld.acquire.gpu.global.u32 tlc_now, [%s];\n\txor.b32 tlc_now, tlc_now, tlc_old;\n"
                                "\tsetp.lt.s32 tlc_p, tlc_now, 0;\n\t@!tlc_p bra TLC_GRID${:uid};\n"
                                "\tfence.acq_rel.gpu;\n\t}",
                                counter, counter),
               "r");
}

tlc_ptx tlc_ptx_griddepcontrol_launch_dependents(void) { return ptx("griddepcontrol.launch_dependents;", ""); }

tlc_ptx tlc_ptx_bulk_prefetch_l2(void) {
    /* the instruction takes 16-byte aligned addresses and sizes */
    return ptx("{\n\t.reg .b64 tlc_pfa, tlc_pfe;\n\t.reg .b32 tlc_pfs;\n\t.reg .pred tlc_pfp;\n"
               "\tand.b64 tlc_pfa, $0, -16;\n\tcvt.u64.u32 tlc_pfe, $1;\n\tadd.s64 tlc_pfe, tlc_pfe, $0;\n"
               "\tand.b64 tlc_pfe, tlc_pfe, -16;\n\tsub.s64 tlc_pfe, tlc_pfe, tlc_pfa;\n"
               "\tcvt.u32.u64 tlc_pfs, tlc_pfe;\n\tsetp.ne.u32 tlc_pfp, tlc_pfs, 0;\n"
               "\t@tlc_pfp cp.async.bulk.prefetch.L2.global [tlc_pfa], tlc_pfs;\n\t}",
               "l,r");
}

tlc_ptx tlc_ptx_wgmma_commit(void) { return ptx("wgmma.commit_group.sync.aligned;", ""); }

tlc_ptx tlc_ptx_wgmma_wait(tlc_arena *a, int pending) {
    return ptx(tlc_arena_printf(a, "wgmma.wait_group.sync.aligned %d;", pending), "");
}

tlc_ptx tlc_ptx_fence_proxy_async(void) { return ptx("fence.proxy.async.shared::cta;", ""); }

tlc_ptx tlc_ptx_stmatrix_x4(void) {
    return ptx("stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};", "r,r,r,r,r");
}

tlc_ptx tlc_ptx_st_shared_b32(void) { return ptx("st.shared.b32 [$0], $1;", "r,r"); }

tlc_ptx tlc_ptx_ld_shared_v4_b32(void) { return ptx("ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r"); }

tlc_ptx tlc_ptx_read_tid_x(void) { return ptx("mov.u32 $0, %tid.x;", "=r,r"); }

tlc_ptx tlc_ptx_bar_warp_sync(void) { return ptx("bar.warp.sync -1;", ""); }
