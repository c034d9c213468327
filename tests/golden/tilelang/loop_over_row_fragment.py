# RUN: --emit=layout
# A Parallel loop that indexes no fragment with all its variables but reads
# one with some of them (m[h] in a loop over (h, k)) runs each iteration on
# a thread that holds m[h]: the row statistic's layout, the loop's other dim
# spread over the threads that hold the same row (its replicas), the rest in
# slots (TileLang's flash-decoding logits: S_shared[h, k] from scores_max[h]).
# Y[h, k] = (max of X's row h) * k + sum of X's row h (python/tests/test_gpu.py
# runs it).
import tilelang
import tilelang.language as T


@T.prim_func
def loop_over_row(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 24), "float32")):
    with T.Kernel(1, threads=128):
        x = T.alloc_fragment((64, 64), "float32")
        m = T.alloc_fragment((64,), "float32")
        s = T.alloc_fragment((64,), "float32")
        y_shared = T.alloc_shared((64, 24), "float32")
        T.copy(X, x)
        T.reduce_max(x, m, dim=1)
        T.reduce_sum(x, s, dim=1)
        for h, k in T.Parallel(64, 24):
            y_shared[h, k] = m[h] * k + s[h]
        T.copy(y_shared, Y)
