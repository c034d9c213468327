# RUN: --emit=tir -D enable_rasteration=False
# TileLang's T.use_swizzle(panel_size, enable=flag): a compile-time switch
# (the autotuned GEMM examples pass their enable_rasteration parameter).
# gemm_on swizzles (enable=True); gemm_flag does not under
# -D enable_rasteration=False; a file's nested autotuner factory
# (get_best_config's `kernel`) is Python, skipped (docs/language.md 3.1).
import tilelang
import tilelang.language as T


@tilelang.jit
def gemm_on(M, N, K, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.use_swizzle(panel_size=10, enable=True)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


@tilelang.jit
def gemm_flag(M, N, K, enable_rasteration, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.use_swizzle(panel_size=10, enable=enable_rasteration)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main


def get_best_config(M, N, K):
    def kernel(block_M=None, block_N=None, block_K=None):
        @T.prim_func
        def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
                T.clear(C[by, bx])

        return main

    return autotune_somehow(kernel, M, N, K)
