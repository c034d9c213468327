# RUN: --emit=summary
# PTX:
"""Scaled elementwise add, GEMM + ReLU and a row softmax in TileLang's eager
style: T.const dims, tensors annotated in the body, T.empty outputs and
`return`.

tlc compiles this file as it is. Each kernel takes its tensors and scalars in
the function's order, then the T.empty outputs (the caller allocates them):
add_scaled(A, B, alpha, C), matmul_relu(A, B, C), softmax(X, Y).
"""
import argparse

import torch
import tilelang
import tilelang.language as T


def ref_add_scaled(a, b, alpha):
    return a + alpha * b


@tilelang.jit
def add_scaled(A, B, alpha: T.float32 = 1.0, block_M: int = 32, block_N: int = 64, threads: int = 128,
               dtype: T.dtype = T.float32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_N), dtype)
        B_shared = T.alloc_shared((block_M, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), dtype)
        T.copy(A[by * block_M, bx * block_N], A_shared)
        T.copy(B[by * block_M, bx * block_N], B_shared)
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = A_shared[i, j] + alpha * B_shared[i, j]
        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


@tilelang.jit(out_idx=[-1], compile_flags=["-O3"])
def matmul_relu(A, B, block_M: int = 64, block_N: int = 64, block_K: int = 32, num_stages: int = 2):
    M, N, K = T.const("M, N, K")
    dtype = T.float16
    accum_dtype = T.float32
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)

        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = T.max(C_local[i, j], 0)
        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


@tilelang.jit
def softmax(X, N: int = 128, blk_m: int = 2):
    """Softmax over rows of N elements; the row count stays dynamic."""
    M = T.dynamic("M")
    dtype = T.float32
    log2e = 1.4426950408889634
    X: T.Tensor[[M, N], dtype]
    Y = T.empty([M, N], dtype)

    with T.Kernel(T.ceildiv(M, blk_m), threads=64 * blk_m) as bx:
        x = T.alloc_fragment((blk_m, N), dtype)
        row_max = T.alloc_fragment((blk_m,), dtype)
        row_sum = T.alloc_fragment((blk_m,), dtype)
        T.copy(X[bx * blk_m, 0], x)
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(blk_m, N):
            x[i, j] = T.exp2((x[i, j] - row_max[i]) * log2e)
        T.reduce_sum(x, row_sum, dim=1)
        for i, j in T.Parallel(blk_m, N):
            x[i, j] = x[i, j] / row_sum[i]
        T.copy(x, Y[bx * blk_m, 0])

    return Y


def main(m=1024, n=1024, k=512):
    a = torch.randn(m, n, dtype=torch.float32, device="cuda")
    b = torch.randn(m, n, dtype=torch.float32, device="cuda")
    c = add_scaled(a, b, 0.5)
    torch.testing.assert_close(c, ref_add_scaled(a, b, 0.5), rtol=1e-5, atol=1e-5)

    x = torch.randn(m, k, dtype=torch.float16, device="cuda")
    w = torch.randn(k, n, dtype=torch.float16, device="cuda")
    torch.testing.assert_close(matmul_relu(x, w), torch.relu(x @ w), rtol=1e-2, atol=1e-2)

    s = torch.randn(m, 128, dtype=torch.float32, device="cuda")
    torch.testing.assert_close(softmax(s), torch.softmax(s, dim=-1), rtol=1e-5, atol=1e-6)
    print("✓ all kernels match torch")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    args, _ = parser.parse_known_args()
    main(args.m, args.n)
