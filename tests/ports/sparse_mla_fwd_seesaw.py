# ruff: noqa
# DeepSeek V3.2's sparse MLA forward in TileLang's "seesaw" schedule
# (deepseek_v32/sparse_mla_fwd_seesaw.py): the pages taken two at a time,
# consumer warpgroup 0 scoring the even one and warpgroup 1 the odd one,
# exchanging their row maxima and sums through shared memory, each holding
# half of the output's columns; a producer warpgroup gathers the visible
# rows with per-thread cp.async, each producer thread keeping the indices
# it prefetched in a fragment of its own (a per-thread buffer, docs/
# language.md 9.1). tlc runs the branches as written (11.9). The kernel is
# the example's; the driver is written for this port (the reference is
# python/tests/kernels.py's sparse_mla_reference).
import torch
import tilelang
from tilelang import language as T


@tilelang.jit(
    compile_flags=[
        "-O3",
        "--ptxas-options=-v,--register-usage-level=10",
        "-DNDEBUG",
        "-Wno-deprecated-declarations",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_HALF2_OPERATORS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
    ],
)
def sparse_mla_fwd(
    Q,
    KV,
    Indices,
    q_start_index_s,
    heads,
    dim,
    tail_dim,
    topk,
    kv_stride,
    kv_group=1,
    sm_scale=None,
    is_causal=True,
    CP0=True,
    block_I=64,
    num_stages=2,
    threads=384,
):
    assert dim == tilelang.math.next_power_of_2(dim), f"haven't check padding correctness yet, dim={dim}"
    assert tail_dim == tilelang.math.next_power_of_2(tail_dim), f"haven't check padding correctness yet, dim={tail_dim}"
    assert is_causal == True, "non-casual is not supported"
    assert topk % block_I == 0, "otherwise will load some index=0 thus causing wrong kv to be loaded"
    if sm_scale is None:
        sm_scale = (1.0 / (dim + tail_dim)) ** 0.5 * 1.44269504  # log2(e)
    else:
        sm_scale = sm_scale * 1.44269504  # log2(e)

    batch, seq_len, seq_len_kv = T.dynamic("batch, seq_len, seq_len_kv")

    head_kv = heads // kv_group
    q_shape = [batch, seq_len, heads, dim + tail_dim]
    kv_shape = [batch, seq_len_kv, kv_group, dim + tail_dim]
    o_shape = [batch, seq_len, heads, dim]
    indices_shape = [batch, seq_len, kv_group, topk]
    lse_shape = [batch, seq_len, heads]
    indices_dtype = "int32"
    dtype = "bfloat16"
    accum_dtype = "float"

    G = kv_group
    H = head_kv
    padded_H = max(tilelang.math.next_power_of_2(head_kv), 16)
    if padded_H != H:
        assert kv_group == 1, (
            "here we solve the H padding automatically, other wise you "
            "should handle Q copy and Output copy with your mask (when "
            "kv_group == 1, use g_i * padded_H:(g_i+1) * padded_H would "
            "be handled automatically)"
        )
    BI = block_I
    NI = tilelang.cdiv(topk, block_I)
    assert num_stages == 2, "the seesaw pipeline requires exactly two stages"
    assert NI % num_stages == 0, "NI should be a multiple of num_stages"
    D = dim
    D_tail = tail_dim
    KV_stride = kv_stride
    if head_kv > 64:
        assert head_kv % 64 == 0, "head_kv should be a multiple of 64"
        REPLICATE_H = head_kv // 64
    else:
        REPLICATE_H = 1

    # Increasing from 32->64 reduces the time spent reading kvcache. If num_query_head = 128
    # and num_kv_head = 1, the same kvcache originally needed to be read 4 times, but now only 2 times
    H_per_block = padded_H if REPLICATE_H == 1 else 64
    assert H_per_block == BI == D_tail, "the score/K-tail shared-memory reuse requires matching dimensions"

    Q: T.Tensor(q_shape, dtype)  # type: ignore
    KV: T.Tensor(kv_shape, dtype)  # type: ignore
    Indices: T.Tensor(indices_shape, indices_dtype)  # type: ignore
    q_start_index_s: T.Tensor(1, indices_dtype)  # type: ignore
    Output = T.empty(o_shape, dtype)
    Lse = T.empty(lse_shape, accum_dtype)

    with T.Kernel(
        # If CP0 is True (i.e., start of sequence), skip the first (KV_stride - 1)
        # queries that cannot see any KV. Also be careful that seq_len < kv_stride could cause negative grid size
        (max(0, seq_len - kv_stride + 1) if CP0 else seq_len) * REPLICATE_H,
        batch,
        kv_group,
        threads=threads,
    ) as (bx, by, bz):
        Q_shared = T.alloc_shared([H_per_block, D + D_tail], dtype)
        KV_shared = T.alloc_shared([num_stages, BI, D + D_tail], dtype)

        O_shared = Q_shared

        # Whether the kv in current BI is visible for this query
        # Producer alternates writing to buf0 and buf1 masks. To avoid the situation
        # where consumer0 is still reading buf0 mask when producer has already started
        # writing buf1 mask, we use two buf masks
        is_kv_valid = T.alloc_shared([num_stages, BI], "bool", scope="shared")

        acc_o_l = T.alloc_fragment([H_per_block, D // 2], accum_dtype)
        acc_o_r = T.alloc_fragment([H_per_block, D // 2], accum_dtype)

        # WG0 computes S0(BI_2*i), WG1 computes S1(BI_2*i+1), shared via shared memory

        # Reuse the K-tail slice for S_shared to save memory when dimensions match.
        # Must reuse, otherwise H100 SM's shared mem is insufficient (> 228kb), this is shared mem bound
        S_shared = KV_shared

        # WG0 and WG1 exchange local max with each other, compare to compute global max, and rescale their O_L or O_R accordingly
        row_max_shared = T.alloc_shared([num_stages, H_per_block], accum_dtype)

        # Used to store sum of exps for even BI and odd BI respectively, which will be summed up for integration later
        row_sum_shared = T.alloc_shared([num_stages, H_per_block], accum_dtype)

        # acc_s, sumexp, m_i each need to be allocated separately for consumer0 and consumer1
        acc_s_0 = T.alloc_fragment([H_per_block, BI], accum_dtype)
        acc_s_1 = T.alloc_fragment([H_per_block, BI], accum_dtype)

        sumexp_0 = T.alloc_fragment([H_per_block], accum_dtype)
        sumexp_i_0 = T.alloc_fragment([H_per_block], accum_dtype)
        m_i_0 = T.alloc_fragment([H_per_block], accum_dtype)
        m_i_prev_0 = T.alloc_fragment([H_per_block], accum_dtype)
        m_i_peer_0 = T.alloc_fragment([H_per_block], accum_dtype)

        sumexp_1 = T.alloc_fragment([H_per_block], accum_dtype)
        sumexp_i_1 = T.alloc_fragment([H_per_block], accum_dtype)
        m_i_1 = T.alloc_fragment([H_per_block], accum_dtype)
        m_i_prev_1 = T.alloc_fragment([H_per_block], accum_dtype)
        m_i_peer_1 = T.alloc_fragment([H_per_block], accum_dtype)

        bar_q = T.alloc_barrier(arrive_count=384)

        # Producer -> Consumer Barriers
        bar_k_ready = T.alloc_barrier(arrive_count=[128] * num_stages)  # Prod arrives

        # Consumer -> Producer Barriers (Both consumers must arrive)
        bar_k_free = T.alloc_barrier(arrive_count=[256] * num_stages)

        # Inter-Consumer Barriers (Seesaw Sync)
        bar_stats_0_ready = T.alloc_barrier(arrive_count=128)  # Cons 0 arrives
        bar_stats_1_ready = T.alloc_barrier(arrive_count=128)  # Cons 1 arrives

        bar_S_0_ready = T.alloc_barrier(arrive_count=128)  # Cons 0 arrives
        bar_S_1_ready = T.alloc_barrier(arrive_count=128)  # Cons 1 arrives

        b_i, g_i = by, bz
        # If it's the first chunk, start computing directly from the (kv_stride - 1)-th token
        s_i = (bx + (KV_stride - 1 if CP0 else 0)) if REPLICATE_H == 1 else (bx // REPLICATE_H + (KV_stride - 1 if CP0 else 0))
        q_i = q_start_index_s[0] + s_i
        # Sometimes to reduce kvcache size, we may not store KV for every token, but store
        # KV every KV_stride tokens (usually the last token in the stride window),
        # so the kv range visible to the current query should be [0:max_kv_i]
        max_kv_i = (q_i + 1 - KV_stride) // KV_stride

        H0 = g_i * padded_H + (0 if REPLICATE_H == 1 else (bx % REPLICATE_H) * 64)
        H1 = H0 + H_per_block

        tx = T.get_thread_binding()

        T.copy(Q[b_i, s_i, H0:H1, :], Q_shared)

        # Non-blockingly increment the barrier's internal counter, producer threads can start loading kv ahead of time
        T.barrier_arrive(bar_q)

        if tx >= 256:
            # producer: prefetch kvcache to shared mem
            T.set_max_nreg(72, 0)

            prefetch_indices = T.alloc_fragment([num_stages, 4], indices_dtype)

            # Prime the Pump! Prefetch indices for iter_0
            for r in T.serial(4):
                # This read will cause a long scoreboard stall, but it only happens once before the loop starts
                for stage in T.unroll(num_stages):
                    prefetch_indices[stage, r] = Indices[b_i, s_i, g_i, stage * BI + r * 16 + (tx - 256) // 8]

            for i_i in T.serial(T.ceildiv(NI, num_stages)):
                for stage in T.unroll(num_stages):
                    T.barrier_wait(bar_k_free[stage], (i_i & 1))

                    # Block size `BI` is 64, loading is divided into 4 iterations, each processing 16 indices.
                    for r in T.serial(4):
                        index = prefetch_indices[stage, r]
                        is_kv_valid[stage, r * 16 + (tx - 256) // 8] = index <= max_kv_i
                        if is_kv_valid[stage, r * 16 + (tx - 256) // 8]:
                            for u in T.serial((D + D_tail) // 64):
                                T.ptx_cp_async(
                                    T.access_ptr(
                                        KV_shared[stage, r * 16 + (tx - 256) // 8, 64 * u + (tx - 256) % 8 * 8],
                                        "w",
                                        8,
                                    ),
                                    T.access_ptr(KV[b_i, index, g_i, 64 * u + (tx - 256) % 8 * 8], "r", 8),
                                    8,
                                )
                    T.cp_async_barrier_noinc(bar_k_ready[stage])

                    if i_i + 1 < T.ceildiv(NI, num_stages):
                        for r in T.serial(4):
                            prefetch_indices[stage, r] = Indices[
                                b_i,
                                s_i,
                                g_i,
                                ((i_i + 1) * num_stages + stage) * BI + r * 16 + (tx - 256) // 8,
                            ]

        elif tx < 128:
            # Check if 384 threads have already arrived at bar_q (phase0 completed),
            # if not continue waiting, otherwise pass through directly
            T.barrier_wait(bar_q, 0)

            # pre-arrive free barriers to indicate buffers are initially free
            # At the beginning of phase0, tells producer it can load data into both buffers
            for stage in T.unroll(num_stages):
                T.barrier_arrive(bar_k_free[stage])

            # Consumer 0 (WG0): Responsible for Even Blocks and O_L (Left Half)
            T.set_max_nreg(216, 1)
            T.fill(sumexp_0, 0)
            for h_i in T.Parallel(H_per_block):
                m_i_0[h_i] = -5e4
            T.fill(acc_o_l, 0)

            # Each iteration, two consumers cooperate to compute two BIs
            for i_i in T.serial(T.ceildiv(NI, num_stages)):
                # --- Step 1: Compute S0 = Q @ K0^T (Even Block) ---
                T.barrier_wait(bar_k_ready[0], (i_i & 1))

                T.fill(acc_s_0, 0)
                T.wgmma_gemm(Q_shared[:, :D], KV_shared[0, :, :D], acc_s_0, transpose_B=True)
                T.wgmma_gemm(Q_shared[:, D:], KV_shared[0, :, D:], acc_s_0, transpose_B=True)

                T.copy(m_i_0, m_i_prev_0)
                T.wait_wgmma(0)

                for h_i, bi_i in T.Parallel(H_per_block, BI):
                    if not is_kv_valid[0, bi_i]:
                        acc_s_0[h_i, bi_i] = -5e4
                T.reduce_max(acc_s_0, m_i_0, dim=1, clear=False)

                # --- Step 2: Local Softmax Stats & Exchange ---
                T.copy(m_i_0, row_max_shared[0, :])
                T.barrier_arrive(bar_stats_0_ready)
                # If consumer0 has received the local max from consumer1 at iter_i, this also means
                # consumer1 has finished using S_0 passed by consumer0 at iter_i-1,
                # so we can write to it directly without blocking below
                T.barrier_wait(bar_stats_1_ready, (i_i & 1))
                T.copy(row_max_shared[1, :], m_i_peer_0)

                # Update global max and scale O
                for h_i in T.Parallel(H_per_block):
                    m_i_0[h_i] = T.max(m_i_0[h_i], m_i_peer_0[h_i])

                # Scale O_L
                for h_i, d_i in T.Parallel(H_per_block, D // 2):
                    acc_o_l[h_i, d_i] *= T.exp2((m_i_prev_0[h_i] - m_i_0[h_i]) * sm_scale)

                # Scale SumExp
                for h_i in T.Parallel(H_per_block):
                    sumexp_0[h_i] *= T.exp2((m_i_prev_0[h_i] - m_i_0[h_i]) * sm_scale)

                # Compute P0 = exp(S0 - m_new)
                for h_i, bi_i in T.Parallel(H_per_block, BI):
                    acc_s_0[h_i, bi_i] = T.exp2(acc_s_0[h_i, bi_i] * sm_scale - m_i_0[h_i] * sm_scale)

                # Update SumExp with P0
                T.reduce_sum(acc_s_0, sumexp_i_0, dim=1)
                for h_i in T.Parallel(H_per_block):
                    sumexp_0[h_i] += sumexp_i_0[h_i]

                # --- Step 3: O_L += P0 @ V0_L (Self-Attention) ---
                # Wait for S0 buffer to be free (consumed by peer in prev iter)
                # T.barrier_wait(bar_S_0_free, (i_i & 1))
                T.copy(acc_s_0, S_shared[0, :, D:])
                T.barrier_arrive(bar_S_0_ready)

                T.wgmma_gemm(S_shared[0, :, D:], KV_shared[0, :, : D // 2], acc_o_l, transpose_B=False)

                # --- Step 4: O_L += P1 @ V1_L (Cross-Attention) ---
                # Wait for P1 (S1) from peer
                T.barrier_wait(bar_S_1_ready, (i_i & 1))

                T.wgmma_gemm(S_shared[1, :, D:], KV_shared[1, :, : D // 2], acc_o_l, transpose_B=False)

                # NOTE: However, k_0 and k_1 are used by both consumer0 and consumer1, so this doesn't bring much performance improvement
                # Except for the most recent async gemm (i.e., S_shared_1 @ KV_shared_1_k), all others need to wait to finish
                T.wait_wgmma(1)
                T.barrier_arrive(bar_k_free[0])
                # Wait for all async gemms to finish
                T.wait_wgmma(0)
                T.barrier_arrive(bar_k_free[1])

            T.copy(sumexp_0, row_sum_shared[0, :])
            T.barrier_arrive(bar_stats_0_ready)  # Reuse barrier
            T.barrier_wait(bar_stats_1_ready, T.ceildiv(NI, num_stages) & 1)
            T.copy(row_sum_shared[1, :], sumexp_i_0)  # Reuse sumexp_i buffer

            for h_i in T.Parallel(H_per_block):
                sumexp_0[h_i] += sumexp_i_0[h_i]

            for h_i, d_i in T.Parallel(H_per_block, D // 2):
                acc_o_l[h_i, d_i] /= sumexp_0[h_i]

            for h_i in T.Parallel(H_per_block):
                sumexp_0[h_i] = T.log2(sumexp_0[h_i]) + m_i_0[h_i] * sm_scale

            T.copy(acc_o_l, O_shared[:, : D // 2])
            T.copy(O_shared[:, : D // 2], Output[b_i, s_i, H0:H1, 0 : D // 2])
            T.copy(sumexp_0, Lse[b_i, s_i, H0:H1])  # Write LSE

        elif tx >= 128 and tx < 256:
            T.barrier_wait(bar_q, 0)

            # pre-arrive free barriers to indicate buffers are initially free
            # At the beginning of phase0, tells producer it can load data into both buffers
            for stage in T.unroll(num_stages):
                T.barrier_arrive(bar_k_free[stage])

            # Consumer 1 (WG1): Responsible for Odd Blocks and O_R (Right Half)
            # NOTE: 256 * 216 + 128 * 72 = 64,512 < 65536 (H100 SM RegFile Limit),
            # setting more registers will cause a hang, all values must be multiples of 8
            T.set_max_nreg(216, 1)
            T.fill(sumexp_1, 0)
            for h_i in T.Parallel(H_per_block):
                m_i_1[h_i] = -5e4
            T.fill(acc_o_r, 0)

            for i_i in T.serial(T.ceildiv(NI, num_stages)):
                # --- Step 1: Compute S1 = Q @ K1^T (Odd Block) ---
                T.barrier_wait(bar_k_ready[1], (i_i & 1))

                T.fill(acc_s_1, 0)
                T.wgmma_gemm(Q_shared[:, :D], KV_shared[1, :, :D], acc_s_1, transpose_B=True)
                T.wgmma_gemm(Q_shared[:, D:], KV_shared[1, :, D:], acc_s_1, transpose_B=True)

                # --- Step 2: Local Softmax Stats & Exchange ---
                T.copy(m_i_1, m_i_prev_1)
                T.wait_wgmma(0)

                for h_i, bi_i in T.Parallel(H_per_block, BI):
                    if not is_kv_valid[1, bi_i]:
                        acc_s_1[h_i, bi_i] = -5e4

                T.reduce_max(acc_s_1, m_i_1, dim=1, clear=False)
                T.copy(m_i_1, row_max_shared[1, :])
                T.barrier_arrive(bar_stats_1_ready)
                T.barrier_wait(bar_stats_0_ready, (i_i & 1))
                T.copy(row_max_shared[0, :], m_i_peer_1)

                for h_i in T.Parallel(H_per_block):
                    m_i_1[h_i] = T.max(m_i_1[h_i], m_i_peer_1[h_i])

                for h_i, d_i in T.Parallel(H_per_block, D // 2):
                    acc_o_r[h_i, d_i] *= T.exp2((m_i_prev_1[h_i] - m_i_1[h_i]) * sm_scale)

                for h_i in T.Parallel(H_per_block):
                    sumexp_1[h_i] *= T.exp2((m_i_prev_1[h_i] - m_i_1[h_i]) * sm_scale)

                for h_i, bi_i in T.Parallel(H_per_block, BI):
                    acc_s_1[h_i, bi_i] = T.exp2(acc_s_1[h_i, bi_i] * sm_scale - m_i_1[h_i] * sm_scale)

                T.reduce_sum(acc_s_1, sumexp_i_1, dim=1)
                for h_i in T.Parallel(H_per_block):
                    sumexp_1[h_i] += sumexp_i_1[h_i]

                # --- Step 3: O_R += P1 @ V1_R (Self-Attention) ---
                T.copy(acc_s_1, S_shared[1, :, D:])

                T.barrier_arrive(bar_S_1_ready)

                T.wgmma_gemm(S_shared[1, :, D:], KV_shared[1, :, D // 2 : D], acc_o_r, transpose_B=False)

                # --- Step 4: O_R += P0 @ V0_R (Cross-Attention) ---
                T.barrier_wait(bar_S_0_ready, (i_i & 1))

                T.wgmma_gemm(S_shared[0, :, D:], KV_shared[0, :, D // 2 : D], acc_o_r, transpose_B=False)

                T.wait_wgmma(1)
                T.barrier_arrive(bar_k_free[1])
                T.wait_wgmma(0)
                T.barrier_arrive(bar_k_free[0])

            T.copy(sumexp_1, row_sum_shared[1, :])
            T.barrier_arrive(bar_stats_1_ready)
            T.barrier_wait(bar_stats_0_ready, T.ceildiv(NI, num_stages) & 1)
            T.copy(row_sum_shared[0, :], sumexp_i_1)

            for h_i in T.Parallel(H_per_block):
                sumexp_1[h_i] += sumexp_i_1[h_i]

            for h_i, d_i in T.Parallel(H_per_block, D // 2):
                acc_o_r[h_i, d_i] /= sumexp_1[h_i]

            T.copy(acc_o_r, O_shared[:, D // 2 : D])
            T.copy(O_shared[:, D // 2 : D], Output[b_i, s_i, H0:H1, D // 2 : D])

    return Output, Lse
