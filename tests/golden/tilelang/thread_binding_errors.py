# RUN: --emit=tir
# Thread-indexed code tlc refuses, each with where and why: tile
# operations and Parallel loops are the block's work, so none may run under
# a condition on the thread's index (other than one that splits the threads
# into ranges, thread_ranges.py) or read a value that differs between
# threads (nor may a T.sync_threads, which every thread must reach), nor
# write a per-thread buffer holding values that differ (mixed); a fragment the
# block's work uses cannot hold per-thread values (fragment_per_thread.py has
# one that can); thread axes must make a block tlc can launch.
import tilelang.language as T


@T.prim_func
def block_work_parted(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        s = T.alloc_shared((128, 64), "float32")
        f = T.alloc_fragment((128, 64), "float32")
        if tx % 2 == 0:
            T.copy(A, s)
        T.fill(f, tx)
        for i, j in T.Parallel(128, 64):
            f[i, j] = s[i, j] * tx
        for k in T.Pipelined(tx, num_stages=2):
            T.copy(A[0, 0], s)
        f[0, 0] = tx
        if tx < 32:
            T.sync_threads()
        T.copy(f, B)


@T.prim_func
def bad_axes(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=(3, 5)) as bx:
        A[bx] = T.get_thread_binding(3)


@T.prim_func
def outside(A: T.Tensor((64,), "float32")):
    t = T.get_thread_binding()
    with T.Kernel(1, threads=(32, 2, 2)) as bx:
        A[bx] = t


@T.prim_func
def mixed(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        loc = T.alloc_local((4,), "float32")
        s = T.alloc_shared((128,), "float32")
        loc[3] = tx
        for i in T.Parallel(128):
            s[i] = A[i]
            loc[0] = 1.0
        B[tx] = loc[3] + loc[0] + s[tx]
