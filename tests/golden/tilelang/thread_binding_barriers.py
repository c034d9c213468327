# RUN: --emit=thread
# Barriers in thread-indexed code. tlc places a block barrier where one
# thread's shared-memory accesses could race another's: between the
# stores to s and the loads of a neighbour's element (`if tx < 64` does not
# part the block's statements after it), and not inside a condition on the
# thread's index, which not every thread reaches (there a needed barrier
# is an error: thread_binding_barrier_errors.py). In `staged`, each
# iteration of the loop over k stores only its own column of s (index k),
# so its back edge needs no barrier; the loads after it get one, and so do
# the next round's stores (the loads of this round read what they write).
import tilelang.language as T


@T.prim_func
def shift(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        s = T.alloc_shared((128,), "float32")
        s[tx] = A[tx]
        if tx < 64:
            B[tx] = s[127 - tx]
        else:
            B[tx] = s[tx]


@T.prim_func
def staged(A: T.Tensor((128, 256), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        s = T.alloc_shared((128, 64), "float32")
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0
        for r in T.serial(4):
            for k in T.serial(64):
                s[tx, k] = A[tx, r * 64 + k]
            for k in T.serial(64):
                acc[0] += s[127 - tx, k]
        B[tx] = acc[0]


@T.prim_func
def exchange(A: T.Tensor((128,), "float32"), W: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        W[tx] = A[tx] * 2.0
        T.sync_threads()
        B[tx] = W[127 - tx]
