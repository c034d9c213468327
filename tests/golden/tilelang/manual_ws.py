# RUN: --emit=tir
# TileLang's manual warp specialization: `with T.ws(i):` scopes, mbarriers
# and T.tma_copy. tlc runs the scopes' statements in program order on all
# of the block's threads (a warning says so), checks the barriers against
# that order (every wait finds its phase complete) and removes them; the
# Tile IR below has neither scopes nor barriers, and tma_copy is a copy.
# The same written as a branch on the thread index (`if tid < 128:` the
# producer, `else:` the consumer) runs the same way, both branches in
# program order; each branch's arrives count its threads. Where each
# branch loops over all iterations (role_loops), no order that runs one
# branch whole before the other holds: the two loops, of the same bounds,
# are fused (each branch's statements before its loop, then per iteration
# the producer's body, found by its loads, and the consumer's, here the
# first branch's).
import tilelang
import tilelang.language as T


@tilelang.jit
def two_stage(A, num_stages=2, block=64):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, block), threads=256) as bx:
        A_shared = T.alloc_shared((num_stages, block, 64), T.float16)
        acc = T.alloc_fragment((block, 64), T.float32)
        full = T.alloc_barrier([128] * num_stages)
        empty = T.alloc_barrier(arrive_count=[128] * num_stages)
        T.set_max_nreg(240, 1)
        with T.ws(1):
            T.clear(acc)
        for ko in range(T.ceildiv(N, 64)):
            stage = ko % num_stages
            with T.ws(0):
                T.mbarrier_wait_parity(empty[stage], ((ko // num_stages) & 1) ^ 1)
                T.tma_copy(A[bx * block, ko * 64], A_shared[stage, :, :], barrier=full[stage])
                T.mbarrier_arrive(full[stage])
            with T.ws(1):
                T.mbarrier_wait_parity(full[stage], (ko // num_stages) & 1)
                for i, j in T.Parallel(block, 64):
                    acc[i, j] += A_shared[stage, i, j]
                T.mbarrier_arrive(mbarrier=empty[stage])
        with T.ws(1):
            T.copy(acc, B[bx * block, 0])
    return B


@tilelang.jit
def unrolled_stages(A, num_stages=3):
    # the stages of a loop unrolled by hand, as TileLang's MLA examples
    # write them; a barrier arrived on by the whole block
    M = T.const("M")
    A: T.Tensor((M, 64), T.float32)
    B = T.empty((M, 64), T.float32)

    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((num_stages, 64), T.float32)
        acc = T.alloc_fragment((64,), T.float32)
        ready = T.alloc_barrier([128] * num_stages)
        done = T.alloc_barrier([128] * num_stages)
        start = T.alloc_barrier(arrive_count=256)
        with T.ws(0, 1):
            T.barrier_arrive(start)
        T.barrier_wait(start, 0)
        T.clear(acc)
        for i in T.serial(T.ceildiv(M, num_stages)):
            for s in T.unroll(num_stages):
                with T.ws(0):
                    T.barrier_wait(done[s], (i & 1) ^ 1)
                    T.copy(A[i * num_stages + s, :], S[s, :])
                    T.barrier_arrive(ready[s])
                with T.ws(1):
                    T.barrier_wait(ready[s], i & 1)
                    for j in T.Parallel(64):
                        acc[j] += S[s, j]
                    T.barrier_arrive(done[s])
        T.copy(acc, B[0, :])
    return B


@tilelang.jit
def thread_branches(A, num_stages=2, block=64):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, block), threads=256) as bx:
        A_shared = T.alloc_shared((num_stages, block, 64), T.float16)
        acc = T.alloc_fragment((block, 64), T.float32)
        full = T.alloc_barrier([128] * num_stages)
        empty = T.alloc_barrier(arrive_count=[128] * num_stages)
        tid = T.get_thread_binding()
        T.clear(acc)
        for ko in range(T.ceildiv(N, 64)):
            stage = ko % num_stages
            if tid < 128:
                T.mbarrier_wait_parity(empty[stage], ((ko // num_stages) & 1) ^ 1)
                T.tma_copy(A[bx * block, ko * 64], A_shared[stage, :, :], barrier=full[stage])
                T.mbarrier_arrive(full[stage])
            else:
                T.mbarrier_wait_parity(full[stage], (ko // num_stages) & 1)
                for i, j in T.Parallel(block, 64):
                    acc[i, j] += A_shared[stage, i, j]
                T.mbarrier_arrive(mbarrier=empty[stage])
        T.copy(acc, B[bx * block, 0])
    return B


@tilelang.jit
def role_loops(A, num_stages=2, block=64):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, block), threads=256) as bx:
        A_shared = T.alloc_shared((num_stages, block, 64), T.float16)
        acc = T.alloc_fragment((block, 64), T.float32)
        full = T.alloc_barrier([128] * num_stages)
        empty = T.alloc_barrier(arrive_count=[128] * num_stages)
        tid = T.get_thread_binding()
        if tid < 128:
            T.clear(acc)
            for ko in range(T.ceildiv(N, 64)):
                T.mbarrier_wait_parity(full[ko % num_stages], (ko // num_stages) & 1)
                for i, j in T.Parallel(block, 64):
                    acc[i, j] += A_shared[ko % num_stages, i, j]
                T.mbarrier_arrive(mbarrier=empty[ko % num_stages])
            T.copy(acc, B[bx * block, 0])
        else:
            for ko in range(T.ceildiv(N, 64)):
                T.mbarrier_wait_parity(empty[ko % num_stages], ((ko // num_stages) & 1) ^ 1)
                T.tma_copy(A[bx * block, ko * 64], A_shared[ko % num_stages, :, :], barrier=full[ko % num_stages])
                T.mbarrier_arrive(full[ko % num_stages])
    return B
