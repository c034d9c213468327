# RUN: --emit=tir --arch=sm_90a
# PTX: --arch=sm_90a
# TileLang's hand-pipelined warpgroups, run as written (docs/language.md
# 11.9): a producer warpgroup copies A's and B's tiles into two stages with
# per-thread cp.async, arriving on `full` when its copies land; the consumer
# waits for a stage, runs a wgmma left in flight and waits for it, then
# frees the stage on `empty`. The mbarriers are kept (barrier_wait /
# barrier_arrive / cp_async_barrier_noinc statements, the kernel's
# mbarriers initialized at its start); the rows' lengths, symbolic, are
# checked at launch to be multiples of the 8 elements a copy moves, and
# the copies' columns are proved multiples of 8 through the lets (each
# assigned once) that compute them.
# hand_gemm_tma: the producer's loads as T.tma_copy (TMA; its first thread
# adds the bytes to the `full` phase, the warpgroup's arrives complete it).
# Run on the GPU against torch by python/tests/test_gpu.py, and in the
# interpreter against NumPy by python/tests/test_interpret.py.
import tilelang
import tilelang.language as T


@tilelang.jit
def hand_gemm(A, B, block_M=64, block_N=64, block_K=64):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        A_s = T.alloc_shared((2, block_M, block_K), T.float16)
        B_s = T.alloc_shared((2, block_K, block_N), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        full = T.alloc_barrier(arrive_count=[128, 128])
        empty = T.alloc_barrier(arrive_count=[128, 128])
        tx = T.get_thread_binding()
        if tx < 128:
            T.set_max_nreg(232, 1)
            T.clear(acc)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.barrier_wait(full[k % 2], (k // 2) % 2)
                T.wgmma_gemm(A_s[k % 2, :, :], B_s[k % 2, :, :], acc)
                T.wait_wgmma(0)
                T.barrier_arrive(empty[k % 2])
            T.copy(acc, C[by * block_M, bx * block_N])
        else:
            T.set_max_nreg(40, 0)
            p = tx - 128
            for k in T.serial(T.ceildiv(K, block_K)):
                T.barrier_wait(empty[k % 2], ((k // 2) % 2) ^ 1)
                for r in T.serial(block_M * block_K // 8 // 128):
                    c = r * 128 + p
                    row = c // (block_K // 8)
                    col = c % (block_K // 8) * 8
                    T.ptx_cp_async(T.access_ptr(A_s[k % 2, row, col], "w", 8),
                                   T.access_ptr(A[by * block_M + row, k * block_K + col], "r", 8), 8)
                for r in T.serial(block_K * block_N // 8 // 128):
                    cb = r * 128 + p
                    row_b = cb // (block_N // 8)
                    col_b = cb % (block_N // 8) * 8
                    T.ptx_cp_async(T.access_ptr(B_s[k % 2, row_b, col_b], "w", 8),
                                   T.access_ptr(B[k * block_K + row_b, bx * block_N + col_b], "r", 8), 8)
                T.cp_async_barrier_noinc(full[k % 2])
    return C


@tilelang.jit
def hand_gemm_tma(A, B, block_M=64, block_N=64, block_K=64):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
        A_0 = T.alloc_shared((block_M, block_K), T.float16)
        A_1 = T.alloc_shared((block_M, block_K), T.float16)
        B_0 = T.alloc_shared((block_K, block_N), T.float16)
        B_1 = T.alloc_shared((block_K, block_N), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        full = T.alloc_barrier(arrive_count=[128, 128])
        empty = T.alloc_barrier(arrive_count=[128, 128])
        tx = T.get_thread_binding()
        nk = T.ceildiv(K, block_K)
        if tx < 128:
            T.clear(acc)
            for k in T.serial(nk):
                T.barrier_wait(full[k % 2], (k // 2) % 2)
                if k % 2 == 0:
                    T.wgmma_gemm(A_0, B_0, acc)
                else:
                    T.wgmma_gemm(A_1, B_1, acc)
                T.wait_wgmma(0)
                T.barrier_arrive(empty[k % 2])
            T.copy(acc, C[by * block_M, bx * block_N])
        else:
            for k in T.serial(nk):
                T.barrier_wait(empty[k % 2], ((k // 2) % 2) ^ 1)
                if k % 2 == 0:
                    T.tma_copy(A[by * block_M, k * block_K], A_0, barrier=full[0])
                    T.tma_copy(B[k * block_K, bx * block_N], B_0, barrier=full[0])
                else:
                    T.tma_copy(A[by * block_M, k * block_K], A_1, barrier=full[1])
                    T.tma_copy(B[k * block_K, bx * block_N], B_1, barrier=full[1])
                T.barrier_arrive(full[k % 2])
    return C
