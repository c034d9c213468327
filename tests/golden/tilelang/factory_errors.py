# RUN: --emit=summary
# The diagnostics of a TileLang factory: parameters without a default that
# a constant needs, or that no tensor has as a dimension; the return value;
# a name that is none of its @T.prim_func functions; a tensor among the
# factory's parameters.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def needs_defines(M, N, block_M, dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            t = T.alloc_fragment((block_M, N), "float32")
            T.copy(A[bx * block_M, 0], t)
            T.copy(t, B[bx * block_M, 0])

    return main


@tilelang.jit
def not_a_dimension(M, scale, block_M=64):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=64) as bx:
            for i in T.Parallel(block_M):
                A[bx * block_M + i] = A[bx * block_M + i] * scale

    return main


@tilelang.jit
def returns_something_else(N=64):
    @T.prim_func
    def kernel(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            pass

    @T.prim_func
    def second(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            pass

    return main


@tilelang.jit
def tensor_parameter(X: T.Tensor((64,), "float32"), N=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            pass

    return main
