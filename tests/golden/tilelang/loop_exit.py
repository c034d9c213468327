# RUN: --emit=tir
# Loops that end early: break in a serial loop, a while loop with continue,
# a while loop whose trip count differs between threads, and a compaction
# through a shared counter (each thread's atomic_add with return_prev) in
# a part of the block that meets at a named barrier (sync_threads(id, n)).
import tilelang
import tilelang.language as T


@T.prim_func
def first_over(A: T.Tensor((64, 256), T.float32), limit: T.float32, Out: T.Tensor((64,), T.int32)):
    # the first column of each row over the limit (-1: none)
    with T.Kernel(64, threads=128) as bx:
        pos = T.alloc_var(T.int32)
        pos = -1
        for i in T.serial(256):
            if A[bx, i] > limit:
                pos = i
                break
        Out[bx] = pos


@T.prim_func
def positive_sums(A: T.Tensor((64, 256), T.float32), Out: T.Tensor((64,), T.float32)):
    with T.Kernel(64, threads=128) as bx:
        acc = T.alloc_var(T.float32)
        acc = 0.0
        i = T.alloc_var(T.int32)
        i = 0
        while i < 256:
            i += 1
            if A[bx, i - 1] < 0:
                continue
            acc += A[bx, i - 1]
        Out[bx] = acc


@T.prim_func
def nested_exits(A: T.Tensor((64, 16), T.float32), Out: T.Tensor((64,), T.float32)):
    # continue in the outer loop, break in the inner one (a loop counting down) and in the outer one
    with T.Kernel(64, threads=32) as bx:
        acc = T.alloc_var(T.float32)
        acc = 0.0
        for i in T.serial(4):
            if i == 1:
                continue
            for j in range(3, -1, -1):
                if A[bx, i * 4 + j] > 1.0:
                    break
                acc += A[bx, i * 4 + j]
            if acc > 3.0:
                break
        Out[bx] = acc


@T.prim_func
def row_blocks(A: T.Tensor((1024, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((1024, 64), T.float32),
               n: T.int32):
    # tile operations (a pipelined gemm) in a while loop whose trip count is known at run time only
    with T.Kernel(4, threads=128) as bx:
        A_shared = T.alloc_shared((64, 64), T.float16)
        B_shared = T.alloc_shared((64, 64), T.float16)
        C_local = T.alloc_fragment((64, 64), T.float32)
        r = T.alloc_var(T.int32)
        r = bx
        while r < n:
            T.clear(C_local)
            for k in T.Pipelined(1, num_stages=2):
                T.copy(A[r * 64, k * 64], A_shared)
                T.copy(B[k * 64, 0], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[r * 64, 0])
            r += 4


@T.prim_func
def collatz_steps(N: T.Tensor((1024,), T.int32), Steps: T.Tensor((1024,), T.int32)):
    # each thread its own trip count
    with T.Kernel(8, threads=128) as bx:
        tx = T.get_thread_binding()
        x = T.alloc_var(T.int32)
        n = T.alloc_var(T.int32)
        x = N[bx * 128 + tx]
        n = 0
        while x > 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            n += 1
        Steps[bx * 128 + tx] = n


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True})
def compact(threads=256):
    @T.prim_func
    def main(A: T.Tensor((16, 128), T.float32), Out: T.Tensor((16, 128), T.float32), Count: T.Tensor((16,), T.int32)):
        # the first warpgroup keeps its row's positive values (in any
        # order), the others count them; the two parts meet at barriers
        # of their own
        with T.Kernel(16, threads=threads) as bx:
            tx = T.get_thread_binding()
            n = T.alloc_shared([1], T.int32)
            kept = T.alloc_shared([128], T.float32)
            if tx == 0:
                n[0] = 0
            T.sync_threads()
            if tx < 128:
                if A[bx, tx] > 0:
                    at = T.atomic_add(n[0], 1, return_prev=True)
                    kept[at] = A[bx, tx]
                T.sync_threads(1, 128)
                if tx < n[0]:
                    Out[bx, tx] = kept[tx]
            else:
                T.sync_threads(2, threads - 128)
                if tx == 128:
                    Count[bx] = 0
            T.sync_threads()
            if tx == 0:
                Count[bx] = n[0]

    return main
