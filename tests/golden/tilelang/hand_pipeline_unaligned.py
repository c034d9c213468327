# RUN: --emit=thread --arch=sm_90a
# T.ptx_cp_async's 16 bytes start at a column tlc cannot prove a multiple of
# 8 elements (cp.async needs the addresses aligned): refused when lowering,
# at the copy.
import tilelang
import tilelang.language as T


@tilelang.jit
def unaligned(A):
    A: T.Tensor((128, 64), T.float16)
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((128, 64), T.float16)
        bar = T.alloc_barrier(arrive_count=128)
        tx = T.get_thread_binding()
        T.ptx_cp_async(T.access_ptr(s[tx, tx % 8], "w", 8), T.access_ptr(A[tx, tx % 8], "r", 8), 8)
        T.cp_async_barrier_noinc(bar)
        T.barrier_wait(bar, 0)
