# RUN: --emit=layout
# Thread ranges across several branches: two branches that give tile work
# to the same threads share their range (its fragments and its barrier), so
# a fragment a range clears before a Pipelined loop is the one its
# branch inside the loop accumulates into (warpgroup 0 a gemm, warpgroup 1
# row sums), and ranges of 96 threads, one split again with a barrier of
# its own, the last a Parallel loop of one warp.
import tilelang.language as T

@T.prim_func
def in_pipeline(A: T.Tensor((1024, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32"), R: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        tx = T.get_thread_binding()
        a_s = T.alloc_shared((64, 64), "float16")
        b_s = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        r = T.alloc_fragment((64,), "float32")
        f = T.alloc_fragment((64, 64), "float32")
        T.copy(B, b_s)
        if tx < 128:
            T.clear(acc)
        else:
            T.clear(r)
        for k in T.Pipelined(16, num_stages=2):
            T.copy(A[k * 64, 0], a_s)
            if tx < 128:
                T.gemm(a_s, b_s, acc)
            else:
                T.copy(a_s, f)
                T.reduce_sum(f, r, dim=1, clear=False)
        if tx < 128:
            T.copy(acc, C)
        else:
            T.copy(r, R)

@T.prim_func
def odd_threads(A: T.Tensor((96, 64), "float32"), B: T.Tensor((96, 64), "float32")):
    with T.Kernel(1, threads=96) as bx:
        tx = T.get_thread_binding()
        if 64 <= tx:
            f = T.alloc_fragment((32, 64), "float32")
            T.copy(A[0:32, :], f)
            T.copy(f, B[0:32, :])
        elif tx >= 32:
            T.sync_threads()
            g = T.alloc_fragment((32, 64), "float32")
            T.copy(A[32:64, :], g)
            T.copy(g, B[32:64, :])
        else:
            for i, j in T.Parallel(32, 64):
                B[64 + i, j] = A[64 + i, j] * 2.0
