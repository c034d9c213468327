# RUN: --emit=summary
# An inner factory's call must give every parameter without a default, and
# the inner factory returns its @T.prim_func by name.
import tilelang
import tilelang.language as T


@tilelang.jit
def missing(N):
    def kernel_func(block_M, threads):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, block_M), threads=threads) as bx:
                A[bx] = 1.0

        return main

    return kernel_func(64)


@tilelang.jit
def returns_else(N):
    def kernel_func(block_M):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, block_M), threads=32) as bx:
                A[bx] = 1.0

        return other

    return kernel_func(64)
