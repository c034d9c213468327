# RUN: run %s
# TileLang reduces from and into shared memory (the KDA examples:
# T.reduce_sum(dgkn_shared, frag, dim=1)); tlc stages the shared operand
# through a fragment of its shape (copied in, and out for a destination;
# a destination with clear=False is copied in first). Here S[i, j] = j:
# B (row sums into shared, clear=False over a fill of 1) is 1 + 496 = 497
# in every row, C (column maxima of S) is 0 .. 31, D (row maxima into
# shared) is 31 everywhere.
import tilelang
import tilelang.language as T


@tilelang.jit
def reduce_shared():
    @T.prim_func
    def main(B: T.Tensor((64,), "float32"), C: T.Tensor((32,), "float32"), D: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((64, 32), "float32")
            R = T.alloc_shared((64,), "float32")
            M = T.alloc_shared((64,), "float32")
            cmax = T.alloc_fragment((32,), "float32")
            for i, j in T.Parallel(64, 32):
                S[i, j] = T.cast(j, "float32")
            T.fill(R, 1.0)
            T.reduce_sum(S, R, dim=1, clear=False)
            T.reduce_max(S, cmax, dim=0)
            T.reduce_max(S, M, dim=1)
            T.copy(R, B)
            T.copy(cmax, C)
            T.copy(M, D)

    return main
