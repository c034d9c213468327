# RUN: --emit=layout
# gemm operand B in registers (TileLang's gemm_sr, and gemm_rr with A in
# registers too): B is computed elementwise in a fragment, as a gating or
# dequantizing step before the gemm would, and the fragment takes
# mma.sync's B layout (wgmma reads B from shared memory only, so sm_90a
# runs these gemms on mma.sync as well).
import tilelang
import tilelang.language as T


@tilelang.jit
def b_regs(dtype="float16", accum="float32", M=64, N=64, K=32, trans_B=False, threads=128):
    B_shape = (N, K) if trans_B else (K, N)

    @T.prim_func
    def sr(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(1, threads=threads) as bx:
            A_shared = T.alloc_shared((M, K), dtype)
            B_shared = T.alloc_shared(B_shape, dtype)
            B_local = T.alloc_fragment(B_shape, dtype)
            C_local = T.alloc_fragment((M, N), accum)
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            for i, j in T.Parallel(B_shape[0], B_shape[1]):
                B_local[i, j] = T.max(B_shared[i, j], 0)
            T.gemm(A_shared, B_local, C_local, transpose_B=trans_B, clear_accum=True)
            T.copy(C_local, C)

    return sr


@tilelang.jit
def both_regs(dtype="float16", accum="float32", M=64, N=64, K=32, threads=128):

    @T.prim_func
    def rr(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(1, threads=threads) as bx:
            A_local = T.alloc_fragment((M, K), dtype)
            B_local = T.alloc_fragment((K, N), dtype)
            C_local = T.alloc_fragment((M, N), accum)
            T.copy(A, A_local)
            T.copy(B, B_local)
            for i, j in T.Parallel(K, N):
                B_local[i, j] = T.max(B_local[i, j], 0)
            T.clear(C_local)
            T.gemm(A_local, B_local, C_local)
            T.gemm(A_local, B_local, C_local)
            T.copy(C_local, C)

    return rr
