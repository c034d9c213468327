# RUN: --emit=layout
# T.reshape of a fragment (DeepSeek V3.2's lightning indexer): the view
# holds the same elements in the same registers under another shape, its
# layout the base's with digits split where they cross the new dims; a
# reduce over the view's last dim reduces within each group of the base's
# columns.
import tilelang.language as T


@T.prim_func
def grouped_sums(X: T.Tensor((64, 128), T.float32), W: T.Tensor((2, 64), T.float32), Out: T.Tensor((64, 2), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_fragment((64, 128), T.float32)
        s_grouped = T.reshape(s, (64, 2, 64))
        sums = T.alloc_fragment((64, 2), T.float32)
        T.copy(X, s)
        for i, q, h in T.Parallel(64, 2, 64):
            s_grouped[i, q, h] = T.max(s_grouped[i, q, h], 0) * W[q, h]
        T.reduce_sum(s_grouped, sums, dim=-1)
        T.copy(sums, Out)
