# ruff: noqa
# DeepSeek's native sparse attention, the selected-blocks branch at decode
# (deepseek_nsa/example_tilelang_nsa_decode.py): one query position per
# sequence, its G = groups query heads of each KV head attending to the
# key blocks BlockIndices[b, 0, h, :] selects (a negative index is a
# padding slot, skipped). The kernel is the example's, which does not
# rescale its output accumulator when a later block raises a row's maximum
# (the forward does): it is exact with one block a head, as its main()
# selects (S = 1), and so is this port's driver. The reference and driver
# are written for this port.
import torch
import tilelang
from tilelang import language as T


@tilelang.jit(
    pass_configs={
        tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
        tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
        tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True,
    },
)
def native_sparse_attention(
    Q,
    K,
    V,
    BlockIndices,
    dim,  # Embedding dimension per head
    scale=None,
    block_size=64,  # Tile size for attention computation
    groups=1,  # Grouped query attention (GQA) groups
    selected_blocks=16,  # Number of blocks to select per attention head
):
    batch, seq_len, heads = T.const("batch, seq_len, heads")
    if scale is None:
        scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e)
    head_kv = heads // groups
    # Modified shapes for inference (q has seq_len=1)a
    q_shape = [batch, 1, heads, dim]  # Changed seq_len to 1
    kv_shape = [batch, seq_len, head_kv, dim]
    block_indices_shape = [batch, 1, head_kv, selected_blocks]  # Changed seq_len to 1
    block_indices_dtype = T.int32
    dtype = T.float16
    accum_dtype = T.float32
    block_S = block_size
    block_T = min(128, tilelang.math.next_power_of_2(dim))

    NK = tilelang.cdiv(dim, block_T)
    NV = tilelang.cdiv(dim, block_T)
    assert NK == 1, "The key dimension can not be larger than 256"

    S = selected_blocks
    G = groups
    BS = block_S
    BK = BV = block_T
    num_stages = 0
    threads = 32

    Q: T.Tensor(q_shape, dtype)  # [batch, 1, heads, dim]
    K: T.Tensor(kv_shape, dtype)  # [batch, seq_len, head_kv, dim]
    V: T.Tensor(kv_shape, dtype)  # Same shape as K
    BlockIndices: T.Tensor(block_indices_shape, block_indices_dtype)  # Selected block indices
    Output = T.empty(q_shape, dtype)

    with T.Kernel(1, NV, batch * head_kv, threads=threads) as (bx, by, bz):
        # Shared memory allocations for tile storage
        Q_shared = T.alloc_shared([G, BK], dtype)  # Current query block
        K_shared = T.alloc_shared([BS, BK], dtype)  # Current key block
        V_shared = T.alloc_shared([BS, BV], dtype)  # Current value block
        O_shared = T.alloc_shared([G, BV], dtype)  # Output accumulator

        # Attention computation buffers
        acc_s = T.alloc_fragment([G, BS], accum_dtype)  # QK^T scores
        acc_s_cast = T.alloc_fragment([G, BS], dtype)  # Casted scores for softmax
        acc_o = T.alloc_fragment([G, BV], accum_dtype)  # Output accumulator
        scores_max = T.alloc_fragment([G], accum_dtype)
        scores_max_prev = T.alloc_fragment([G], accum_dtype)
        scores_scale = T.alloc_fragment([G], accum_dtype)
        scores_sum = T.alloc_fragment([G], accum_dtype)
        logsum = T.alloc_fragment([G], accum_dtype)

        i_v, i_bh = by, bz
        i_b, i_h = i_bh // head_kv, i_bh % head_kv

        NS = S
        # Copy Q for the single position
        T.copy(Q[i_b, 0, i_h * G : (i_h + 1) * G, :], Q_shared)  # Changed i_t to 0

        T.fill(acc_o, 0)
        T.fill(logsum, 0)
        T.fill(scores_max, -T.infinity(accum_dtype))

        # Main attention computation loop over selected blocks
        for i in T.Pipelined(NS, num_stages=num_stages):
            i_s = BlockIndices[i_b, 0, i_h, i] * BS  # Get block offset
            if i_s >= 0:  # Skip invalid/padding blocks
                # Load current key block to shared memory
                T.copy(K[i_b, i_s : i_s + BS, i_h, :], K_shared)

                # Compute QK^T attention scores
                T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                # Online softmax with numerical stability
                # 1. Compute max for scaling
                # 2. Compute exponentials and sum
                # 3. Maintain running logsum for normalization
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=True)

                for i in T.Parallel(G):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(G, BS):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(G):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)

                # Accumulate attention-weighted values
                T.copy(V[i_b, i_s : i_s + BS, i_h, i_v * BV : (i_v + 1) * BV], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

        # Final normalization and output
        for i, j in T.Parallel(G, BV):
            acc_o[i, j] /= logsum[i]  # Normalize by logsum
        T.copy(acc_o, O_shared)
        T.copy(O_shared, Output[i_b, 0, i_h * G : (i_h + 1) * G, i_v * BV : (i_v + 1) * BV])  # Changed i_t to 0

    return Output


def reference(q, k, v, block_indices, block_size, scale=None):
    """float64: q [B, 1, HQ, D], k and v [B, T, H, D], block_indices [B, 1, H, S] (negative: skipped)."""
    B, _, HQ, D = q.shape
    H = k.shape[2]
    G = HQ // H
    scale = D ** -0.5 if scale is None else scale
    out = torch.zeros(q.shape, dtype=torch.float64, device=q.device)
    for b in range(B):
        for h in range(H):
            keys = torch.cat([torch.arange(int(i) * block_size, (int(i) + 1) * block_size, device=q.device)
                              for i in block_indices[b, 0, h] if int(i) >= 0])
            s = q[b, 0, h * G:(h + 1) * G].double() @ k[b, keys, h].double().T * scale
            out[b, 0, h * G:(h + 1) * G] = torch.softmax(s, -1) @ v[b, keys, h].double()
    return out


def main(B=2, SEQ_LEN=64, H=1, HQ=16, D=16, S=2, block_size=32):
    torch.manual_seed(0)
    q = torch.randn(B, 1, HQ, D, dtype=torch.float16, device="cuda")
    k = torch.randn(B, SEQ_LEN, H, D, dtype=torch.float16, device="cuda")
    v = torch.randn(B, SEQ_LEN, H, D, dtype=torch.float16, device="cuda")
    idx = torch.full((B, 1, H, S), -1, dtype=torch.int32, device="cuda")
    for b in range(B):  # one block a head, in a slot of its own
        idx[b, 0, 0, b % S] = int(torch.randint(SEQ_LEN // block_size, ()))
    out = native_sparse_attention(q, k, v, idx, dim=D, block_size=block_size, groups=HQ // H, selected_blocks=S)
    torch.testing.assert_close(out.double(), reference(q, k, v, idx, block_size), atol=1e-2, rtol=1e-2)
    print("native sparse attention (decode) matches the reference")


if __name__ == "__main__":
    main()
