# RUN: --emit=tir
# A factory parameter left at its default None (TileLang's tuned kernels,
# whose configuration a tuner passes in) where a number is needed: named,
# with the -D that gives it.
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(A, block_M=None, threads=None):
    M = T.const("M")
    A: T.Tensor((M, 64), T.float16)
    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
        s = T.alloc_shared((block_M, 64), T.float16)
        T.copy(A[bx * block_M, 0], s)
