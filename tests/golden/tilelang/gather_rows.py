# RUN: --emit=plan --arch=sm_80
# PTX:
import tilelang
import tilelang.language as T


# Rows of a global tensor picked at run time and loaded into shared tiles by
# a Parallel loop (a gather): a Pipelined loop loads them with its stages.


@tilelang.jit
def gather_gemm(A, B, rows, block_M=64, block_N=64, block_K=64, num_stages=3, threads=128):
    # C[i, :] = A[rows[i], :] @ B, a zero row where rows[i] < 0 (MoE's gathered tokens)
    M, N, K, T_ = T.const("M, N, K, T_")
    A: T.Tensor((T_, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    rows: T.Tensor((M,), T.int32)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            for i, j in T.Parallel(block_M, block_K):
                r = by * block_M + i
                if r < M and rows[r] >= 0:
                    A_shared[i, j] = A[rows[r], k * block_K + j]
                else:
                    A_shared[i, j] = 0
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, acc)
        T.copy(acc, C[by * block_M, bx * block_N])
    return C


@tilelang.jit
def gather_sum(X, idx, block_R=32, block_D=64, num_stages=2, threads=128):
    # out[b, r, :] = sum over k of X[idx[b, k, r], d-tile], rows picked by T.if_then_else
    Bn, NK, D, T_ = T.const("Bn, NK, D, T_")
    X: T.Tensor((T_, D), T.float16)
    idx: T.Tensor((Bn, NK, block_R), T.int32)
    out = T.empty((Bn, block_R, D), T.float32)
    with T.Kernel(T.ceildiv(D, block_D), Bn, threads=threads) as (bd, b):
        X_shared = T.alloc_shared((block_R, block_D), T.float16)
        acc = T.alloc_fragment((block_R, block_D), T.float32)
        T.clear(acc)
        for k in T.Pipelined(NK, num_stages=num_stages):
            for r, j in T.Parallel(block_R, block_D):
                X_shared[r, j] = T.if_then_else(idx[b, k, r] >= 0, X[idx[b, k, r], bd * block_D + j], 0)
            for r, j in T.Parallel(block_R, block_D):
                acc[r, j] += X_shared[r, j]
        T.copy(acc, out[b, 0, bd * block_D])
    return out


@tilelang.jit
def gather_from_written(X, idx, block_R=32, block_D=64, num_stages=2, threads=128):
    # the kernel writes the index tensor it gathers by: its reads cannot run
    # iterations ahead, so the gather stays in the body (a serial loop)
    NK, D, T_ = T.const("NK, D, T_")
    X: T.Tensor((T_, D), T.float16)
    idx: T.Tensor((NK, block_R), T.int32)
    out = T.empty((block_R, D), T.float32)
    with T.Kernel(T.ceildiv(D, block_D), threads=threads) as bd:
        X_shared = T.alloc_shared((block_R, block_D), T.float16)
        acc = T.alloc_fragment((block_R, block_D), T.float32)
        T.clear(acc)
        for k in T.Pipelined(NK, num_stages=num_stages):
            for r, j in T.Parallel(block_R, block_D):
                X_shared[r, j] = X[idx[k, r], bd * block_D + j]
            for r, j in T.Parallel(block_R, block_D):
                acc[r, j] += X_shared[r, j]
        T.copy(acc, out[0, bd * block_D])
        for r in T.Parallel(block_R):
            idx[0, r] = 0
    return out
