# RUN: --emit=summary
# A module-level name that is not a compile-time constant, read first by
# other module-level names (TileLang's stream-K example derives its schedule
# so from a tensor's shape): the kernel's use is still reported, not taken
# as an error already said. Before, the held-back evaluation of the other
# names silenced it and the statements that used it were dropped.
import torch
import tilelang
import tilelang.language as T

A = torch.rand(256, 512)
M, K = A.shape
iters_per_tile = tilelang.cdiv(K, 32)
total_iters = iters_per_tile * 4
twice = iters_per_tile * 2


@tilelang.jit
def tiles(X, threads: int = 64):
    N = T.const("N")
    X: T.Tensor((N,), "int32")
    with T.Kernel(1, threads=threads) as bx:
        for i in T.Parallel(threads):
            X[i] = i // iters_per_tile
