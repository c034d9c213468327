# RUN: --emit=summary
# A module-level name that is not a compile-time constant (here it needs
# Python's math module) is an error only where a kernel uses it; the
# others (kernel, device) are never looked at.
import math
import torch
import tilelang
import tilelang.language as T

SCALE = 1.0 / math.sqrt(128)
device = torch.device("cuda")


@tilelang.jit
def scale(X, threads: int = 64):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
        for i in T.Parallel(threads):
            X[bx * threads + i] = X[bx * threads + i] * SCALE


kernel = scale(torch.ones(256, device=device))
