# RUN: --emit=tir
# TileLang's atomic_addx2 / atomic_addx4: consecutive elements of the
# value's row added to consecutive elements of the destination's, each
# element its own atomic_add.
import tilelang.language as T


@T.prim_func
def add_rows(X: T.Tensor((64, 128), T.float32), Y: T.Tensor((16, 128), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_shared = T.alloc_shared((64, 128), T.float32)
        T.copy(X, x_shared)
        for i, j in T.Parallel(64, 32):
            T.atomic_addx4(Y[i % 16, j * 4], x_shared[i, j * 4])
        for i, j in T.Parallel(64, 64):
            T.atomic_addx2(Y[i % 16, j * 2], x_shared[i, j * 2])
