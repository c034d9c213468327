# RUN: --emit=layout
# A fragment read at an index all of a Parallel loop's iterations share
# (flash decoding's combine: lse[k, j] in a serial loop over the splits k):
# every thread must hold that whole dim, so the fragment keeps it in
# register slots beside the loop's own placement (and the serial loop is
# unrolled, so that the registers are indexed by constants). A constant
# index (row 0 of lse) is one too, and a copy of a row of a fragment into
# another (flash decoding's MHA file: T.copy(lse[k, :], row)) is written as
# such a loop.
import tilelang.language as T


@T.prim_func
def combine(G: T.Tensor((8, 128), "float32"), O: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        lse = T.alloc_fragment((8, 128), "float32")
        m = T.alloc_fragment((128,), "float32")
        total = T.alloc_fragment((128,), "float32")
        for k, j in T.Parallel(8, 128):
            lse[k, j] = G[k, j]
        T.reduce_max(lse, m, dim=0)
        T.clear(total)
        for k in T.serial(8):
            for j in T.Parallel(128):
                total[j] += T.exp2(lse[k, j] - m[j])
        for j in T.Parallel(128):
            O[j] = T.log2(total[j]) + m[j] + lse[0, j]


@T.prim_func
def row_copy(G: T.Tensor((8, 64), "float32"), O: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        lse = T.alloc_fragment((8, 64), "float32")
        row = T.alloc_fragment((64,), "float32")
        acc = T.alloc_fragment((64,), "float32")
        T.copy(G, lse)
        T.clear(acc)
        for k in T.serial(8):
            T.copy(lse[k, :], row)
            for i in T.Parallel(64):
                acc[i] += row[i] * (k + 1)
        T.copy(acc, O)
