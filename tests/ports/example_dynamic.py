import tilelang
import tilelang.language as T


# GEMM whose M, N and K stay dynamic: one kernel serves every size.
@tilelang.jit
def matmul_dynamic_mnk(A, B, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype,
                       num_stages, threads):
    M = T.dynamic("m")
    N = T.dynamic("n")
    K = T.dynamic("k")

    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if trans_B else (block_K, block_N)

    A: T.Tensor(A_shape, in_dtype)
    B: T.Tensor(B_shape, in_dtype)
    C = T.empty((M, N), out_dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared(A_shared_shape, in_dtype)
        B_shared = T.alloc_shared(B_shared_shape, in_dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            if trans_A:
                T.copy(A[k * block_K, by * block_M], A_shared)
            else:
                T.copy(A[by * block_M, k * block_K], A_shared)
            if trans_B:
                T.copy(B[bx * block_N, k * block_K], B_shared)
            else:
                T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local, trans_A, trans_B)
        T.copy(C_local, C[by * block_M, bx * block_N])

    return C


def matmul_dynamic(M, N, K, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype, num_stages,
                   threads):
    import torch

    A = torch.rand(*((K, M) if trans_A else (M, K)), device="cuda", dtype=getattr(torch, in_dtype))
    B = torch.rand(*((N, K) if trans_B else (K, N)), device="cuda", dtype=getattr(torch, in_dtype))
    C = matmul_dynamic_mnk(A, B, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype,
                           num_stages, threads)
    ref = (A.T if trans_A else A).float() @ (B.T if trans_B else B).float()
    torch.testing.assert_close(C.float(), ref, rtol=1e-2, atol=1e-2)
    print(f"{M}x{N}x{K}: ok")


def main(M=16384, N=16384, K=16384):
    matmul_dynamic(M, N, K, 128, 128, 32, False, False, "float16", "float16", "float32", 3, 128)


if __name__ == "__main__":
    main()
