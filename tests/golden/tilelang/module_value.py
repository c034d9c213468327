# RUN: --emit=summary
# A module-level name that is not a compile-time constant (here it needs
# torch) is an error only where a kernel uses it; the others (kernel,
# device) are never looked at. (Python's math module is compile-time:
# RSQRT is a constant.)
import math
import torch
import tilelang
import tilelang.language as T

SCALE = float(torch.rsqrt(torch.tensor(128.0)))
RSQRT = 1.0 / math.sqrt(128)
device = torch.device("cuda")


@tilelang.jit
def scale(X, threads: int = 64):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    with T.Kernel(T.ceildiv(N, threads), threads=threads) as bx:
        for i in T.Parallel(threads):
            X[bx * threads + i] = X[bx * threads + i] * SCALE * RSQRT


kernel = scale(torch.ones(256, device=device))
