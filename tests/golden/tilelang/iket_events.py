# RUN: --emit=tir
# TileLang's IKET profiling events: `with ... as bx, iket.range(...)` (two
# with items, the second inside the first, as in Python) and iket.mark
# calls; tlc records no events (a warning each) and compiles the kernel.
import tilelang.language as T
from tilelang.tools.cuda import iket


@T.prim_func
def add(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32), C: T.Tensor((1024,), T.float32)):
    with T.Kernel(8, threads=128) as bx, iket.range("kernel_total"):
        iket.mark("block_enter", payload=iket.payload(bx, dtype="int32"))
        for i in T.Parallel(128):
            C[bx * 128 + i] = A[bx * 128 + i] + B[bx * 128 + i]
        iket.mark("block_exit")
