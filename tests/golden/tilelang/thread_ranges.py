# RUN: --emit=layout
# A branch on the thread index whose branches hold tile work splits the
# threads into ranges (the threads of one warpgroup or of a few warps), each
# branch's tile operations laid out over its own threads: the gemm over
# warpgroup 0, the reductions over warps 4-5 and 6-7 (nested), each
# range's barriers its own named barrier.
import tilelang
import tilelang.language as T


@tilelang.jit
def split_roles(A, B, C, RS, MX, CS, block=64):
    M, K = T.const("M, K")
    A: T.Tensor((M, block), T.float16)
    B: T.Tensor((block, K), T.float16)
    C: T.Tensor((M, K), T.float32)
    RS: T.Tensor((M,), T.float32)
    MX: T.Tensor((M,), T.float32)
    CS: T.Tensor((T.ceildiv(M, block), K), T.float32)
    with T.Kernel(T.ceildiv(K, block), T.ceildiv(M, block), threads=256) as (bx, by):
        A_s = T.alloc_shared((block, block), T.float16)
        B_s = T.alloc_shared((block, block), T.float16)
        T.copy(A[by * block, 0], A_s)
        T.copy(B[0, bx * block], B_s)
        tx = T.get_thread_binding()
        if tx < 128:
            C_l = T.alloc_fragment((block, block), T.float32)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            T.copy(C_l, C[by * block, bx * block])
        else:
            if tx < 192:
                R_l = T.alloc_fragment((block, block), T.float32)
                rs = T.alloc_fragment((block,), T.float32)
                mx = T.alloc_fragment((block,), T.float32)
                for i, j in T.Parallel(block, block):
                    R_l[i, j] = A_s[i, j] * 2.0
                T.reduce_sum(R_l, rs, dim=1)
                T.reduce_max(R_l, mx, dim=1)
                if bx == 0:
                    T.copy(rs, RS[by * block])
                    T.copy(mx, MX[by * block])
            else:
                Bt = T.alloc_fragment((block, block), T.float32)
                cs = T.alloc_fragment((block,), T.float32)
                T.copy(B_s, Bt)
                T.reduce_sum(Bt, cs, dim=0)
                T.copy(cs, CS[by, bx * block])


# The upper two warps run a loop around a Pipelined loop (its loads issued
# by the range's first thread, its index re-read each iteration) while the
# lower two do nothing: Y[:, r] sums the r-th 64 columns of each 128.
@tilelang.jit
def sums_in_range(X, Y, block=64):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y: T.Tensor((M, 2), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        tx = T.get_thread_binding()
        if tx >= 64:
            s = T.alloc_shared((block, 64), T.float32)
            f = T.alloc_fragment((block, 64), T.float32)
            acc = T.alloc_fragment((block,), T.float32)
            part = T.alloc_fragment((block,), T.float32)
            for r in T.serial(2):
                T.clear(acc)
                for k in T.Pipelined(T.ceildiv(N, 128), num_stages=2):
                    T.copy(X[bx * block, k * 128 + r * 64], s)
                    T.copy(s, f)
                    T.reduce_sum(f, part, dim=1)
                    for i in T.Parallel(block):
                        acc[i] += part[i]
                for i in T.Parallel(block):
                    if bx * block + i < M:
                        Y[bx * block + i, r] = acc[i]
