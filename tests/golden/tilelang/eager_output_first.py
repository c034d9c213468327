"""An eager function whose T.empty output is declared before one of its
inputs: the inputs stay first and the output last, in the parameters and
in the buffers (the Tile IR verifier checks both)."""
import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, block=64):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    B: T.Tensor((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        s = T.alloc_fragment((block,), T.float32)
        for i in T.Parallel(block):
            s[i] = A[bx * block + i] + B[bx * block + i]
        T.copy(s, C[bx * block])
    return C
