import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(A, B, block_M, block_N, block_K, dtype, accum_dtype=T.float32):
    M, N, K = T.const("M, N, K")

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((N, K), dtype)
    C = T.empty((M, N), accum_dtype)

    # for fp8 gemm, do one promote after 4 wgmma inst, i.e. block_K = 128.
    # if block_K < 128, promote after 128/block_K iters.
    # if block_K > 128, promote after every iter.
    update_interval = 128 // block_K if block_K < 128 else 1

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_N, block_K), dtype)
        C_shared = T.alloc_shared((block_M, block_N), accum_dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        C_local_accum = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(C_local)
        T.clear(C_local_accum)
        K_iters = T.ceildiv(K, block_K)
        for k in T.Pipelined(K_iters, num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[bx * block_N, k * block_K], B_shared)
            T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            # Promote to enable 2xAcc
            if (k + 1) % update_interval == 0:
                for i, j in T.Parallel(block_M, block_N):
                    C_local_accum[i, j] += C_local[i, j]
                T.clear(C_local)
        # Tail processing
        if K_iters % update_interval != 0:
            for i, j in T.Parallel(block_M, block_N):
                C_local_accum[i, j] += C_local[i, j]
        # TMA store
        T.copy(C_local_accum, C_shared)
        T.copy(C_shared, C[by * block_M, bx * block_N])

    return C


def main(m=1024, n=1024, k=4096):
    import torch

    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    c = matmul(a, b, 128, 128, 64, T.float8_e4m3fn)
    ref = a.float() @ b.float().T
    rel = ((c - ref).norm() / ref.norm()).item()
    print(f"relative error {rel:.3g}")


if __name__ == "__main__":
    main()
