# RUN: --emit=layout
# Fragments used element by element outside a Parallel loop: every thread
# holds all of them, which refuses what needs them spread over the threads.
import tilelang
import tilelang.language as T


@tilelang.jit
def written_spread():
    # the loop's iterations follow f's layout, so each thread would update
    # only its part of its copy of s
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((64, 64), "float32")
            s = T.alloc_fragment((64,), "float32")
            T.copy(A, f)
            s[0] = 1.0
            for i, j in T.Parallel(64, 64):
                s[i] = f[i, j]
            T.copy(f, B)

    return main


@tilelang.jit
def accumulator_outside():
    # a gemm's accumulator is spread over the threads as the tensor cores
    # place it; reading one element outside a Parallel loop wants all of it
    # in every thread, more registers than a thread has
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared((64, 64), "float16")
            c = T.alloc_fragment((64, 64), "float32")
            T.copy(A, a)
            T.clear(c)
            T.gemm(a, a, c)
            B[0] = c[0, 0]

    return main


@tilelang.jit
def too_large():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((64, 64), "float32")
            T.copy(A, f)
            f[0, 0] = 0.0
            T.copy(f, B)

    return main
