# MLA decode written as FlashMLA's schedule in TileLang
# (warp_specialize/example_warp_specialize_flashmla.py): two warpgroups take
# the KV pages in pairs, each scoring its own page while the other does,
# handing the running max and the rescale to each other and P through
# shared memory, each loading the half of the next pair's pages it has
# finished reading with T.tma_copy, on mbarriers, with the score gemms'
# k-steps left in flight (T.wgmma_gemm, T.wait_wgmma). tlc runs the branches
# as written (docs/language.md 11.9: T.tma_copy a TMA load whose bytes the
# branch's first thread adds to the barrier's phase). The kernel is the
# example's; the reference and the driver are written for this port.
import torch
import torch.nn.functional as F
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[6])
def flashattn(batch, heads, kv_head_num, seqlen_kv, dim, pe_dim, block_N, block_H, num_split):
    scale = (1.0 / (dim + pe_dim)) ** 0.5 * 1.44269504  # log2(e)
    dtype = T.float16
    accum_dtype = T.float32
    kv_group_num = heads // kv_head_num
    VALID_BLOCK_H = min(block_H, kv_group_num)
    assert kv_head_num == 1, "kv_head_num must be 1"
    h_dim = dim // 2
    # QK^T is split into K=64 tiles to be pipelined with TMA copy
    k_tile = pe_dim
    assert h_dim % k_tile == 0, "h_dim must be divisible by k_tile"
    num_k_tiles = h_dim // k_tile

    @T.prim_func
    def main_no_split(
        Q: T.Tensor([batch, heads, dim], dtype),
        Q_pe: T.Tensor([batch, heads, pe_dim], dtype),
        KV: T.Tensor([batch, seqlen_kv, kv_head_num, dim], dtype),
        K_pe: T.Tensor([batch, seqlen_kv, kv_head_num, pe_dim], dtype),
        glse: T.Tensor([batch, heads, num_split], dtype),
        Output_partial: T.Tensor([batch, heads, num_split, dim], dtype),
        Output: T.Tensor([batch, heads, dim], dtype),
    ):
        with T.Kernel(heads // min(block_H, kv_group_num), batch, threads=256) as (hid, bid):
            # smem_sQ
            Q_shared_l = T.alloc_shared([block_H, h_dim], dtype)
            Q_shared_r = T.alloc_shared([block_H, h_dim], dtype)
            Q_pe_shared = T.alloc_shared([block_H, pe_dim], dtype)
            Q_pe_local_0 = T.alloc_fragment([block_H, pe_dim], dtype)
            Q_pe_local_1 = T.alloc_fragment([block_H, pe_dim], dtype)

            # smem_sK0
            KV_shared_0_l = T.alloc_shared([block_N, h_dim], dtype)
            KV_shared_0_r = T.alloc_shared([block_N, h_dim], dtype)
            K_pe_shared_0 = T.alloc_shared([block_N, pe_dim], dtype)

            # smem_sK1
            KV_shared_1_l = T.alloc_shared([block_N, h_dim], dtype)
            KV_shared_1_r = T.alloc_shared([block_N, h_dim], dtype)
            K_pe_shared_1 = T.alloc_shared([block_N, pe_dim], dtype)

            # smem_sP0
            SP0_shared = T.alloc_shared([block_H, block_N], dtype)

            # smem_sP1 reuse Q_pe_shared
            SP1_shared = Q_pe_shared

            # smem_sM
            scores_max = T.alloc_shared([block_H], accum_dtype)

            # smem_sScale0
            scores_scale_0 = T.alloc_shared([block_H], accum_dtype)
            # smem_sScale1
            scores_scale_1 = T.alloc_shared([block_H], accum_dtype)

            logsum = T.alloc_shared([block_H], accum_dtype)

            O_shared_l = Q_shared_l
            O_shared_r = Q_shared_r

            acc_s_0 = T.alloc_fragment([block_H, block_N], accum_dtype)
            acc_s_0_cast = T.alloc_fragment([block_H, block_N], dtype)
            acc_s_1 = T.alloc_fragment([block_H, block_N], accum_dtype)
            acc_s_1_cast = T.alloc_fragment([block_H, block_N], dtype)
            sp0_cast = T.alloc_fragment([block_H, block_N], dtype)
            acc_o_l = T.alloc_fragment([block_H, h_dim], accum_dtype)
            acc_o_r = T.alloc_fragment([block_H, h_dim], accum_dtype)
            scores_max_0 = T.alloc_fragment([block_H], accum_dtype)
            scores_max_1 = T.alloc_fragment([block_H], accum_dtype)

            scores_max_prev_0 = T.alloc_fragment([block_H], accum_dtype)
            scores_max_prev_1 = T.alloc_fragment([block_H], accum_dtype)

            scores_sum_0 = T.alloc_fragment([block_H], accum_dtype)
            scores_sum_1 = T.alloc_fragment([block_H], accum_dtype)
            logsum_0 = T.alloc_fragment([block_H], accum_dtype)
            logsum_1 = T.alloc_fragment([block_H], accum_dtype)

            cur_kv_head = hid // (kv_group_num // block_H)

            # barriers_Q
            q_shared_ready_barrier = T.alloc_barrier(arrive_count=256)

            # barriers_K0
            kv_shared_0_l_is_ready = T.alloc_barrier(arrive_count=[128] * num_k_tiles)
            kv_shared_0_r_is_ready = T.alloc_barrier(arrive_count=[128] * num_k_tiles)
            kv_shared_0_pe_is_ready = T.alloc_barrier(arrive_count=128)
            # barriers_K1
            kv_shared_1_l_is_ready = T.alloc_barrier(arrive_count=[128] * num_k_tiles)
            kv_shared_1_r_is_ready = T.alloc_barrier(arrive_count=[128] * num_k_tiles)
            kv_shared_1_pe_is_ready = T.alloc_barrier(arrive_count=128)

            # redundant barriers
            score_max_0_ready_barrier = T.alloc_barrier(arrive_count=128)
            scale_1_ready_barrier = T.alloc_barrier(arrive_count=128)
            p0_1_1_ready_barrier = T.alloc_barrier(arrive_count=128)
            lse_0_ready_barrier = T.alloc_barrier(arrive_count=128)
            lse_1_ready_barrier = T.alloc_barrier(arrive_count=128)
            s_shared_ready_barrier = T.alloc_barrier(arrive_count=128)

            tx = T.get_thread_binding()

            T.tma_copy(Q[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, :h_dim], Q_shared_l, barrier=q_shared_ready_barrier)
            T.tma_copy(Q[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, h_dim:], Q_shared_r, barrier=q_shared_ready_barrier)
            T.tma_copy(Q_pe[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, :], Q_pe_shared, barrier=q_shared_ready_barrier)
            T.barrier_arrive(q_shared_ready_barrier)
            T.barrier_wait(q_shared_ready_barrier, 0)

            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = T.ceildiv(seqlen_kv, (block_N * 2))

            if tx < 128:
                T.copy(Q_pe_shared, Q_pe_local_0)
                T.fill(acc_o_l, 0)
                T.fill(logsum_0, 0)

                for j in T.unroll(num_k_tiles):
                    T.tma_copy(
                        KV[
                            bid,
                            block_N : 2 * block_N,
                            cur_kv_head,
                            j * k_tile : (j + 1) * k_tile,
                        ],
                        KV_shared_1_l[:, j * k_tile : (j + 1) * k_tile],
                        barrier=kv_shared_1_l_is_ready[j],
                    )
                    T.barrier_arrive(kv_shared_1_l_is_ready[j])

                for j in T.unroll(num_k_tiles):
                    T.tma_copy(
                        KV[
                            bid,
                            block_N : 2 * block_N,
                            cur_kv_head,
                            h_dim + j * k_tile : h_dim + (j + 1) * k_tile,
                        ],
                        KV_shared_1_r[:, j * k_tile : (j + 1) * k_tile],
                        barrier=kv_shared_1_r_is_ready[j],
                    )
                    T.barrier_arrive(kv_shared_1_r_is_ready[j])

                T.tma_copy(K_pe[bid, block_N : 2 * block_N, cur_kv_head, :], K_pe_shared_1, barrier=kv_shared_1_pe_is_ready)
                T.barrier_arrive(kv_shared_1_pe_is_ready)

                # Step 1. QK0 is rotated to the end of the loop to enable further overlapping, so here we need an extra QK in the prologue.
                for j in T.unroll(num_k_tiles):
                    T.barrier_wait(kv_shared_0_l_is_ready[j], 0)
                    T.wgmma_gemm(
                        Q_shared_l[:, j * k_tile : (j + 1) * k_tile],
                        KV_shared_0_l[:, j * k_tile : (j + 1) * k_tile],
                        acc_s_0,
                        transpose_B=True,
                        clear_accum=(j == 0),
                    )
                for j in T.unroll(num_k_tiles):
                    T.barrier_wait(kv_shared_0_r_is_ready[j], 0)
                    T.wgmma_gemm(
                        Q_shared_r[:, j * k_tile : (j + 1) * k_tile],
                        KV_shared_0_r[:, j * k_tile : (j + 1) * k_tile],
                        acc_s_0,
                        transpose_B=True,
                    )
                T.barrier_wait(kv_shared_0_pe_is_ready, 0)
                T.wgmma_gemm(Q_pe_local_0, K_pe_shared_0, acc_s_0, transpose_B=True)
                T.wait_wgmma(0)

                for k in T.serial(loop_range):
                    # Step 3.
                    T.copy(scores_max, scores_max_0)
                    T.copy(scores_max_0, scores_max_prev_0)
                    T.fill(scores_max_0, -T.infinity(accum_dtype))
                    T.reduce_max(acc_s_0, scores_max_0, dim=1, clear=False)
                    T.copy(scores_max_0, scores_max)

                    # Step 4.
                    for i, j in T.Parallel(block_H, block_N):
                        acc_s_0[i, j] = T.exp2(acc_s_0[i, j] * scale - scores_max_0[i] * scale)
                    for i in T.Parallel(block_H):
                        scores_scale_0[i] = T.exp2(scores_max_prev_0[i] * scale - scores_max_0[i] * scale)

                    T.reduce_sum(acc_s_0, scores_sum_0, dim=1)

                    # Step 5.
                    T.copy(acc_s_0, acc_s_0_cast)

                    for i, j in T.Parallel(block_H, h_dim):
                        acc_o_l[i, j] *= scores_scale_0[i]

                    for i in T.Parallel(block_H):
                        logsum_0[i] = logsum_0[i] * scores_scale_0[i] + scores_sum_0[i]

                    T.barrier_arrive(score_max_0_ready_barrier)

                    # Step 6.
                    T.wgmma_gemm(acc_s_0_cast, KV_shared_0_l, acc_o_l)
                    T.wait_wgmma(0)

                    T.barrier_wait(scale_1_ready_barrier, k % 2)

                    if k < loop_range - 1:
                        for j in T.unroll(num_k_tiles):
                            T.tma_copy(
                                KV[
                                    bid,
                                    (2 * k + 2) * block_N : (2 * k + 3) * block_N,
                                    cur_kv_head,
                                    j * k_tile : (j + 1) * k_tile,
                                ],
                                KV_shared_0_l[:, j * k_tile : (j + 1) * k_tile],
                                barrier=kv_shared_0_l_is_ready[j],
                            )
                            T.barrier_arrive(kv_shared_0_l_is_ready[j])

                    # Step 11.
                    for i, j in T.Parallel(block_H, block_N):
                        sp0_cast[i, j] = acc_s_0[i, j] * scores_scale_1[i]
                    T.copy(sp0_cast, SP0_shared)
                    # Currently InjectFenceProxy cannot infer from warp specialization code that this is a RAW dependency with another warpgroup. We need to fence the async proxy so that GMMA knows that we have written to SMEM.
                    T.fence_proxy_async()

                    T.barrier_arrive(p0_1_1_ready_barrier)

                    # Step 13.
                    for i, j in T.Parallel(block_H, h_dim):
                        acc_o_l[i, j] *= scores_scale_1[i]
                    for i in T.Parallel(block_H):
                        logsum_0[i] = logsum_0[i] * scores_scale_1[i]
                    T.barrier_wait(s_shared_ready_barrier, k % 2)

                    # Step 14.
                    T.wgmma_gemm(SP1_shared, KV_shared_1_l, acc_o_l)

                    # Step 1. QK0 rotated to the end of the loop, and we insert the TMA loading for next KV_shared_1_l in the middle of the QK to hide TMA issue latency.
                    if k < loop_range - 1:
                        # Half of next QK0
                        for j in T.unroll(num_k_tiles):
                            T.barrier_wait(kv_shared_0_l_is_ready[j], (k + 1) % 2)
                            T.wgmma_gemm(
                                Q_shared_l[:, j * k_tile : (j + 1) * k_tile],
                                KV_shared_0_l[:, j * k_tile : (j + 1) * k_tile],
                                acc_s_0,
                                transpose_B=True,
                                clear_accum=(j == 0),
                            )
                        # Keep the half of QK0 in-flight, and only wait for last PV1
                        T.wait_wgmma(num_k_tiles)
                        for j in T.unroll(num_k_tiles):
                            T.tma_copy(
                                KV[
                                    bid,
                                    (2 * k + 3) * block_N : (2 * k + 4) * block_N,
                                    cur_kv_head,
                                    j * k_tile : (j + 1) * k_tile,
                                ],
                                KV_shared_1_l[:, j * k_tile : (j + 1) * k_tile],
                                barrier=kv_shared_1_l_is_ready[j],
                            )
                            T.barrier_arrive(kv_shared_1_l_is_ready[j])
                        T.tma_copy(
                            K_pe[bid, (2 * k + 3) * block_N : (2 * k + 4) * block_N, cur_kv_head, :],
                            K_pe_shared_1,
                            barrier=kv_shared_1_pe_is_ready,
                        )
                        T.barrier_arrive(kv_shared_1_pe_is_ready)
                        # Another half of QK0 and QPE0
                        for j in T.unroll(num_k_tiles):
                            T.barrier_wait(kv_shared_0_r_is_ready[j], (k + 1) % 2)
                            T.wgmma_gemm(
                                Q_shared_r[:, j * k_tile : (j + 1) * k_tile],
                                KV_shared_0_r[:, j * k_tile : (j + 1) * k_tile],
                                acc_s_0,
                                transpose_B=True,
                            )
                        T.barrier_wait(kv_shared_0_pe_is_ready, (k + 1) % 2)
                        T.wgmma_gemm(Q_pe_local_0, K_pe_shared_0, acc_s_0, transpose_B=True)

                    # Unconditional wait, so that ptxas knows the lifetime of the accumulators end here in the loop.
                    T.wait_wgmma(0)

                T.copy(logsum_0, logsum)
                T.barrier_arrive(lse_0_ready_barrier)
                T.barrier_wait(lse_1_ready_barrier, 0)
                for i, j in T.Parallel(block_H, h_dim):
                    acc_o_l[i, j] /= logsum[i]
                T.copy(acc_o_l, O_shared_l)
                T.copy(O_shared_l, Output[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, :h_dim])

            else:
                T.copy(Q_pe_shared, Q_pe_local_1)
                T.fill(acc_o_r, 0)
                T.fill(logsum_1, 0)

                for j in T.unroll(num_k_tiles):
                    T.tma_copy(
                        KV[bid, :block_N, cur_kv_head, j * k_tile : (j + 1) * k_tile],
                        KV_shared_0_l[:, j * k_tile : (j + 1) * k_tile],
                        barrier=kv_shared_0_l_is_ready[j],
                    )
                    T.barrier_arrive(kv_shared_0_l_is_ready[j])
                for j in T.unroll(num_k_tiles):
                    T.tma_copy(
                        KV[
                            bid,
                            :block_N,
                            cur_kv_head,
                            h_dim + j * k_tile : h_dim + (j + 1) * k_tile,
                        ],
                        KV_shared_0_r[:, j * k_tile : (j + 1) * k_tile],
                        barrier=kv_shared_0_r_is_ready[j],
                    )
                    T.barrier_arrive(kv_shared_0_r_is_ready[j])
                T.tma_copy(K_pe[bid, :block_N, cur_kv_head, :], K_pe_shared_0, barrier=kv_shared_0_pe_is_ready)
                T.barrier_arrive(kv_shared_0_pe_is_ready)

                # Step 2. QK1 is rotated to the end of the loop to enable further overlapping, so here we need an extra QK in the prologue.
                for j in T.unroll(num_k_tiles):
                    T.barrier_wait(kv_shared_1_l_is_ready[j], 0)
                    T.wgmma_gemm(
                        Q_shared_l[:, j * k_tile : (j + 1) * k_tile],
                        KV_shared_1_l[:, j * k_tile : (j + 1) * k_tile],
                        acc_s_1,
                        transpose_B=True,
                        clear_accum=(j == 0),
                    )
                for j in T.unroll(num_k_tiles):
                    T.barrier_wait(kv_shared_1_r_is_ready[j], 0)
                    T.wgmma_gemm(
                        Q_shared_r[:, j * k_tile : (j + 1) * k_tile],
                        KV_shared_1_r[:, j * k_tile : (j + 1) * k_tile],
                        acc_s_1,
                        transpose_B=True,
                    )
                T.barrier_wait(kv_shared_1_pe_is_ready, 0)
                T.wgmma_gemm(Q_pe_local_1, K_pe_shared_1, acc_s_1, transpose_B=True)
                T.wait_wgmma(0)

                for k in T.serial(loop_range):
                    # Step 7.
                    T.barrier_wait(score_max_0_ready_barrier, k % 2)

                    T.copy(scores_max, scores_max_prev_1)
                    T.fill(scores_max_1, -T.infinity(accum_dtype))
                    T.reduce_max(acc_s_1, scores_max_1, dim=1, clear=False)
                    T.copy(scores_max_1, scores_max)

                    for i in T.Parallel(block_H):
                        scores_scale_1[i] = T.exp2(scores_max_prev_1[i] * scale - scores_max_1[i] * scale)

                    # Step 8.
                    for i, j in T.Parallel(block_H, block_N):
                        acc_s_1[i, j] = T.exp2(acc_s_1[i, j] * scale - scores_max_1[i] * scale)

                    # Step 9.
                    T.reduce_sum(acc_s_1, scores_sum_1, dim=1)

                    for i, j in T.Parallel(block_H, h_dim):
                        acc_o_r[i, j] = acc_o_r[i, j] * (scores_scale_0[i] * scores_scale_1[i])

                    for i in T.Parallel(block_H):
                        logsum_1[i] = logsum_1[i] * scores_scale_1[i] * scores_scale_0[i] + scores_sum_1[i]

                    T.barrier_arrive(scale_1_ready_barrier)

                    # Step 10. compute O1 with KV_shared_1_rd
                    T.copy(acc_s_1, acc_s_1_cast)
                    T.copy(acc_s_1_cast, SP1_shared)
                    T.wgmma_gemm(acc_s_1_cast, KV_shared_1_r, acc_o_r)
                    T.barrier_arrive(s_shared_ready_barrier)

                    # Step 12.
                    T.barrier_wait(p0_1_1_ready_barrier, k % 2)
                    T.wgmma_gemm(SP0_shared, KV_shared_0_r, acc_o_r)

                    if k < loop_range - 1:
                        T.wait_wgmma(1)
                        for j in T.unroll(num_k_tiles):
                            T.tma_copy(
                                KV[
                                    bid,
                                    (2 * k + 3) * block_N : (2 * k + 4) * block_N,
                                    cur_kv_head,
                                    h_dim + j * k_tile : h_dim + (j + 1) * k_tile,
                                ],
                                KV_shared_1_r[:, j * k_tile : (j + 1) * k_tile],
                                barrier=kv_shared_1_r_is_ready[j],
                            )
                            T.barrier_arrive(kv_shared_1_r_is_ready[j])
                        T.wait_wgmma(0)
                        for j in T.unroll(num_k_tiles):
                            T.tma_copy(
                                KV[
                                    bid,
                                    (2 * k + 2) * block_N : (2 * k + 3) * block_N,
                                    cur_kv_head,
                                    h_dim + j * k_tile : h_dim + (j + 1) * k_tile,
                                ],
                                KV_shared_0_r[:, j * k_tile : (j + 1) * k_tile],
                                barrier=kv_shared_0_r_is_ready[j],
                            )
                            T.barrier_arrive(kv_shared_0_r_is_ready[j])
                        T.tma_copy(
                            K_pe[bid, (2 * k + 2) * block_N : (2 * k + 3) * block_N, cur_kv_head, :],
                            K_pe_shared_0,
                            barrier=kv_shared_0_pe_is_ready,
                        )
                        T.barrier_arrive(kv_shared_0_pe_is_ready)

                        # Step 2. Rotated QK1.
                        for j in T.unroll(num_k_tiles):
                            T.barrier_wait(kv_shared_1_l_is_ready[j], (k + 1) % 2)
                            T.wgmma_gemm(
                                Q_shared_l[:, j * k_tile : (j + 1) * k_tile],
                                KV_shared_1_l[:, j * k_tile : (j + 1) * k_tile],
                                acc_s_1,
                                transpose_B=True,
                                clear_accum=(j == 0),
                            )
                        for j in T.unroll(num_k_tiles):
                            T.barrier_wait(kv_shared_1_r_is_ready[j], (k + 1) % 2)
                            T.wgmma_gemm(
                                Q_shared_r[:, j * k_tile : (j + 1) * k_tile],
                                KV_shared_1_r[:, j * k_tile : (j + 1) * k_tile],
                                acc_s_1,
                                transpose_B=True,
                            )
                        T.barrier_wait(kv_shared_1_pe_is_ready, (k + 1) % 2)
                        T.wgmma_gemm(Q_pe_local_1, K_pe_shared_1, acc_s_1, transpose_B=True)

                    # Unconditional. Same as above.
                    T.wait_wgmma(0)

                T.barrier_wait(lse_0_ready_barrier, 0)
                for i in T.Parallel(block_H):
                    logsum[i] += logsum_1[i]
                T.barrier_arrive(lse_1_ready_barrier)
                for i, j in T.Parallel(block_H, h_dim):
                    acc_o_r[i, j] /= logsum[i]
                T.copy(acc_o_r, O_shared_r)
                T.copy(O_shared_r, Output[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, h_dim:])

    return main_no_split


def ref_program(q, q_pe, kv, k_pe):
    # q [b, h, dim], q_pe [b, h, pe_dim], kv [b, s, 1, dim], k_pe [b, s, 1, pe_dim]
    dim, pe_dim = q.shape[-1], q_pe.shape[-1]
    scores = torch.einsum("bhd,bsd->bhs", q.double(), kv[:, :, 0].double())
    scores += torch.einsum("bhd,bsd->bhs", q_pe.double(), k_pe[:, :, 0].double())
    p = F.softmax(scores / (dim + pe_dim) ** 0.5, dim=-1)
    return torch.einsum("bhs,bsd->bhd", p, kv[:, :, 0].double())


def main(batch=4, heads=128, kv_ctx=1024, dim=512, pe_dim=64):
    kernel = flashattn(batch, heads, 1, kv_ctx, dim, pe_dim, 64, 64, 1)
    q, q_pe = torch.randn(batch, heads, dim).half().cuda(), torch.randn(batch, heads, pe_dim).half().cuda()
    kv, k_pe = torch.randn(batch, kv_ctx, 1, dim).half().cuda(), torch.randn(batch, kv_ctx, 1, pe_dim).half().cuda()
    glse = torch.empty(batch, heads, 1).half().cuda()
    partial = torch.empty(batch, heads, 1, dim).half().cuda()
    out = kernel(q, q_pe, kv, k_pe, glse, partial)
    torch.testing.assert_close(out.double(), ref_program(q, q_pe, kv, k_pe), rtol=1e-2, atol=1e-2)


if __name__ == "__main__":
    main()
