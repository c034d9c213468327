# RUN: --emit=tir
# Branches on the thread index that hold barrier statements (TileLang's
# manual warp specialization written without T.ws): tlc takes the split in
# the form `tid < N` (or <=, >, >=), so that it can count the threads that
# arrive in each branch, and runs both branches in program order on all
# threads, so their statements cannot use the thread index.
import tilelang
import tilelang.language as T


@tilelang.jit
def thread_branches(A):
    M = T.const("M")
    A: T.Tensor((M, 256), T.float32)
    with T.Kernel(1, threads=256) as bx:
        bar = T.alloc_barrier(arrive_count=128)
        tid = T.get_thread_binding()
        if tid % 2 == 0:
            T.barrier_arrive(bar)
        if tid >= 128:
            A[0, tid] = 1.0
            T.barrier_arrive(bar)
