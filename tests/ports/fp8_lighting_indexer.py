import tilelang
from tilelang import language as T
import torch


@tilelang.jit(
    pass_configs={
        tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True,
    },
)
def mqa_attn_return_logits(
    IndexQ,
    IndexK,
    IndexKScale,
    Weights,
    CuSeqLenKS,
    CuSeqLenKE,
    block_N=256,
    num_stages=3,
    threads=512,
    block_Q=None,
):
    heads, index_dim = T.const("heads, index_dim")

    if block_Q is None:
        block_Q = 128 // heads
    dtype = T.float8_e4m3fn
    accum_dtype = T.float32
    index_dtype = T.int32

    seq_len = T.dynamic("seq_len")
    seq_len_kv = T.dynamic("seq_len_kv")

    index_q_shape = [seq_len * heads, index_dim]
    index_k_shape = [seq_len_kv, index_dim]
    index_k_scale_shape = [seq_len_kv]
    logits_shape = [seq_len, seq_len_kv]

    IndexQ: T.Tensor(index_q_shape, dtype)  # type: ignore
    IndexK: T.Tensor(index_k_shape, dtype)  # type: ignore
    IndexKScale: T.Tensor(index_k_scale_shape, accum_dtype)  # type: ignore
    Logits = T.empty(logits_shape, accum_dtype)
    Weights: T.Tensor([seq_len, heads], accum_dtype)  # type: ignore
    CuSeqLenKS: T.Tensor([seq_len], index_dtype)  # type: ignore
    CuSeqLenKE: T.Tensor([seq_len], index_dtype)  # type: ignore

    with T.Kernel(T.ceildiv(seq_len, block_Q), threads=threads) as bx:
        index_q_shared = T.alloc_shared([block_Q * heads, index_dim], dtype)
        index_k_shared = T.alloc_shared([block_N, index_dim], dtype)
        index_k_scale_fragment = T.alloc_fragment([block_N], accum_dtype)
        s = T.alloc_fragment([block_N, block_Q * heads], accum_dtype)
        s_reshaped = T.reshape(s, (block_N, block_Q, heads))
        logits = T.alloc_fragment([block_N, block_Q], accum_dtype)
        weights = T.alloc_fragment([block_Q, heads], accum_dtype)

        seq_len_i = bx * block_Q

        cu_k_s_min = T.alloc_var(index_dtype)
        cu_k_e_max = T.alloc_var(index_dtype)

        cu_k_s_min = 2147483647
        cu_k_e_max = -2147483648

        for bq_i in T.serial(block_Q):
            cu_k_s_min = T.min(cu_k_s_min, T.min(CuSeqLenKS[seq_len_i + bq_i], seq_len_kv))
        for bq_i in T.serial(block_Q):
            cu_k_e_max = T.max(cu_k_e_max, T.min(CuSeqLenKE[seq_len_i + bq_i], seq_len_kv))

        T.copy(IndexQ[seq_len_i * heads, 0], index_q_shared)
        T.copy(Weights[seq_len_i, 0], weights)

        for nbn_i in T.Pipelined(T.ceildiv(cu_k_e_max - cu_k_s_min, block_N), num_stages=num_stages):
            T.copy(IndexK[cu_k_s_min + nbn_i * block_N, 0], index_k_shared)
            T.copy(IndexKScale[cu_k_s_min + nbn_i * block_N], index_k_scale_fragment)

            T.gemm(
                index_k_shared,
                index_q_shared,
                s,
                transpose_B=True,
                clear_accum=True,
                policy=T.GemmWarpPolicy.FullCol,
            )

            for bn_i, bq_i, h_i in T.Parallel(block_N, block_Q, heads):
                s_reshaped[bn_i, bq_i, h_i] = (T.max(s_reshaped[bn_i, bq_i, h_i], 0) * weights[bq_i, h_i]) * index_k_scale_fragment[bn_i]

            T.reduce_sum(s_reshaped, logits, dim=-1, clear=True)

            for bq_i, bn_i in T.Parallel(block_Q, block_N):
                Logits[seq_len_i + bq_i, cu_k_s_min + nbn_i * block_N + bn_i] = logits[bn_i, bq_i]

    return Logits


@tilelang.jit
def clean_logits_(
    Logits,
    CuSeqLenKS,
    CuSeqLenKE,
    threads: int = 512,
    block_K: int = 4096,
):
    seq_len = T.dynamic("seq_len")
    seq_len_kv = T.dynamic("seq_len_kv")

    dtype = T.float
    indices_dtype = T.int32

    Logits: T.Tensor([seq_len, seq_len_kv], dtype)  # type: ignore
    CuSeqLenKS: T.Tensor([seq_len], indices_dtype)  # type: ignore
    CuSeqLenKE: T.Tensor([seq_len], indices_dtype)  # type: ignore

    with T.Kernel(seq_len, threads=threads) as bx:
        tx = T.thread_binding(0, threads, thread="threadIdx.x")
        cu_k_s = CuSeqLenKS[bx]
        cu_k_e = CuSeqLenKE[bx]

        for n_i in T.Pipelined(T.ceildiv(seq_len_kv, block_K)):
            for k_i in T.serial(block_K // threads):
                idx = n_i * block_K + k_i * threads + tx
                if idx < cu_k_s or idx >= cu_k_e:
                    Logits[bx, idx] = -T.infinity(dtype)


def indexer_logits(q, kv, kv_scales, weights, ks, ke, clean=True):
    """q [S, H, D] float8, kv [SKV, D] float8 with one scale per row, weights [S, H]; the keys of
    query i are ks[i] .. ke[i] - 1 (logits of the others -inf when clean)."""
    s, h, d = q.shape
    logits = mqa_attn_return_logits(q.view(s * h, d), kv, kv_scales, weights, ks, ke)
    if clean:
        clean_logits_(logits, ks, ke)
    return logits


def reference(q, kv, kv_scales, weights, ks, ke):
    scores = torch.einsum("shd,nd->hsn", q.float(), kv.float() * kv_scales[:, None])
    logits = (scores.relu() * weights.t()[:, :, None]).sum(0)
    cols = torch.arange(kv.shape[0], device=q.device)[None, :]
    return logits.masked_fill((cols < ks[:, None]) | (cols >= ke[:, None]), float("-inf"))


def main(s=512, skv=2048, h=64, d=128):
    torch.manual_seed(0)
    q = torch.randn(s, h, d, device="cuda").to(torch.float8_e4m3fn)
    kv_f = torch.randn(skv, d, device="cuda")
    kv_scales = kv_f.abs().amax(1) / 448
    kv = (kv_f / kv_scales[:, None]).to(torch.float8_e4m3fn)
    weights = torch.randn(s, h, device="cuda")
    ke = torch.randint(skv // 2, skv + 1, (s,), device="cuda", dtype=torch.int32)
    ks = (ke - torch.randint(1, skv // 2, (s,), device="cuda", dtype=torch.int32)).clamp(min=0)
    out = indexer_logits(q, kv, kv_scales, weights, ks, ke)
    ref = reference(q, kv, kv_scales, weights, ks, ke)
    finite = torch.isfinite(ref)
    print("masked the same:", bool((torch.isfinite(out) == finite).all()))
    print("max relative error:", ((out - ref)[finite].abs().max() / ref[finite].abs().max()).item())


if __name__ == "__main__":
    main()
