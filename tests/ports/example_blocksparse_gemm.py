import argparse
import itertools

import torch
import tilelang
import tilelang.language as T
from tilelang.profiler import do_bench

DEFAULT_BLOCK_M = 128
DEFAULT_BLOCK_N = 128
DEFAULT_BLOCK_K = 32
DEFAULT_NUM_STAGES = 2
DEFAULT_THREAD_NUM = 128
DEFAULT_ENABLE_RASTERIZATION = True


def get_configs():
    space = itertools.product([64, 128, 256], [64, 128, 256], [32, 64], [1, 2, 3], [128, 256], [True, False])
    keys = ("block_M", "block_N", "block_K", "num_stages", "thread_num", "enable_rasteration")
    return [dict(zip(keys, c)) for c in space]


def ref_program(A, B, BlockMask, block_M, block_N, block_K):
    """C = A @ B over the (block_M, block_K) x (block_K, block_N) products the mask keeps."""
    M, K = A.shape
    N = B.shape[1]
    C = torch.zeros((M, N), dtype=torch.float16, device=A.device)
    for i in range(M // block_M):
        for j in range(N // block_N):
            acc = torch.zeros((block_M, block_N), dtype=torch.float32, device=A.device)
            for k in range(K // block_K):
                if BlockMask[i, j, k]:
                    a = A[i * block_M : (i + 1) * block_M, k * block_K : (k + 1) * block_K].float()
                    b = B[k * block_K : (k + 1) * block_K, j * block_N : (j + 1) * block_N].float()
                    acc += a @ b
            C[i * block_M : (i + 1) * block_M, j * block_N : (j + 1) * block_N] = acc.half()
    return C


@tilelang.autotune(configs=get_configs())
@tilelang.jit
def blocksparse_matmul(A, B, BlockMask, block_M, block_N, block_K, num_stages, thread_num, enable_rasteration,
                       dtype=T.float16, accum_dtype=T.float32):
    M, N, K = T.const("M, N, K")

    block_mask_shape = (M // block_M, N // block_N, K // block_K)

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    BlockMask: T.Tensor(block_mask_shape, "bool")
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=thread_num) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        C_shared = T.alloc_shared((block_M, block_N), dtype)

        T.use_swizzle(panel_size=10, enable=enable_rasteration)
        T.clear(C_local)

        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            # only the blocks the mask keeps are loaded and multiplied
            if BlockMask[by, bx, k]:
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

        T.copy(C_local, C_shared)
        T.copy(C_shared, C[by * block_M, bx * block_N])

    return C


def main():
    parser = argparse.ArgumentParser(description="Block-sparse GEMM")
    parser.add_argument("--m", type=int, default=1024)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--sparsity", type=float, default=0.5, help="fraction of blocks skipped")
    parser.add_argument("--use_autotune", action="store_true")
    args, _ = parser.parse_known_args()
    M, N, K = args.m, args.n, args.k

    a = torch.randn(M, K).cuda().half()
    b = torch.randn(K, N).cuda().half()
    if args.use_autotune:
        kernel = blocksparse_matmul(M, N, K)  # autotuned on its first call
        block_M, block_N, block_K = kernel.config["block_M"], kernel.config["block_N"], kernel.config["block_K"]
    else:
        block_M, block_N, block_K = DEFAULT_BLOCK_M, DEFAULT_BLOCK_N, DEFAULT_BLOCK_K
    mask = torch.rand(M // block_M, N // block_N, K // block_K).cuda() > args.sparsity
    c = blocksparse_matmul(a, b, mask, block_M, block_N, block_K, DEFAULT_NUM_STAGES, DEFAULT_THREAD_NUM,
                           DEFAULT_ENABLE_RASTERIZATION)
    torch.testing.assert_close(c, ref_program(a, b, mask, block_M, block_N, block_K), rtol=1e-2, atol=1e-2)
    print(f"ok; {do_bench(lambda: blocksparse_matmul(a, b, mask, block_M, block_N, block_K, 2, 128, True)):.3f} ms")


if __name__ == "__main__":
    main()
