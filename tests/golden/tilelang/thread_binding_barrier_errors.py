# RUN: --emit=thread
# A barrier that thread-indexed code would need inside a condition on the
# thread's index, which not every thread reaches: an error at the
# statement that needs it (a barrier there would hang the block).
import tilelang.language as T


@T.prim_func
def barrier_in_parted_code(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        s = T.alloc_shared((128,), "float32")
        if tx < 64:
            s[tx] = A[tx]
            B[tx] = s[63 - tx]
