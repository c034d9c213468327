# RUN: --emit=tir
# A fragment that only ever has single elements read and written outside
# Parallel loops, in thread-indexed code, holding a value per thread (as
# DeepSeek V3.2's seesaw sparse MLA forward keeps the indices each producer
# thread prefetches): TileLang keeps it in each thread's registers, and tlc
# takes it as the per-thread buffer it is (`local` below, as alloc_local).
# A fragment the block's work uses (a tile op, a Parallel loop) cannot hold
# per-thread values (thread_binding_errors.py).
import tilelang.language as T


@T.prim_func
def weighted_rows(A: T.Tensor((128, 4), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        f = T.alloc_fragment((4,), "float32")
        for r in T.serial(4):
            f[r] = A[tx, r] * (r + 1)
        B[tx] = f[0] + f[1] + f[2] + f[3]


# A fragment stored from such a buffer holds per-thread values in turn
# (found by the analysis's next round): `local` too.
@T.prim_func
def chained(A: T.Tensor((128, 4), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        f = T.alloc_fragment((4,), "float32")
        g = T.alloc_fragment((1,), "float32")
        for r in T.serial(4):
            f[r] = A[tx, r]
        g[0] = f[0] + f[3]
        B[tx] = g[0]
