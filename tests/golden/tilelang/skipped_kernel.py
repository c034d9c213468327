# RUN: --kernel=ref_program
# --kernel naming a function tlc reads as Python says so.
import torch
import tilelang
import tilelang.language as T


def ref_program(x):
    return torch.relu(x)


@tilelang.jit
def relu(X, threads: int = 128):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
        for i in T.Parallel(threads):
            Y[bx * threads + i] = T.max(X[bx * threads + i], 0)
    return Y
