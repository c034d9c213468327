import tilelang
import tilelang.language as T


# A GEMM followed by a ReLU, in TileLang's eager style. The block sizes are
# compile-time arguments; M, N and K come from the tensors.
@tilelang.jit
def matmul(A, B, block_M: int, block_N: int, block_K: int):
    M, N, K = T.const("M, N, K")
    dtype = T.float16
    accum_dtype = T.float32
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    # one block per (block_M, block_N) tile of C
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

        # raster the blocks for L2 reuse (optional)
        # T.use_swizzle(panel_size=10, enable=True)

        T.clear(C_local)

        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            # stage the tiles of A and B in shared memory
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)

            # the tile GEMM, on the tensor cores
            T.gemm(A_shared, B_shared, C_local)

        # ReLU on the accumulator
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = T.max(C_local[i, j], 0)

        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


M = 1024
N = 1024
K = 1024
block_M = 128
block_N = 128
block_K = 32

# compile for these sizes
matmul_relu_kernel = matmul.compile(M=M, N=N, K=K, block_M=block_M, block_N=block_N, block_K=block_K)

import torch

a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)

c = matmul_relu_kernel(a, b)
print(c)

ref_c = torch.relu(a @ b)
torch.testing.assert_close(c, ref_c, rtol=1e-2, atol=1e-2)
print("Kernel output matches PyTorch reference.")

cuda_source = matmul_relu_kernel.get_kernel_source()
print("Generated CUDA kernel:\n", cuda_source)

profiler = matmul_relu_kernel.get_profiler(tensor_supply_type=tilelang.TensorSupplyType.Normal)
latency = profiler.do_bench()
print(f"Latency: {latency} ms")
