"""A script in TileLang's API, run unchanged by `python -m tlc.tilelang tilelang_script.py`
(test_tilelang_api.py): a jit factory with out_idx, an eager function with T.const sizes and a
T.empty output whose size is derived from them, an undecorated factory given to tilelang.compile,
an autotuned factory, a module-level value tlc cannot compute from the file, and the profiler. Its
main() checks every result against torch and prints "tilelang script: ok"."""
import argparse
import os

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune

OFFSET = int(os.environ.get("TILELANG_SCRIPT_OFFSET", "3"))  # Python tlc does not run: the call gives it


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32):

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit
def column_heads(X, block):
    """Y[i, j] = X[i, j * block] + OFFSET: one column of each block of X."""
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y = T.empty((M, T.ceildiv(N, block)), T.float32)
    with T.Kernel(M, threads=32) as bx:
        for j in T.Parallel(T.ceildiv(N, block)):
            Y[bx, j] = X[bx, j * block] + OFFSET
    return Y


def add_one(N, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                Y[bx * 128 + i] = X[bx * 128 + i] + 1

    return main


tuned_matmul = autotune(configs=[{"block_M": 64, "block_N": 64, "block_K": 32},
                                 {"block_M": 128, "block_N": 128, "block_K": 32}])(matmul)


def main():
    import torch
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", type=int, default=256)
    args = parser.parse_args()
    m = args.m
    a = torch.randn(m, 128, device="cuda", dtype=torch.float16)
    b = torch.randn(128, 192, device="cuda", dtype=torch.float16)
    want = a.float() @ b.float()

    kernel = matmul(m, 192, 128, 64, 64, 32)
    torch.testing.assert_close(kernel(a, b).float(), want, rtol=1e-2, atol=5e-2)
    profiler = kernel.get_profiler(tilelang.TensorSupplyType.Normal)
    profiler.assert_allclose(lambda A, B: A @ B, rtol=1e-2, atol=5e-2)
    assert profiler.do_bench(warmup=2, rep=5) > 0

    tuned = tuned_matmul(m, 192, 128)
    assert tuned.config == {"block_M": 64, "block_N": 64, "block_K": 32}, tuned.config
    torch.testing.assert_close(tuned(a, b).float(), want, rtol=1e-2, atol=5e-2)

    x = torch.randn(64, 512, device="cuda")
    y = column_heads(x, 128)
    torch.testing.assert_close(y, x[:, ::128] + 3)
    assert tuple(y.shape) == (64, 4)

    v = torch.randn(1024, device="cuda")
    torch.testing.assert_close(tilelang.compile(add_one(1024), out_idx=[1])(v), v + 1)
    print("tilelang script: ok")


if __name__ == "__main__":
    main()
