# ruff: noqa
import torch
import tilelang
from tilelang import language as T


# DeepSeek V3.2's sparse MLA backward (deepseek_v32/sparse_mla_bwd.py): per
# query, Delta = rowsum(O * dO) (preprocess); the backward walks the top-k
# KV rows an index tensor names in blocks of 32, gathers them into shared
# memory, recomputes P from the forward's base-2 log-sum-exp, accumulates dQ
# in registers and adds each block's dKV into a float32 tensor by atomics,
# half a block at a time (a Parallel loop over the whole block guarded by
# `if bi_i < BS // split_store`, reading the accumulator at an offset);
# postprocess converts dKV to bfloat16. Rows past the causal position (and
# the padding index past the end) are masked.


@tilelang.jit
def preprocess(
    O,
    dO,
    block_ND=32,
    num_stages=5,
    dtype=T.bfloat16,
    accum_dtype=T.float32,
):
    assert dtype == T.bfloat16
    assert accum_dtype == T.float32
    B, S, H, D = T.const("B, S, H, D")
    shape = [B, S, H, D]

    O: T.Tensor(shape, dtype)
    dO: T.Tensor(shape, dtype)
    Delta = T.empty([B, S, H], accum_dtype)

    with T.Kernel(H, T.ceildiv(S, block_ND), B) as (bx, by, bz):
        o = T.alloc_fragment([block_ND, block_ND], accum_dtype)
        do = T.alloc_fragment([block_ND, block_ND], accum_dtype)
        delta = T.alloc_fragment([block_ND], accum_dtype)
        acc = T.alloc_fragment([block_ND, block_ND], accum_dtype)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(D, block_ND), num_stages=num_stages):
            T.copy(O[bz, by * block_ND : (by + 1) * block_ND, bx, k * block_ND : (k + 1) * block_ND], o)
            T.copy(dO[bz, by * block_ND : (by + 1) * block_ND, bx, k * block_ND : (k + 1) * block_ND], do)
            for i, j in T.Parallel(block_ND, block_ND):
                acc[i, j] += o[i, j] * do[i, j]
        T.reduce_sum(acc, delta, 1)
        T.copy(delta, Delta[bz, by * block_ND : (by + 1) * block_ND, bx])

    return Delta


@tilelang.jit
def postprocess(
    dKV,
    D,
    D_tail,
    kv_group=1,
    block_N=64,
    threads=128,
    dtype=T.bfloat16,
    accum_dtype=T.float32,
):
    assert dtype == T.bfloat16
    assert accum_dtype == T.float32
    B, S_kv = T.const("B, S_kv")
    dkv_shape = [B, S_kv, kv_group, D + D_tail]

    dKV: T.Tensor(dkv_shape, accum_dtype)
    dKV_out = T.empty(dkv_shape, dtype)

    with T.Kernel(T.ceildiv(S_kv, block_N), kv_group, B, threads=threads) as (bx, by, bz):
        T.copy(
            dKV[bz, bx * block_N : (bx + 1) * block_N, by, :],
            dKV_out[bz, bx * block_N : (bx + 1) * block_N, by, :],
        )

    return dKV_out


@tilelang.jit(
    pass_configs={
        tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
        tilelang.PassConfigKey.TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE: True,
    },
)
def bwd(
    Q,
    KV,
    dO,
    Indices,
    Lse,
    Delta,
    dKV,
    H,
    D,
    D_tail,
    topk,
    kv_group=1,
    sm_scale=None,
    is_causal=True,
    block_size=32,
    num_stages=0,
    threads=None,
    indices_dtype=T.int32,
    dtype=T.bfloat16,
    accum_dtype=T.float32,
):
    assert is_causal == True, "non-casual is not supported now"
    assert topk % block_size == 0, "otherwise will load some index=0 thus causing wrong kv to be loaded"
    assert dtype == T.bfloat16
    assert accum_dtype == T.float32
    assert indices_dtype == T.int32

    B, S, S_kv = T.const("B, S, S_kv")

    if sm_scale is None:
        sm_scale = (D + D_tail) ** (-0.5)
    sm_scale_mul_reciprocal_log2 = sm_scale * 1.44269504  # log2(e)

    H_kv = H // kv_group
    q_shape = [B, S, H, D + D_tail]
    k_shape = [B, S_kv, kv_group, D + D_tail]
    o_shape = [B, S, H, D]
    indices_shape = [B, S, kv_group, topk]
    delta_shape = [B, S, H]
    lse_shape = [B, S, H]
    assert indices_dtype == T.int32
    assert dtype == T.bfloat16
    assert accum_dtype == T.float32

    H = H_kv
    padded_H = max(tilelang.math.next_power_of_2(H_kv), 16)
    block_H = min(64, padded_H)
    # adaptive: this kernel is memory-pipe bound. When the head count is not split across
    # blocks (block_H>=64), 256 threads (8 warps) issue many more cp.async copies at once
    # than 128 (4 warps), greatly raising in-flight bytes -- the main perf lever here.
    # Smaller head blocks lack the GEMM warp-tiling work to fill 256 threads, so fall back
    # to 128 and still build.
    if threads is None:
        threads = 256 if block_H >= 64 else 128
    assert padded_H % block_H == 0
    NH = padded_H // block_H
    BS = block_size
    NS = tilelang.cdiv(topk, block_size)

    split_store = 2

    Q: T.Tensor(q_shape, dtype)
    KV: T.Tensor(k_shape, dtype)
    dO: T.Tensor(o_shape, dtype)
    Indices: T.Tensor(indices_shape, indices_dtype)
    Lse: T.Tensor(lse_shape, accum_dtype)
    Delta: T.Tensor(delta_shape, accum_dtype)
    dQ = T.empty(q_shape, dtype)
    dKV: T.Tensor(k_shape, accum_dtype)

    with T.Kernel(S, B, kv_group * NH, threads=threads) as (s_i, by, bz):
        Q_shared = T.alloc_shared([block_H, D + D_tail], dtype)
        KV_shared = T.alloc_shared([BS, D], dtype)
        KV_tail_shared = T.alloc_shared([BS, D_tail], dtype)
        dO_shared = T.alloc_shared([block_H, D], dtype)
        mask = T.alloc_fragment([BS], "bool")

        P_shared_cast = T.alloc_shared([block_H, BS], dtype)
        dP_shared_cast = T.alloc_shared([block_H, BS], dtype)
        dQ_shared = T.alloc_shared([block_H, D], dtype)
        dQ_tail_shared = T.alloc_shared([block_H, D_tail], dtype)

        acc_p = T.alloc_fragment([block_H, BS], accum_dtype)
        acc_dp = T.alloc_fragment([block_H, BS], accum_dtype)
        acc_dq = T.alloc_fragment([block_H, D], accum_dtype)
        acc_dq_tail = T.alloc_fragment([block_H, D_tail], accum_dtype)
        acc_dkv = T.alloc_fragment([BS, D], accum_dtype)
        acc_dkv_tail = T.alloc_fragment([BS, D_tail], accum_dtype)
        acc_dkv_shared = T.alloc_shared([BS // split_store, D], accum_dtype)
        acc_dkv_tail_shared = T.alloc_shared([BS // split_store, D_tail], accum_dtype)

        max_kv_i = s_i

        # TODO: merge the statements when the compiler has better support for non-power-of-2 extents.
        T.copy(Q[by, s_i, bz * block_H : (bz + 1) * block_H, :D], Q_shared[:, :D])
        T.copy(Q[by, s_i, bz * block_H : (bz + 1) * block_H, D:], Q_shared[:, D:])
        T.copy(dO[by, s_i, bz * block_H : (bz + 1) * block_H, :D], dO_shared)

        T.clear(acc_dq)
        T.clear(acc_dq_tail)

        # Process each block of indices
        for i_i in T.Pipelined(NS, num_stages=num_stages):
            # Check which indices are valid
            for bi_i in T.Parallel(BS):
                mask[bi_i] = Indices[by, s_i, bz // NH, i_i * BS + bi_i] <= max_kv_i

            # Compute attention scores
            for h_i, bi_i in T.Parallel(block_H, BS):
                acc_p[h_i, bi_i] = T.if_then_else(mask[bi_i], 0, -T.infinity(acc_p.dtype))

            # Load KV, V for this block of indices
            for bi_i, d_i in T.Parallel(BS, D):
                KV_shared[bi_i, d_i] = KV[by, Indices[by, s_i, bz // NH, i_i * BS + bi_i], bz // NH, d_i]

            T.gemm(Q_shared[:, :D], KV_shared, acc_p, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)

            for bi_i, d_i in T.Parallel(BS, D_tail):
                KV_tail_shared[bi_i, d_i] = KV[by, Indices[by, s_i, bz // NH, i_i * BS + bi_i], bz // NH, D + d_i]
            T.gemm(Q_shared[:, D:], KV_tail_shared, acc_p, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)

            for h_i, bi_i in T.Parallel(block_H, BS):
                acc_p[h_i, bi_i] = T.exp2(acc_p[h_i, bi_i] * sm_scale_mul_reciprocal_log2 - Lse[by, s_i, bz * block_H + h_i])

            T.copy(acc_p, P_shared_cast)

            T.gemm(dO_shared, KV_shared, acc_dp, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)

            for h_i, bi_i in T.Parallel(block_H, BS):
                acc_dp[h_i, bi_i] = acc_p[h_i, bi_i] * (acc_dp[h_i, bi_i] - Delta[by, s_i, bz * block_H + h_i]) * sm_scale

            T.copy(acc_dp, dP_shared_cast)
            T.gemm(dP_shared_cast, KV_shared, acc_dq, policy=T.GemmWarpPolicy.FullCol)
            T.gemm(dP_shared_cast, KV_tail_shared, acc_dq_tail, policy=T.GemmWarpPolicy.FullCol)

            T.gemm(dP_shared_cast, Q_shared[:, :D], acc_dkv, transpose_A=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
            T.gemm(P_shared_cast, dO_shared, acc_dkv, transpose_A=True, policy=T.GemmWarpPolicy.FullCol)

            T.clear(acc_dkv_tail)
            T.gemm(dP_shared_cast, Q_shared[:, D:], acc_dkv_tail, transpose_A=True, policy=T.GemmWarpPolicy.FullCol)

            for s in range(split_store):
                for bi_i, d_i in T.Parallel(BS, D):
                    if bi_i < BS // split_store:
                        acc_dkv_shared[bi_i, d_i] = acc_dkv[bi_i + s * (BS // split_store), d_i]

                for bi_i, d_i in T.Parallel(BS, D_tail):
                    if bi_i < BS // split_store:
                        acc_dkv_tail_shared[bi_i, d_i] = acc_dkv_tail[bi_i + s * (BS // split_store), d_i]

                for bi_i, d_i in T.Parallel(BS // split_store, D // 4):
                    T.atomic_addx4(
                        dKV[by, Indices[by, s_i, bz // NH, i_i * BS + bi_i + s * (BS // split_store)], bz // NH, d_i * 4],
                        acc_dkv_shared[bi_i, d_i * 4],
                    )

                # Atomically update dKV, dKV_tail tensors
                for bi_i, d_i in T.Parallel(BS // split_store, D_tail // 4):
                    T.atomic_addx4(
                        dKV[by, Indices[by, s_i, bz // NH, i_i * BS + bi_i + s * (BS // split_store)], bz // NH, D + d_i * 4],
                        acc_dkv_tail_shared[bi_i, d_i * 4],
                    )

        # Store the accumulated dQ
        T.copy(acc_dq, dQ_shared)
        T.copy(acc_dq_tail, dQ_tail_shared)

        T.copy(dQ_shared, dQ[by, s_i, bz * block_H : (bz + 1) * block_H, :D])
        T.copy(dQ_tail_shared, dQ[by, s_i, bz * block_H : (bz + 1) * block_H, D:])

    return dQ
