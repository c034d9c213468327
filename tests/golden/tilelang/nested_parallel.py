# RUN: --emit=tir
# TVM's T.parallel, and Parallel loops nested with nothing else around the
# inner one (DeepSeek's HISA pooling): one Parallel loop over both.
import tilelang.language as T


@T.prim_func
def zero_tail(X: T.Tensor((64, 32), T.float32), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((64, 32), T.float32)
        T.copy(X, x)
        for i in T.parallel(64):
            for j in T.parallel(32):
                if i >= n:
                    x[i, j] = 0.0
        for i in T.Parallel(64):
            for j in T.Parallel(32):
                x[i, j] = x[i, j] * 2.0
        T.copy(x, X)
