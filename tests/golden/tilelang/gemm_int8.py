# RUN: --emit=plan -D M=256 -D N=256 -D K=512
# int8 gemms into an int32 accumulator: wgmma m64nNk32 .s32.s8.s8 on
# sm_90a, mma.sync m16n8k32 .s32.s8.s8 from sm_80 on; A [M, K] and B
# [N, K] K-major in shared memory, as the float8 ones.
import tilelang
import tilelang.language as T


@tilelang.jit
def int8_gemm(M, N, K, block_M=128, block_N=128, block_K=64, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.int8), B: T.Tensor((N, K), T.int8), C: T.Tensor((M, N), T.int32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.int8)
            B_shared = T.alloc_shared((block_N, block_K), T.int8)
            C_local = T.alloc_fragment((block_M, block_N), T.int32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
