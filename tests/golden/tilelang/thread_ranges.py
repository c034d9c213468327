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
