# RUN: --emit=layout
# gemm operand A in registers for tf32 (one element a register, k8), int8
# and float8 (four a register, k32): the fragment is the instruction's A
# layout; with ReLU applied in registers first, as a dequantizing or
# activation step before the gemm would.
import tilelang
import tilelang.language as T


@tilelang.jit
def regs_gemm(dtype="float32", accum="float32", M=128, N=128, K=64, trans_B=True, threads=128):
    B_shape = (N, K) if trans_B else (K, N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(1, threads=threads) as bx:
            A_shared = T.alloc_shared((M, K), dtype)
            A_local = T.alloc_fragment((M, K), dtype)
            B_shared = T.alloc_shared(B_shape, dtype)
            C_local = T.alloc_fragment((M, N), accum)
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.copy(A_shared, A_local)
            for i, k in T.Parallel(M, K):
                A_local[i, k] = T.max(A_local[i, k], 0)
            T.gemm(A_local, B_shared, C_local, transpose_B=trans_B, clear_accum=True)
            T.copy(C_local, C)

    return main
