# RUN: --emit=ptx -o /dev/null
# A fragment used element by element outside a Parallel loop is held whole
# by every thread: its registers per thread are its elements.
import tilelang
import tilelang.language as T


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
