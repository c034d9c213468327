# RUN: run --dim N=256 %s
# A factory that defines an inner factory and returns a call of it
# (TileLang's block-sparse attention examples: `def kernel_func(block_M,
# block_N, num_stages, threads)` holding the @T.prim_func, then `return
# kernel_func(block_M, ...)`): the inner factory's parameters take the
# call's values and its @T.prim_func is the kernel. Here A[i] = 3 * i,
# computed by blocks of 64 (block_M), so A's sum is 3 * 255 * 256 / 2 =
# 97920.
import tilelang
import tilelang.language as T


@tilelang.jit
def scaled_index(N):
    block_M = 64
    factor = 3

    def kernel_func(block_M, threads, scale=1):
        dtype = "float32"

        @T.macro
        def store(A, bx, i):
            A[bx * block_M + i] = T.cast(bx * block_M + i, dtype) * scale

        @T.prim_func
        def main(A: T.Tensor((N,), dtype)):
            with T.Kernel(T.ceildiv(N, block_M), threads=threads) as bx:
                for i in T.Parallel(block_M):
                    store(A, bx, i)

        return main

    return kernel_func(block_M, 64, scale=factor)
