# RUN: --emit=tir
# A parameter without a default that only a function's second kernel uses
# (and that is no tensor's dimension) is named, with the -D that gives it,
# like one the first kernel uses.
import tilelang
import tilelang.language as T


@tilelang.jit
def scale_then_shift(X, d: int = 64, scale: float = 2.0, shift: float):
    n = T.const("n")
    X: T.Tensor((n, d), "float32")
    Y = T.empty((n, d), "float32")
    scaled = T.alloc_global((n, d), "float32")
    with T.Kernel(n, threads=128) as b:
        for i in T.Parallel(d):
            scaled[b, i] = X[b, i] * scale
    with T.Kernel(n, threads=128) as b:
        for i in T.Parallel(d):
            Y[b, i] = scaled[b, i] + shift
    return Y
