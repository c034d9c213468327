# RUN: --emit=tir
# T.Tensor(shape) without a dtype is float32, as in TileLang.
import tilelang.language as T


@T.prim_func
def scale(A: T.Tensor((256,)), B: T.Tensor((256,), T.float16)):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(128):
            B[bx * 128 + i] = A[bx * 128 + i] * 2.0
