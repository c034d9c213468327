# RUN: --emit=tir
# Manual warp specialization that tlc refuses: barrier protocols that do not
# hold in program order, and misuses of T.ws, the barriers and tma_copy.
import tilelang
import tilelang.language as T


@tilelang.jit
def consumer_first(A):
    # the consumer's scope comes first in the loop: its wait needs the
    # producer's arrive of the same iteration, later in the program
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    B = T.empty((M, 64), T.float32)
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((64,), T.float32)
        acc = T.alloc_fragment((64,), T.float32)
        ready = T.alloc_barrier(arrive_count=128)
        done = T.alloc_barrier(arrive_count=128)
        T.clear(acc)
        for i in T.serial(M):
            with T.ws(1):
                T.barrier_wait(ready, i % 2)
                for j in T.Parallel(64):
                    acc[j] += S[j]
                T.barrier_arrive(done)
            with T.ws(0):
                T.barrier_wait(done, (i + 1) % 2)
                T.copy(A[i, :], S)
                T.barrier_arrive(ready)
        T.copy(acc, B[0, :])
    return B


@tilelang.jit
def too_many_arrivals(A):
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    with T.Kernel(1, threads=256) as bx:
        bar = T.alloc_barrier(arrive_count=128)
        for i in T.serial(M):
            T.barrier_arrive(bar)


@tilelang.jit
def stale_parity(A):
    # waits for parity 1 on a fresh barrier pass at once; the second wait
    # for 0 in the first iteration would need its first phase complete
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    with T.Kernel(1, threads=256) as bx:
        bar = T.alloc_barrier([128, 128])
        for i in T.serial(4):
            with T.ws(0):
                T.mbarrier_wait_parity(bar[i % 2], 1 - (i // 2) % 2)
                T.mbarrier_wait_parity(bar[1 - i % 2], 0)


@tilelang.jit
def misuse(A):
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((64,), T.float32)
        F = T.alloc_fragment((64,), T.float32)
        bars = T.alloc_barrier([128, 128])
        one = T.alloc_barrier(arrive_count=128)
        with T.ws(2):
            T.clear(F)
        with T.ws(0):
            with T.ws(0):
                T.clear(F)
        T.barrier_arrive(bars)
        T.barrier_arrive(bars[2])
        T.barrier_wait(one, 2)
        T.barrier_wait(S, 0)
        T.tma_copy(A[0, :], F, barrier=one)
        T.tma_copy(A[0, :], S, barrier=F)
        x = one + 1
        T.ws(0)
        for j in T.Parallel(64):
            T.barrier_arrive(one)
        bad = T.alloc_barrier(arrive_count=[128, 0])
        with T.ws(0) as w:
            T.clear(F)
        with T.ws(0, 0):
            T.clear(F)
        with T.ws(0.5):
            T.clear(F)


@tilelang.jit
def odd_threads(A):
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    with T.Kernel(1, threads=192) as bx:
        F = T.alloc_fragment((64,), T.float32)
        with T.ws(0):
            T.clear(F)


@tilelang.jit
def run_time_parity(A, flag):
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    flag: T.int32
    with T.Kernel(1, threads=128) as bx:
        bar = T.alloc_barrier(arrive_count=128)
        T.barrier_wait(bar, flag % 2)


@tilelang.jit
def deep_loops(A):
    # 16^6 simulated iterations: past what the check simulates
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    with T.Kernel(1, threads=128) as bx:
        bar = T.alloc_barrier(arrive_count=128)
        for a in T.serial(M):
            for b in T.serial(M):
                for c in T.serial(M):
                    for d in T.serial(M):
                        for e in T.serial(M):
                            for f in T.serial(M):
                                T.barrier_arrive(bar)
                                T.barrier_wait(bar, f % 2)
