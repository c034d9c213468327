# RUN: --emit=plan -D M=256 -D N=256 -D K=256
# float32 gemms on the tensor cores as tf32 (TileLang's float32 T.gemm):
# A [M, K] and B [N, K] K-major in shared memory, k8 steps of 32 bytes;
# operands stored MN-major (B [K, N], A [K, M]: Kimi's KDA solve) through
# mma.sync, each register read from shared memory alone.
import tilelang
import tilelang.language as T


@tilelang.jit
def tf32_gemm(M, N, K, block_M=128, block_N=128, block_K=32, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float32), B: T.Tensor((N, K), T.float32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float32)
            B_shared = T.alloc_shared((block_N, block_K), T.float32)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@T.prim_func
def tf32_mn_major(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 128), T.float32),
                  C: T.Tensor((64, 128), T.float32), D: T.Tensor((64, 128), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_s = T.alloc_shared((64, 64), T.float32)
        b_s = T.alloc_shared((64, 128), T.float32)
        c = T.alloc_fragment((64, 128), T.float32)
        d = T.alloc_fragment((64, 128), T.float32)
        T.copy(A, a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, c, clear_accum=True)
        T.gemm(a_s, b_s, d, transpose_A=True, clear_accum=True)
        T.copy(c, C)
        T.copy(d, D)
