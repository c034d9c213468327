import numpy as np
import tilelang
import tilelang.language as T

# MInference's vertical-slash sparse attention (minference/
# example_vertical_slash_sparse_attn.py): each 64-query block attends to
# 64-key blocks at given offsets (the "slash" diagonals, causal) and to
# given single key columns (the "vertical" lines), its producer warpgroup
# loading the blocks by TMA and its consumer computing, with hand-written
# barriers, both branches of `if tid >= 128` looping over the blocks. The
# kernel is the example's; the index construction, the reference and the
# driver are written for this port (the example builds its indices with a
# CUDA extension and compares with Triton).


@tilelang.jit(out_idx=[3])
def _tl_vs_sparse_flashattn(batch, heads, seq_len, dim, vertical_size, slash_size):
    block_M = 64
    block_N = 64
    num_stages = 2
    threads = 128
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [batch, heads, seq_len, dim]

    seq_blocks = (seq_len + block_M - 1) // block_M

    count_shape = [batch, heads, seq_blocks]

    offset_shape = count_shape + [slash_size]
    index_shape = count_shape + [vertical_size]

    vertical_size_round, slash_size_round = tilelang.next_power_of_2(vertical_size), tilelang.next_power_of_2(slash_size)

    dtype = T.float16
    accum_dtype = T.float32
    int_dtype = T.int32

    def kernel_func(block_M, block_N, num_stages, threads):
        @T.macro
        def Prefetch(
            K: T.Tensor(shape, dtype),
            V: T.Tensor(shape, dtype),
            K_shared: T.SharedBuffer([num_stages, block_N, dim], dtype),
            V_shared: T.SharedBuffer([num_stages, block_N, dim], dtype),
            stage: T.int32,
            column_index: T.SharedBuffer([vertical_size_round], int_dtype),
            column_count: T.int32,
            k: T.int32,
            bz: T.int32,
            by: T.int32,
        ):
            for i, j in T.Parallel(block_N, dim, prefer_async=True, annotations={"parallel_async_without_async_commit_wait": True}):
                K_shared[stage, i, j] = T.if_then_else(k + i < column_count, K[bz, by, column_index[k + i], j], 0)

            for i, j in T.Parallel(block_N, dim, prefer_async=True, annotations={"parallel_async_without_async_commit_wait": True}):
                V_shared[stage, i, j] = T.if_then_else(k + i < column_count, V[bz, by, column_index[k + i], j], 0)

            T.ptx_commit_group()

        @T.macro
        def Compute(
            acc_s: T.FragmentBuffer([block_M, block_N], accum_dtype),
            acc_s_cast: T.FragmentBuffer([block_M, block_N], dtype),
            acc_o: T.FragmentBuffer([block_M, dim], accum_dtype),
            scores_max: T.FragmentBuffer([block_M], accum_dtype),
            scores_max_prev: T.FragmentBuffer([block_M], accum_dtype),
            k: T.int32,
            column_count: T.int32,
            Q_shared: T.SharedBuffer([block_M, dim], dtype),
            K_shared: T.SharedBuffer([num_stages, block_N, dim], dtype),
            V_shared: T.SharedBuffer([num_stages, block_N, dim], dtype),
            stage: T.int32,
            scores_scale: T.FragmentBuffer([block_M], accum_dtype),
            scores_sum: T.FragmentBuffer([block_M], accum_dtype),
            logsum: T.FragmentBuffer([block_M], accum_dtype),
            count: T.int32,
        ):
            T.ptx_wait_group(count)
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.if_then_else(k + j < column_count, 0, -T.infinity(acc_s.dtype))
            T.gemm(Q_shared, K_shared[stage, :, :], acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

            T.copy(scores_max, scores_max_prev)
            T.reduce_max(acc_s, scores_max, dim=1, clear=False)
            for i in T.Parallel(block_M):
                scores_max[i] = T.max(scores_max[i], scores_max_prev[i])

            for i in T.Parallel(block_M):
                scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] = acc_o[i, j] * scores_scale[i]

            T.copy(acc_s, acc_s_cast)

            T.gemm(acc_s_cast, V_shared[stage, :, :], acc_o, policy=T.GemmWarpPolicy.FullRow)

            T.reduce_sum(acc_s, scores_sum, dim=1)

            for i in T.Parallel(block_M):
                logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]

        @T.prim_func
        def vs_sparse_flashattn_ws(
            Q: T.Tensor(shape, dtype),
            K: T.Tensor(shape, dtype),
            V: T.Tensor(shape, dtype),
            Output: T.Tensor(shape, dtype),
            BlockCount: T.Tensor(count_shape, int_dtype),
            BlockOffset: T.Tensor(offset_shape, int_dtype),
            ColumnCount: T.Tensor(count_shape, int_dtype),
            ColumnIndex: T.Tensor(index_shape, int_dtype),
        ):
            with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=256) as (bc, by, bz):
                bx = T.ceildiv(seq_len, block_M) - 1 - bc
                Q_shared = T.alloc_shared([block_M, dim], dtype)
                K_shared = T.alloc_shared([num_stages, block_N, dim], dtype)
                V_shared = T.alloc_shared([num_stages, block_N, dim], dtype)
                O_shared = T.alloc_shared([block_M, dim], dtype)
                acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
                acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
                acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
                scores_max = T.alloc_fragment([block_M], accum_dtype)
                scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
                scores_scale = T.alloc_fragment([block_M], accum_dtype)
                scores_sum = T.alloc_fragment([block_M], accum_dtype)
                logsum = T.alloc_fragment([block_M], accum_dtype)
                block_count = T.alloc_var(dtype=int_dtype)
                block_offset = T.alloc_shared([slash_size_round], int_dtype, scope="shared")
                column_count = T.alloc_var(dtype=int_dtype)
                column_index = T.alloc_shared([vertical_size_round], int_dtype, scope="shared")

                mbars = T.alloc_barrier([128] * 9)

                block_count = BlockCount[bz, by, bx]
                column_count = ColumnCount[bz, by, bx]

                for vi in T.Parallel(slash_size_round):
                    if vi < slash_size:
                        block_offset[vi] = BlockOffset[bz, by, bx, vi]

                for vi in T.Parallel(vertical_size_round):
                    if vi < vertical_size:
                        column_index[vi] = ColumnIndex[bz, by, bx, vi]

                tid = T.get_thread_binding()

                if tid >= 128:
                    T.annotate_producer_reg_dealloc()
                    T.tma_copy(Q[bz, by, bx * block_M : (bx + 1) * block_M, :], Q_shared, barrier=mbars[8])
                    T.mbarrier_arrive(mbarrier=mbars[8])
                    for bi in T.serial(block_count):
                        k = block_offset[bi]
                        T.mbarrier_wait_parity(mbarrier=mbars[bi % 2 + 4], parity=(((bi & 3) >> 1) ^ 1))
                        T.tma_copy(K[bz, by, k : k + block_N, :], K_shared[bi % 2, :, :], barrier=mbars[bi % 2])
                        T.mbarrier_arrive(mbarrier=mbars[bi % 2])
                        T.mbarrier_wait_parity(mbarrier=mbars[bi % 2 + 6], parity=(((bi & 3) >> 1) ^ 1))
                        T.tma_copy(V[bz, by, k : k + block_N, :], V_shared[bi % 2, :, :], barrier=mbars[bi % 2 + 2])
                        T.mbarrier_arrive(mbarrier=mbars[bi % 2 + 2])
                else:
                    T.annotate_consumer_reg_alloc()
                    T.fill(acc_o, 0)
                    T.fill(logsum, 0)
                    T.fill(scores_max, -T.infinity(accum_dtype))
                    T.mbarrier_wait_parity(mbarrier=mbars[8], parity=0)
                    for bi in T.serial(block_count):
                        k = block_offset[bi]
                        for i, j in T.Parallel(block_M, block_N):
                            acc_s[i, j] = T.if_then_else(bx * block_M + i >= k + j, 0, -T.infinity(acc_s.dtype))

                        T.mbarrier_wait_parity(mbarrier=mbars[bi % 2], parity=((bi & 3) >> 1))
                        T.gemm(Q_shared, K_shared[bi % 2, :, :], acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                        T.mbarrier_arrive(mbarrier=mbars[bi % 2 + 4])

                        T.copy(scores_max, scores_max_prev)

                        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                        for i in T.Parallel(block_M):
                            scores_max[i] = T.max(scores_max[i], scores_max_prev[i])

                        for i in T.Parallel(block_M):
                            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                        for i, j in T.Parallel(block_M, block_N):
                            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                        for i, j in T.Parallel(block_M, dim):
                            acc_o[i, j] = acc_o[i, j] * scores_scale[i]

                        T.copy(acc_s, acc_s_cast)
                        T.mbarrier_wait_parity(mbarrier=mbars[bi % 2 + 2], parity=((bi & 3) >> 1))
                        T.gemm(acc_s_cast, V_shared[bi % 2, :, :], acc_o, policy=T.GemmWarpPolicy.FullRow)

                        T.mbarrier_arrive(mbarrier=mbars[bi % 2 + 6])

                        T.reduce_sum(acc_s, scores_sum, dim=1)

                        for i in T.Parallel(block_M):
                            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]

                    if column_count != 0:
                        Prefetch(K, V, K_shared, V_shared, 0, column_index, column_count, 0, bz, by)
                        for bi in T.serial(T.ceildiv(column_count, block_N) - 1):
                            k = bi * block_N
                            Prefetch(
                                K,
                                V,
                                K_shared,
                                V_shared,
                                (bi + 1) % num_stages,
                                column_index,
                                column_count,
                                k + block_N,
                                bz,
                                by,
                            )

                            Compute(
                                acc_s,
                                acc_s_cast,
                                acc_o,
                                scores_max,
                                scores_max_prev,
                                k,
                                column_count,
                                Q_shared,
                                K_shared,
                                V_shared,
                                bi % num_stages,
                                scores_scale,
                                scores_sum,
                                logsum,
                                1,
                            )
                        last_stage = (T.ceildiv(column_count, block_N) - 1) % num_stages
                        Compute(
                            acc_s,
                            acc_s_cast,
                            acc_o,
                            scores_max,
                            scores_max_prev,
                            T.ceildiv(column_count, block_N) * block_N - block_N,
                            column_count,
                            Q_shared,
                            K_shared,
                            V_shared,
                            last_stage,
                            scores_scale,
                            scores_sum,
                            logsum,
                            0,
                        )
                    for i, j in T.Parallel(block_M, dim):
                        acc_o[i, j] /= logsum[i]
                    T.copy(acc_o, O_shared)
                    T.copy(O_shared, Output[bz, by, bx * block_M : (bx + 1) * block_M, :])

        return vs_sparse_flashattn_ws

    return kernel_func(block_M, block_N, num_stages, threads)


def random_indices(batch, heads, seq_len, vertical_size, slash_size, rng):
    """Per query block: the diagonal block and some earlier ones (offsets in
    descending order, at most slash_size) and up to vertical_size earlier
    key columns, ascending."""
    nb = (seq_len + 63) // 64
    shape = (batch, heads, nb)
    block_count = np.zeros(shape, np.int32)
    block_offset = np.zeros(shape + (slash_size,), np.int32)
    column_count = np.zeros(shape, np.int32)
    column_index = np.zeros(shape + (vertical_size,), np.int32)
    for b in range(batch):
        for h in range(heads):
            for x in range(nb):
                earlier = rng.permutation(x)[: int(rng.integers(0, min(x, slash_size - 1) + 1))]
                offs = sorted([x] + list(earlier), reverse=True)
                block_count[b, h, x] = len(offs)
                block_offset[b, h, x, : len(offs)] = np.array(offs) * 64
                c = int(rng.integers(0, min(x * 64, vertical_size) + 1)) if x else 0
                cols = np.sort(rng.choice(x * 64, c, replace=False)) if c else []
                column_count[b, h, x] = c
                column_index[b, h, x, :c] = cols
    return block_count, block_offset, column_count, column_index


def ref_program(q, k, v, block_count, block_offset, column_count, column_index):
    """softmax(q k^T / sqrt(d)) v in float64 over each query's keys: the
    causal part of its block's slash blocks, then its vertical columns."""
    batch, heads, seq_len, dim = q.shape
    out = np.zeros(q.shape)
    for b in range(batch):
        for h in range(heads):
            for qi in range(seq_len):
                x = qi // 64
                keys = [o + j for o in block_offset[b, h, x, : block_count[b, h, x]] for j in range(64) if qi >= o + j]
                keys += list(column_index[b, h, x, : column_count[b, h, x]])
                s = k[b, h, keys].astype(np.float64) @ q[b, h, qi].astype(np.float64) / np.sqrt(dim)
                p = np.exp(s - s.max())
                out[b, h, qi] = p @ v[b, h, keys].astype(np.float64) / p.sum()
    return out


def main(batch=1, heads=4, seq_len=1024, dim=64, vertical_size=128, slash_size=16):
    import torch

    rng = np.random.default_rng(0)
    idx = random_indices(batch, heads, seq_len, vertical_size, slash_size, rng)
    q, k, v = (torch.randn(batch, heads, seq_len, dim, dtype=torch.float16, device="cuda") for _ in range(3))
    kernel = _tl_vs_sparse_flashattn(batch, heads, seq_len, dim, vertical_size, slash_size)
    out = kernel(q, k, v, *(torch.from_numpy(a).cuda() for a in idx))
    ref = ref_program(q.cpu().numpy(), k.cpu().numpy(), v.cpu().numpy(), *idx)
    assert np.abs(out.float().cpu().numpy() - ref).max() < 2e-2
    print("All tests passed.")


if __name__ == "__main__":
    main()
