# RUN: --emit=tir
# What T.Persistent refuses.
import tilelang
import tilelang.language as T


@T.prim_func
def persistent_errors(X: T.Tensor((64, 64), "float32")):
    with T.Kernel(8, threads=128) as b:
        for i, j in T.Persistent([4, 12], 8, b):
            X[i, j] = 1.0
        for i in T.Persistent([4, 4], 8, b):
            X[i, 0] = 1.0
        for i, j in T.Persistent([4, 0], 8, b):
            X[i, j] = 1.0
        for i, j in T.Persistent([4, 4], 0, b):
            X[i, j] = 1.0
        for i, j in T.Persistent([4, 4], 8, b, group_size=0):
            X[i, j] = 1.0
        for i, j in T.Persistent(4, 8, b):
            X[i, j] = 1.0
        for i, j in T.Persistent([4, 4], 8):
            X[i, j] = 1.0
