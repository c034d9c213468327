# RUN: --emit=plan -D M=256 -D N=256 -D K=512
# float8_e4m3 values: conversions from and to float32 (cvt ... e4m3x2,
# saturating to +-448; float8_e5m2's, e5m2x2, to +-57344) and gemms of
# float8 operands into a float32 accumulator (wgmma k32 on sm_90a; either
# format, dtype=), as TileLang's gemm_fp8 example writes them: A [M, K],
# B [N, K], transpose_B=True.
import tilelang
import tilelang.language as T


@T.prim_func
def fp8_convert(X: T.Tensor((256, 64), T.float32), Q: T.Tensor((256, 64), T.float8_e4m3),
                Y: T.Tensor((256, 64), T.float32)):
    with T.Kernel(2, threads=128) as bx:
        q_shared = T.alloc_shared((128, 64), T.float8_e4m3)
        q_frag = T.alloc_fragment((128, 64), T.float8_e4m3)
        T.copy(X[bx * 128, 0], q_shared)
        T.copy(q_shared, Q[bx * 128, 0])
        T.copy(q_shared, q_frag)
        for i, j in T.Parallel(128, 64):
            Y[bx * 128 + i, j] = q_frag[i, j] * 2.0 + 1.0


@T.prim_func
def fp8_e5m2_convert(X: T.Tensor((256, 64), T.float32), Q: T.Tensor((256, 64), T.float8_e5m2),
                     Y: T.Tensor((256, 64), T.float32)):
    with T.Kernel(2, threads=128) as bx:
        q_shared = T.alloc_shared((128, 64), T.float8_e5m2)
        q_frag = T.alloc_fragment((128, 64), T.float8_e5m2)
        T.copy(X[bx * 128, 0], q_shared)
        T.copy(q_shared, Q[bx * 128, 0])
        T.copy(q_shared, q_frag)
        for i, j in T.Parallel(128, 64):
            Y[bx * 128 + i, j] = q_frag[i, j] * 2.0 + 1.0


@tilelang.jit
def fp8_gemm(M, N, K, block_M=128, block_N=128, block_K=64, threads=128, dtype=T.float8_e4m3):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit
def fp8_gemm_out(M, N, K, block_M=128, block_N=256, block_K=128, threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float8_e4m3), B: T.Tensor((N, K), T.float8_e4m3),
             C: T.Tensor((M, N), T.float8_e4m3)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float8_e4m3)
            B_shared = T.alloc_shared((block_N, block_K), T.float8_e4m3)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
