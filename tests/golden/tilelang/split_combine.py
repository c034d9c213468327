# RUN: --emit=tir -D cols=1000
# PTX: -D cols=1000
"""Split + combine in one TileLang function: two T.Kernel blocks that share
workspaces declared with T.alloc_global before them, in a factory and in an
eager function.

tlc compiles this file as it is: each function becomes its kernels
(row_sums_k0, row_sums_k1, ...) launched in order by one call, and the
runtime allocates the workspaces. The torch reference and the __main__
block are Python that tlc skips.
"""
import torch
import tilelang
import tilelang.language as T


def ref_row_sums(x):
    return x.float().sum(dim=1)


@tilelang.jit(out_idx=[-1])
def row_sums(rows, cols, num_split=4, block_r=16, block_c=64, dtype="float32"):

    @T.prim_func
    def main(X: T.Tensor((rows, cols), dtype), Out: T.Tensor((rows,), dtype)):
        part = T.alloc_global((num_split, rows), dtype)
        # split: block (bs, br) sums rows br*block_r.. over every num_split-th column tile from bs
        with T.Kernel(num_split, T.ceildiv(rows, block_r), threads=128) as (bs, br):
            tile = T.alloc_shared((block_r, block_c), dtype)
            acc = T.alloc_fragment((block_r, block_c), dtype)
            tot = T.alloc_fragment((block_r,), dtype)
            T.clear(acc)
            for j in T.serial(T.ceildiv(cols, block_c * num_split)):
                T.copy(X[br * block_r, (j * num_split + bs) * block_c], tile)
                for r, c in T.Parallel(block_r, block_c):
                    acc[r, c] += tile[r, c]
            T.reduce_sum(acc, tot, dim=1)
            T.copy(tot, part[bs, br * block_r])
        # combine: the splits' sums of each row
        with T.Kernel(T.ceildiv(rows, 128), threads=128) as bx:
            s = T.alloc_fragment((128,), dtype)
            T.clear(s)
            for k in T.serial(num_split):
                for i in T.Parallel(128):
                    if bx * 128 + i < rows:
                        s[i] += part[k, bx * 128 + i]
            T.copy(s, Out[bx * 128])

    return main


@tilelang.jit
def scale_then_shift(X, d: int = 64, scale: float = 2.0, shift: float = 1.0):
    n = T.const("n")
    X: T.Tensor((n, d), "float32")
    Y = T.empty((n, d), "float32")
    scaled = T.alloc_global((n, d), "float32")
    with T.Kernel(n, threads=128) as b:
        for i in T.Parallel(d):
            scaled[b, i] = X[b, i] * scale
    with T.Kernel(n, threads=128) as b:
        for i in T.Parallel(d):
            Y[b, i] = scaled[b, i] + shift
    return Y


if __name__ == "__main__":
    x = torch.randn(100, 1000, device="cuda")
    kernel = row_sums(100, 1000)
    torch.testing.assert_close(kernel(x), ref_row_sums(x))
