# RUN: --emit=summary
# The diagnostics of TileLang's eager style: a T.const name no tensor has,
# T.empty in the kernel, an annotation of a name that is not a parameter,
# a return of something T.empty did not declare, statements after return.
import tilelang
import tilelang.language as T


@tilelang.jit
def unused_dim(A):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, N), "float32")
    with T.Kernel(1, threads=32):
        pass


@tilelang.jit
def empty_in_kernel(A):
    M = T.const("M")
    A: T.Tensor((M,), "float32")
    with T.Kernel(1, threads=32):
        B = T.empty((M,), "float32")


@tilelang.jit
def annotates_a_local(A):
    M = T.const("M")
    A: T.Tensor((M,), "float32")
    Z: T.Tensor((M,), "float32")
    with T.Kernel(1, threads=32):
        pass


@tilelang.jit
def returns_an_input(A):
    M = T.const("M")
    A: T.Tensor((M,), "float32")
    B = T.empty((M,), "float32")
    with T.Kernel(1, threads=32):
        pass
    return A
    B = A
