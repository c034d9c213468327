# Attention with a learned sink per head (an extra logit in each row's
# softmax), optionally over a sliding window; built on example_mha_fwd_bhsd.
import argparse
import itertools
from typing import Optional

import torch
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune
from tilelang.profiler import do_bench


def get_configs():
    grid = dict(block_M=[128], block_N=[128], num_stages=[0, 1, 2], threads=[128, 256])
    return [dict(zip(grid, v)) for v in itertools.product(*grid.values())]


@autotune(configs=get_configs(), warmup=500, rep=100)
@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flashattn(
    batch,
    heads,
    seq_q,
    seq_kv,
    dim,
    window_size=None,  # None: full (causal) attention
    sm_scale=None,
    block_M=64,
    block_N=64,
    num_stages=1,
    threads=128,
    dtype: T.dtype = T.float16,
):
    if window_size is not None:
        assert window_size % block_N == 0, "the window is a whole number of key blocks"

    if sm_scale is None:
        sm_scale = (1.0 / dim) ** 0.5
    scale = sm_scale * 1.44269504  # log2(e)
    q_shape = [batch, heads, seq_q, dim]
    kv_shape = [batch, heads, seq_kv, dim]
    accum_dtype = T.float32

    past_len = seq_kv - seq_q
    assert past_len >= 0, "seq_kv must be at least seq_q"

    @T.prim_func
    def main(
        Q: T.Tensor(q_shape, dtype),
        K: T.Tensor(kv_shape, dtype),
        V: T.Tensor(kv_shape, dtype),
        Output: T.Tensor(q_shape, dtype),
        Sinks: T.Tensor([heads], dtype),
    ):
        with T.Kernel(T.ceildiv(seq_q, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)
            sinks = T.alloc_fragment([block_M], dtype)

            T.copy(Q[bz, by, bx * block_M : (bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))
            for i in T.Parallel(block_M):
                sinks[i] = Sinks[by]

            end = T.min(T.ceildiv(seq_kv, block_N), T.ceildiv((bx + 1) * block_M + past_len, block_N))
            start = T.max(0, (bx * block_M + past_len - window_size) // block_N) if window_size is not None else 0

            for k in T.Pipelined(start, end, num_stages=num_stages):
                T.copy(K[bz, by, k * block_N : (k + 1) * block_N, :], K_shared)
                for i, j in T.Parallel(block_M, block_N):
                    q_idx = bx * block_M + i + past_len
                    k_idx = k * block_N + j
                    if window_size is not None:
                        acc_s[i, j] = T.if_then_else(q_idx >= k_idx and q_idx < k_idx + window_size, 0, -T.infinity(acc_s.dtype))
                    else:
                        acc_s[i, j] = T.if_then_else(q_idx >= k_idx, 0, -T.infinity(acc_s.dtype))
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
                # a row whose window is still all masked keeps a max of -inf: use 0
                for i in T.Parallel(block_M):
                    if window_size is not None:
                        scores_max[i] = T.if_then_else(scores_max[i] == -T.infinity(accum_dtype), 0, scores_max[i])
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)

                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]

                T.copy(V[bz, by, k * block_N : (k + 1) * block_N, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            # the sink joins the denominator only
            for i in T.Parallel(block_M):
                logsum[i] += T.exp2(sinks[i] * 1.44269504 - scores_max[i] * scale)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, by, bx * block_M : (bx + 1) * block_M, :])

    return main


def ref_program(query, key, value, sinks, sliding_window: Optional[int] = None, dtype=torch.float16):
    q, k, v = query.float(), key.float(), value.float()
    n_q, n_kv = q.size(2), k.size(2)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / q.size(-1) ** 0.5
    qi = torch.arange(n_q, device=q.device)[:, None] + (n_kv - n_q)
    ki = torch.arange(n_kv, device=q.device)[None, :]
    keep = qi >= ki
    if sliding_window is not None:
        keep &= qi < ki + sliding_window
    scores = scores.masked_fill(~keep, float("-inf"))
    sink = sinks.float().view(1, -1, 1, 1).expand(scores.size(0), -1, n_q, 1)
    probs = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :-1]
    return torch.einsum("bhqk,bhkd->bhqd", probs, v).to(dtype)


def main(batch=1, heads=32, seq_q=256, seq_kv=256, dim=128, window_size=None, tune=False):
    if tune:
        kernel = flashattn(batch, heads, seq_q, seq_kv, dim, window_size)
    else:
        kernel = flashattn(batch, heads, seq_q, seq_kv, dim, window_size, block_M=128, block_N=128, num_stages=2, threads=256)
    q = torch.randn(batch, heads, seq_q, dim, device="cuda", dtype=torch.float16)
    k = torch.randn(batch, heads, seq_kv, dim, device="cuda", dtype=torch.float16)
    v = torch.randn_like(k)
    sinks = torch.randn(heads, device="cuda", dtype=torch.float16)
    o = kernel(q, k, v, sinks)
    torch.testing.assert_close(o, ref_program(q, k, v, sinks, window_size), rtol=1e-2, atol=1e-2)
    print(f"tilelang: {do_bench(lambda: kernel(q, k, v, sinks)):.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--seq_q", type=int, default=256)
    parser.add_argument("--seq_kv", type=int, default=256)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--window_size", type=int, default=None)
    parser.add_argument("--tune", action="store_true")
    args = parser.parse_args()
    main(args.batch, args.heads, args.seq_q, args.seq_kv, args.dim, args.window_size, args.tune)
