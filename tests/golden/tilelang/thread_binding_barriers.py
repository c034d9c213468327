# RUN: --emit=thread
# Barriers in thread-indexed code. tlc places a block barrier where one
# thread's shared-memory accesses could race another's: between the
# stores to s and the loads of a neighbour's element (`if tx < 64` does not
# part the block's statements after it), and not inside a condition on the
# thread's index, which not every thread reaches (there a needed barrier
# is an error: thread_binding_barrier_errors.py).
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
