# RUN: --emit=tir
# Warp shuffles tlc refuses: one under a condition on the thread index
# (every lane of the warp must take part), in a Parallel loop (the block's
# work, its lanes tlc's to assign), a width that is not a power of two up
# to 32, a mask other than the whole warp, a 64-bit value, and one outside
# a kernel.
import tilelang.language as T


@T.prim_func
def bad_shuffles(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "int64")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        f = T.alloc_fragment((128,), "float32")
        if tx < 64:
            A[tx] = T.shfl_xor(A[tx], 1)
        for i in T.Parallel(128):
            f[i] = T.shfl_sync(A[i], 0)
        A[tx] = T.shfl_xor(A[tx], 1, width=12)
        A[tx] = T.tvm_warp_shuffle(0xFFFF, A[tx], 0, 32, 32)
        B[tx] = T.shfl_sync(B[tx], 0)
        T.copy(f, A)


x = 0


@T.prim_func
def outside(A: T.Tensor((128,), "float32")):
    y = T.shfl_sync(1.0, 0)
    with T.Kernel(1, threads=128) as bx:
        A[bx] = y
