# DeepSeek MLA decode written as TileLang's hand-pipelined warpgroups
# (deepseek_mla/example_mla_decode_ws.py): 384 threads split on the thread
# index into two consumer warpgroups (each half of the output columns; the
# first computes the scores and the softmax and hands P and the rescale to
# the second through shared memory) and a producer warpgroup that loads the
# KV pages with per-thread cp.async, the three waiting for each other on
# mbarriers, with T.wgmma_gemm / T.wait_wgmma and T.set_max_nreg. tlc runs
# the branches as written (docs/language.md 11.9). The kernel is the
# example's; the reference and the driver are written for this port.
import torch
import torch.nn.functional as F
import tilelang
import tilelang.language as T


@tilelang.jit(
    out_idx=[6],
    pass_configs={
        tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True,
    },
    compile_flags=[
        "-O3",
        "-Wno-deprecated-declarations",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_HALF2_OPERATORS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "--ptxas-options=-v,--register-usage-level=10",
        "-DNDEBUG",
    ],
)
def flashattn(batch, heads, kv_head_num, seqlen_kv, dim, pe_dim, block_N, block_H, num_split, softmax_scale):
    sm_scale = float(softmax_scale * 1.44269504)  # log2(e)
    dtype = T.float16
    accum_dtype = T.float32
    kv_group_num = heads // kv_head_num
    VALID_BLOCK_H = min(block_H, kv_group_num)
    num_stages = 2
    assert kv_head_num == 1, "kv_head_num must be 1"

    @T.prim_func
    def main_split(
        Q: T.Tensor([batch, heads, dim], dtype),
        Q_pe: T.Tensor([batch, heads, pe_dim], dtype),
        KV: T.Tensor([batch, seqlen_kv, kv_head_num, dim], dtype),
        K_pe: T.Tensor([batch, seqlen_kv, kv_head_num, pe_dim], dtype),
        glse: T.Tensor([batch, heads, num_split], dtype),
        Output_partial: T.Tensor([batch, heads, num_split, dim], dtype),
        Output: T.Tensor([batch, heads, dim], dtype),
    ):
        # flash_attn_split
        with T.Kernel(batch, heads // min(block_H, kv_group_num), num_split, threads=384) as (bid, hid, bz):
            Q_shared = T.alloc_shared([block_H, dim], dtype)
            Q_tail_shared = T.alloc_shared([block_H, pe_dim], dtype)
            KV_shared = T.alloc_shared([num_stages, block_N, dim], dtype)
            K_tail_shared = T.alloc_shared([num_stages, block_N, pe_dim], dtype)
            O_shared = Q_shared

            acc_o_l = T.alloc_fragment([block_H, dim // 2], accum_dtype)
            acc_o_r = T.alloc_fragment([block_H, dim // 2], accum_dtype)
            acc_s = T.alloc_fragment([block_H, block_N], accum_dtype)
            S_shared = T.alloc_shared([block_H, block_N], dtype)
            sumexp = T.alloc_fragment([block_H], accum_dtype)
            sum_exp_shared = T.alloc_shared([block_H], accum_dtype)
            sumexp_i = T.alloc_fragment([block_H], accum_dtype)
            alpha_shared = T.alloc_shared([block_H], accum_dtype, scope="shared")
            alpha_local = T.alloc_fragment([block_H], accum_dtype)
            m_i = T.alloc_fragment([block_H], accum_dtype)
            m_i_prev = T.alloc_fragment([block_H], accum_dtype)

            bar_q = T.alloc_barrier(arrive_count=384)
            bar_k_ready = T.alloc_barrier(arrive_count=[128] * num_stages)
            bar_k_free = T.alloc_barrier(arrive_count=[256] * num_stages)
            bar_sScale_and_sS_ready = T.alloc_barrier(arrive_count=256)
            bar_sScale_and_sS_free = T.alloc_barrier(arrive_count=256)

            cur_kv_head = hid // (kv_group_num // block_H)
            NI = T.ceildiv((seqlen_kv // num_split), block_N)

            tx = T.get_thread_binding()

            T.copy(Q[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, :], Q_shared)
            T.copy(Q_pe[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, :], Q_tail_shared)

            T.barrier_arrive(bar_q)

            if tx < 128:
                T.set_max_nreg(240, 1)
                T.fill(sumexp, 0)
                T.fill(m_i, -(2**30))  # avoid -inf - inf to cause nan
                T.fill(acc_o_l, 0)
                T.barrier_wait(bar_q, 0)

                for i_i in T.serial(T.ceildiv(NI, num_stages)):
                    for stage in T.unroll(num_stages):
                        T.barrier_wait(bar_k_ready[stage], (i_i & 1))

                        T.clear(acc_s)
                        T.wgmma_gemm(Q_shared[:, : dim // 2], KV_shared[stage, :, : dim // 2], acc_s, transpose_B=True)
                        T.wgmma_gemm(Q_shared[:, dim // 2 :], KV_shared[stage, :, dim // 2 :], acc_s, transpose_B=True)
                        T.wgmma_gemm(Q_tail_shared, K_tail_shared[stage, :, :], acc_s, transpose_B=True)

                        T.wait_wgmma(0)

                        if i_i != 0 or stage != 0:
                            T.barrier_arrive(bar_sScale_and_sS_free)
                            T.barrier_wait(bar_sScale_and_sS_free, ((i_i * num_stages + stage) & 1) ^ 1)

                        T.copy(m_i, m_i_prev)
                        T.reduce_max(acc_s, m_i, dim=1, clear=False)
                        for h_i in T.Parallel(block_H):
                            m_i[h_i] = T.max(m_i[h_i], m_i_prev[h_i])
                        for h_i in T.Parallel(block_H):
                            alpha_local[h_i] = T.exp2((m_i_prev[h_i] - m_i[h_i]) * sm_scale)
                        for h_i, bi_i in T.Parallel(block_H, block_N):
                            acc_s[h_i, bi_i] = T.exp2(acc_s[h_i, bi_i] * sm_scale - m_i[h_i] * sm_scale)
                        T.reduce_sum(acc_s, sumexp_i, dim=1)  # is this a accumulate operator?
                        for h_i in T.Parallel(block_H):
                            sumexp[h_i] = sumexp[h_i] * alpha_local[h_i] + sumexp_i[h_i]
                        for h_i, d_i in T.Parallel(block_H, dim // 2):
                            acc_o_l[h_i, d_i] *= alpha_local[h_i]
                        T.copy(alpha_local, alpha_shared)

                        T.copy(acc_s, S_shared)
                        T.gemm(S_shared, KV_shared[stage, :, : dim // 2], acc_o_l)

                        T.barrier_arrive(bar_sScale_and_sS_ready)
                        T.barrier_arrive(bar_k_free[stage])

                # Rescale
                for h_i in T.Parallel(block_H):
                    sum_exp_shared[h_i] = sumexp[h_i]
                for h_i, d_i in T.Parallel(block_H, dim // 2):
                    acc_o_l[h_i, d_i] /= sumexp[h_i]
                for h_i in T.Parallel(block_H):
                    sumexp[h_i] = T.log2(sumexp[h_i]) + m_i[h_i] * sm_scale
                T.copy(acc_o_l, O_shared[:, : dim // 2])
                T.copy(O_shared[:, : dim // 2], Output_partial[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, bz, 0 : dim // 2])
                T.copy(sumexp, glse[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, bz])

            elif tx >= 128 and tx < 256:
                T.set_max_nreg(168, 1)
                T.fill(acc_o_r, 0)
                for i_i in T.serial(T.ceildiv(NI, num_stages)):
                    for stage in T.unroll(num_stages):
                        T.barrier_arrive(bar_sScale_and_sS_ready)
                        T.barrier_wait(bar_sScale_and_sS_ready, ((i_i * num_stages + stage) & 1))
                        for h_i, d_i in T.Parallel(block_H, dim // 2):
                            acc_o_r[h_i, d_i] *= alpha_shared[h_i]
                        T.gemm(S_shared, KV_shared[stage, :, dim // 2 :], acc_o_r)
                        T.barrier_arrive(bar_k_free[stage])
                        if stage != num_stages - 1 or i_i != T.ceildiv(NI, num_stages) - 1:
                            T.barrier_arrive(bar_sScale_and_sS_free)

                # Rescale
                for h_i, d_i in T.Parallel(block_H, dim // 2):
                    acc_o_r[h_i, d_i] /= sum_exp_shared[h_i]

                T.copy(acc_o_r, O_shared[:, dim // 2 :])
                T.copy(O_shared[:, dim // 2 :], Output_partial[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, bz, dim // 2 : dim])

            elif tx >= 256:
                # producer
                T.set_max_nreg(80, 0)
                for i_i in T.serial(T.ceildiv(NI, num_stages)):
                    for stage in T.unroll(num_stages):
                        T.barrier_wait(bar_k_free[stage], ((i_i & 1) ^ 1))
                        for r in T.serial(4):
                            kv_indices = (seqlen_kv // num_split) * bz + (i_i * num_stages + stage) * block_N + r * 16 + (tx - 256) // 8
                            for u in T.serial(dim // 64):
                                T.ptx_cp_async(
                                    T.access_ptr(
                                        KV_shared[
                                            stage,
                                            r * 16 + (tx - 256) // 8,
                                            64 * u + (tx - 256) % 8 * 8,
                                        ],
                                        "w",
                                        8,
                                    ),
                                    T.access_ptr(KV[bid, kv_indices, cur_kv_head, 64 * u + (tx - 256) % 8 * 8], "r", 8),
                                    8,
                                )
                            T.ptx_cp_async(
                                T.access_ptr(
                                    K_tail_shared[stage, r * 16 + (tx - 256) // 8, (tx - 256) % 8 * 8],
                                    "w",
                                    8,
                                ),
                                T.access_ptr(K_pe[bid, kv_indices, cur_kv_head, (tx - 256) % 8 * 8], "r", 8),
                                8,
                            )
                        T.cp_async_barrier_noinc(bar_k_ready[stage])

        # combine
        with T.Kernel(heads, batch, threads=128) as (hid, bz):
            po_local = T.alloc_fragment([dim], dtype)
            o_accum_local = T.alloc_fragment([dim], accum_dtype)
            lse_local_split = T.alloc_var(accum_dtype)
            lse_logsum_local = T.alloc_var(accum_dtype)
            lse_max_local = T.alloc_var(accum_dtype)
            scale_local = T.alloc_var(accum_dtype)

            T.clear(lse_logsum_local)
            T.clear(o_accum_local)
            lse_max_local = -T.infinity(accum_dtype)
            for k in T.serial(num_split):
                lse_max_local = T.max(lse_max_local, glse[bz, hid, k])
            for k in T.Pipelined(num_split, num_stages=1):
                lse_local_split = glse[bz, hid, k]
                lse_logsum_local += T.exp2(lse_local_split - lse_max_local)
            lse_logsum_local = T.log2(lse_logsum_local) + lse_max_local
            for k in T.serial(num_split):
                for i in T.Parallel(dim):
                    po_local[i] = Output_partial[bz, hid, k, i]
                lse_local_split = glse[bz, hid, k]
                scale_local = T.exp2(lse_local_split - lse_logsum_local)
                for i in T.Parallel(dim):
                    o_accum_local[i] += po_local[i] * scale_local
            for i in T.Parallel(dim):
                Output[bz, hid, i] = o_accum_local[i]

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
        with T.Kernel(heads // min(block_H, kv_group_num), batch, threads=384) as (hid, bid):
            Q_shared = T.alloc_shared([block_H, dim], dtype)
            Q_tail_shared = T.alloc_shared([block_H, pe_dim], dtype)
            KV_shared = T.alloc_shared([num_stages, block_N, dim], dtype)
            K_tail_shared = T.alloc_shared([num_stages, block_N, pe_dim], dtype)
            O_shared = Q_shared

            acc_o_l = T.alloc_fragment([block_H, dim // 2], accum_dtype)
            acc_o_r = T.alloc_fragment([block_H, dim // 2], accum_dtype)
            acc_s = T.alloc_fragment([block_H, block_N], accum_dtype)
            S_shared = T.alloc_shared([block_H, block_N], dtype)
            sumexp = T.alloc_fragment([block_H], accum_dtype)
            sum_exp_shared = T.alloc_shared([block_H], accum_dtype)
            sumexp_i = T.alloc_fragment([block_H], accum_dtype)
            alpha_shared = T.alloc_shared([block_H], accum_dtype, scope="shared")
            alpha_local = T.alloc_fragment([block_H], accum_dtype)
            m_i = T.alloc_fragment([block_H], accum_dtype)
            m_i_prev = T.alloc_fragment([block_H], accum_dtype)

            bar_q = T.alloc_barrier(arrive_count=384)
            bar_k_ready = T.alloc_barrier(arrive_count=[128] * num_stages)
            bar_k_free = T.alloc_barrier(arrive_count=[256] * num_stages)
            bar_sScale_and_sS_ready = T.alloc_barrier(arrive_count=256)
            bar_sScale_and_sS_free = T.alloc_barrier(arrive_count=256)

            cur_kv_head = hid // (kv_group_num // block_H)
            NI = T.ceildiv((seqlen_kv // num_split), block_N)

            tx = T.get_thread_binding()

            T.copy(Q[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, :], Q_shared)
            T.copy(Q_pe[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, :], Q_tail_shared)

            T.barrier_arrive(bar_q)

            if tx < 128:
                T.set_max_nreg(240, 1)
                T.fill(sumexp, 0)
                T.fill(m_i, -(2**30))  # avoid -inf - inf to cause nan
                T.fill(acc_o_l, 0)
                T.barrier_wait(bar_q, 0)

                for i_i in T.serial(T.ceildiv(NI, num_stages)):
                    for stage in T.unroll(num_stages):
                        T.barrier_wait(bar_k_ready[stage], (i_i & 1))

                        T.clear(acc_s)
                        T.wgmma_gemm(Q_shared[:, : dim // 2], KV_shared[stage, :, : dim // 2], acc_s, transpose_B=True)
                        T.wgmma_gemm(Q_shared[:, dim // 2 :], KV_shared[stage, :, dim // 2 :], acc_s, transpose_B=True)
                        T.wgmma_gemm(Q_tail_shared, K_tail_shared[stage, :, :], acc_s, transpose_B=True)

                        T.wait_wgmma(0)

                        if i_i != 0 or stage != 0:
                            T.barrier_arrive(bar_sScale_and_sS_free)
                            T.barrier_wait(bar_sScale_and_sS_free, ((i_i * num_stages + stage) & 1) ^ 1)

                        T.copy(m_i, m_i_prev)
                        T.reduce_max(acc_s, m_i, dim=1, clear=False)
                        for h_i in T.Parallel(block_H):
                            m_i[h_i] = T.max(m_i[h_i], m_i_prev[h_i])
                        for h_i in T.Parallel(block_H):
                            alpha_local[h_i] = T.exp2((m_i_prev[h_i] - m_i[h_i]) * sm_scale)
                        for h_i, bi_i in T.Parallel(block_H, block_N):
                            acc_s[h_i, bi_i] = T.exp2(acc_s[h_i, bi_i] * sm_scale - m_i[h_i] * sm_scale)
                        T.reduce_sum(acc_s, sumexp_i, dim=1)  # is this a accumulate operator?
                        for h_i in T.Parallel(block_H):
                            sumexp[h_i] = sumexp[h_i] * alpha_local[h_i] + sumexp_i[h_i]
                        for h_i, d_i in T.Parallel(block_H, dim // 2):
                            acc_o_l[h_i, d_i] *= alpha_local[h_i]
                        T.copy(alpha_local, alpha_shared)

                        T.copy(acc_s, S_shared)
                        T.gemm(S_shared, KV_shared[stage, :, : dim // 2], acc_o_l)

                        T.barrier_arrive(bar_sScale_and_sS_ready)
                        T.barrier_arrive(bar_k_free[stage])

                # Rescale
                for h_i in T.Parallel(block_H):
                    sum_exp_shared[h_i] = sumexp[h_i]
                for h_i, d_i in T.Parallel(block_H, dim // 2):
                    acc_o_l[h_i, d_i] /= sumexp[h_i]
                for h_i in T.Parallel(block_H):
                    sumexp[h_i] = T.log2(sumexp[h_i]) + m_i[h_i] * sm_scale
                T.copy(acc_o_l, O_shared[:, : dim // 2])
                T.copy(O_shared[:, : dim // 2], Output[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, 0 : dim // 2])

            elif tx >= 128 and tx < 256:
                T.set_max_nreg(168, 1)
                T.fill(acc_o_r, 0)
                for i_i in T.serial(T.ceildiv(NI, num_stages)):
                    for stage in T.unroll(num_stages):
                        T.barrier_arrive(bar_sScale_and_sS_ready)
                        T.barrier_wait(bar_sScale_and_sS_ready, ((i_i * num_stages + stage) & 1))
                        for h_i, d_i in T.Parallel(block_H, dim // 2):
                            acc_o_r[h_i, d_i] *= alpha_shared[h_i]
                        T.gemm(S_shared, KV_shared[stage, :, dim // 2 :], acc_o_r)
                        T.barrier_arrive(bar_k_free[stage])
                        if stage != num_stages - 1 or i_i != T.ceildiv(NI, num_stages) - 1:
                            T.barrier_arrive(bar_sScale_and_sS_free)

                # Rescale
                for h_i, d_i in T.Parallel(block_H, dim // 2):
                    acc_o_r[h_i, d_i] /= sum_exp_shared[h_i]

                T.copy(acc_o_r, O_shared[:, dim // 2 :])
                T.copy(O_shared[:, dim // 2 :], Output[bid, hid * VALID_BLOCK_H : (hid + 1) * VALID_BLOCK_H, dim // 2 : dim])

            elif tx >= 256:
                # producer
                T.set_max_nreg(80, 0)
                for i_i in T.serial(T.ceildiv(NI, num_stages)):
                    for stage in T.unroll(num_stages):
                        T.barrier_wait(bar_k_free[stage], ((i_i & 1) ^ 1))
                        for r in T.serial(4):
                            kv_indices = (i_i * num_stages + stage) * block_N + r * 16 + (tx - 256) // 8
                            for u in T.serial(dim // 64):
                                T.ptx_cp_async(
                                    T.access_ptr(
                                        KV_shared[
                                            stage,
                                            r * 16 + (tx - 256) // 8,
                                            64 * u + (tx - 256) % 8 * 8,
                                        ],
                                        "w",
                                        8,
                                    ),
                                    T.access_ptr(KV[bid, kv_indices, cur_kv_head, 64 * u + (tx - 256) % 8 * 8], "r", 8),
                                    8,
                                )
                            T.ptx_cp_async(
                                T.access_ptr(
                                    K_tail_shared[stage, r * 16 + (tx - 256) // 8, (tx - 256) % 8 * 8],
                                    "w",
                                    8,
                                ),
                                T.access_ptr(K_pe[bid, kv_indices, cur_kv_head, (tx - 256) % 8 * 8], "r", 8),
                                8,
                            )
                        T.cp_async_barrier_noinc(bar_k_ready[stage])

    if num_split > 1:
        return main_split
    else:
        return main_no_split



def ref_program(q, q_pe, kv, k_pe):
    # q [b, h, dim], q_pe [b, h, pe_dim], kv [b, s, 1, dim], k_pe [b, s, 1, pe_dim]
    dim, pe_dim = q.shape[-1], q_pe.shape[-1]
    scores = torch.einsum("bhd,bsd->bhs", q.double(), kv[:, :, 0].double())
    scores += torch.einsum("bhd,bsd->bhs", q_pe.double(), k_pe[:, :, 0].double())
    p = F.softmax(scores / (dim + pe_dim) ** 0.5, dim=-1)
    return torch.einsum("bhs,bsd->bhd", p, kv[:, :, 0].double())


def main(batch=4, heads=128, kv_ctx=1024, dim=512, pe_dim=64, num_split=1):
    softmax_scale = (dim + pe_dim) ** -0.5
    kernel = flashattn(batch, heads, 1, kv_ctx, dim, pe_dim, 64, 64, num_split, softmax_scale)
    q, q_pe = torch.randn(batch, heads, dim).half().cuda(), torch.randn(batch, heads, pe_dim).half().cuda()
    kv, k_pe = torch.randn(batch, kv_ctx, 1, dim).half().cuda(), torch.randn(batch, kv_ctx, 1, pe_dim).half().cuda()
    glse = torch.empty(batch, heads, num_split).half().cuda()
    partial = torch.empty(batch, heads, num_split, dim).half().cuda()
    out = kernel(q, q_pe, kv, k_pe, glse, partial)
    torch.testing.assert_close(out.double(), ref_program(q, q_pe, kv, k_pe), rtol=1e-2, atol=1e-2)


if __name__ == "__main__":
    main()
