import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(A, B, C, block_M, block_N, block_K, split_k, dtype=T.float16, accum_dtype=T.float32, out_dtype=T.float32):
    M, N, K = T.const("M, N, K")
    splitK = K // split_k

    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C: T.Tensor((M, N), out_dtype)

    # the third grid dimension splits K; the partial products meet in C
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(splitK, block_K), num_stages=0):
            T.copy(A[by * block_M, bz * splitK + ko * block_K], A_shared)
            T.copy(B[bz * splitK + ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)

        # one tile-wide atomic add, which the compiler vectorizes
        T.atomic_add(C[by * block_M, bx * block_N], C_local)


def main(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32, split_k=4):
    import torch

    torch.random.manual_seed(0)
    a = torch.randn(M, K).cuda().half()
    b = torch.randn(K, N).cuda().half()
    c = torch.zeros(M, N).cuda().float()  # the kernel adds into C
    matmul(a, b, c, block_M, block_N, block_K, split_k)
    torch.testing.assert_close(c, (a @ b).to(c.dtype), rtol=1e-2, atol=1e-2)


def run_regression_perf(size=4096):
    import torch
    from tilelang.profiler import do_bench

    a = torch.randn(size, size).cuda().half()
    b = torch.randn(size, size).cuda().half()
    c = torch.zeros(size, size).cuda().float()
    return do_bench(lambda: matmul(a, b, c, 128, 128, 32, 4), backend="cupti")


if __name__ == "__main__":
    main()
