# RUN: --emit=summary
# What a tensor dimension may not be: an expression of something else than
# sizes and integer scalar parameters (a float, a float scalar parameter,
# through a cast too); more derived dims and asserts than
# the 8 launch checks a kernel has.
import tilelang
import tilelang.language as T


@tilelang.jit
def float_dim(A):
    N = T.const("N")
    A: T.Tensor((N * 0.5,), T.float32)
    with T.Kernel(1, threads=32):
        A[0] = 1.0


def scalar_dim(x: T.float32, A: T.Tensor((T.int32(x) + 1,), T.float32)):
    with T.Kernel(1, threads=32):
        A[0] = 1.0


@tilelang.jit
def too_many(A, B, C):
    N = T.const("N")
    A: T.Tensor((N + 1, N + 2, N + 3), T.float32)
    B: T.Tensor((N + 4, N + 5, N + 6), T.float32)
    C: T.Tensor((N + 7, N + 8, N + 9), T.float32)
    with T.Kernel(1, threads=32):
        A[0, 0, 0] = 1.0
