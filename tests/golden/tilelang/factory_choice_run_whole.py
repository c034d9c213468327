# RUN: run --random --dim N=256 -D num_split=1 %s
# factory_choice_run.py with -D num_split=1: the factory returns its
# one-kernel function, B = 4A, the same B (same fnv64) as the split form.
import tilelang
import tilelang.language as T


@tilelang.jit
def split_or_whole(N, block=64, num_split=2):
    @T.prim_func
    def main_split(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        part = T.alloc_global([num_split, N], "float32")
        with T.Kernel(T.ceildiv(N, block), num_split, threads=128) as (bx, s):
            for i in T.Parallel(block):
                part[s, bx * block + i] = A[bx * block + i] * 2.0
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = part[0, bx * block + i] + part[num_split - 1, bx * block + i]

    @T.prim_func
    def main_whole(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 4.0

    if num_split > 1:
        return main_split
    else:
        return main_whole
