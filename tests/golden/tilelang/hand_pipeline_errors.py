# RUN: --emit=summary --arch=sm_90a
# What TileLang's hand-pipelined operations refuse: T.access_ptr operands of
# the wrong kind or access, a copy of other than 4, 8 or 16 bytes, rows
# whose length is not a multiple of the copy, a wait leaving too many
# groups, a register count setmaxnreg does not take, and the operations
# beside T.ws scopes (which run in program order). A column tlc cannot
# prove aligned: hand_pipeline_unaligned.py.
import tilelang
import tilelang.language as T


@tilelang.jit
def operands(A, X, block=64):
    A: T.Tensor((128, 64), T.float16)
    X: T.Tensor((128, 60), T.float16)
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((block, 64), T.float16)
        f = T.alloc_fragment((block, 64), T.float32)
        tx = T.get_thread_binding()
        T.ptx_cp_async(T.access_ptr(A[tx, 0], "w", 8), T.access_ptr(s[tx // 2, 0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(s[tx // 2, 0], "r", 8), T.access_ptr(A[tx, 0], "r", 8), 8)
        T.ptx_cp_async(s[0, 0], T.access_ptr(A[tx, 0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(s[tx // 2, 0:8], "w", 8), T.access_ptr(A[tx, 0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(s[tx // 2, 0], "w", 8), T.access_ptr(A[tx, 0], "r", 8), 3)
        T.ptx_cp_async(T.access_ptr(s[tx // 2, 0], "w", 8), T.access_ptr(X[tx, 0], "r", 8), 8)
        T.wait_wgmma(9)
        T.set_max_nreg(250, 1)
        T.set_max_nreg(240, 2)


@tilelang.jit
def with_ws_scopes(A, B):
    A: T.Tensor((64, 64), T.float16)
    B: T.Tensor((64, 64), T.float16)
    with T.Kernel(1, threads=256) as bx:
        a = T.alloc_shared((64, 64), T.float16)
        b = T.alloc_shared((64, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        ready = T.alloc_barrier(arrive_count=128)
        with T.ws(0):
            T.copy(A, a)
            T.copy(B, b)
            T.barrier_arrive(ready)
        with T.ws(1):
            T.barrier_wait(ready, 0)
            T.wgmma_gemm(a, b, acc)
            T.wait_wgmma(0)
