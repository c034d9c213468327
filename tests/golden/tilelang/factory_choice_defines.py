# RUN: --emit=summary -D num_split=1 -D use_wide=True -D mode=1
# factory_choice.py's factories with other -D values: each returns
# another of its functions.
# the returned function is compiled; the others are not read further.
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


@tilelang.jit
def by_flag(N, use_wide=False):
    @T.prim_func
    def wide(A: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 256), threads=256) as bx:
            for i in T.Parallel(256):
                A[bx * 256 + i] = 1.0

    @T.prim_func
    def narrow(A: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:
            for i in T.Parallel(32):
                A[bx * 32 + i] = 2.0

    return wide if use_wide else narrow


@tilelang.jit
def by_mode(N, mode=2):
    @T.prim_func
    def first(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0

    @T.prim_func
    def second(A: T.Tensor((N,), "float32")):
        with T.Kernel(2, threads=64):
            A[0] = 2.0

    @T.prim_func
    def third(A: T.Tensor((N,), "float32")):
        with T.Kernel(3, threads=96):
            A[0] = 3.0

    # a branch without a return falls through; a branch may compute first
    if mode == 0:
        return first
    elif mode == 1:
        pass
    else:
        chosen_mode = mode * 2
        if chosen_mode > 3:
            return third
    return second
