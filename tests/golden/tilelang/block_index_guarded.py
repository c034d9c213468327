# RUN: --emit=summary
# A tile index that is a block index, under an `if` that keeps it inside
# the tile: no bounds error (the guard elision of global layouts knows the
# block indices' ranges; the tile bounds check must not use them under an
# `if`).
import tilelang
import tilelang
import tilelang.language as T


@tilelang.jit
def k():
    @T.prim_func
    def main(X: T.Tensor((8,), "float32")):
        with T.Kernel(8, threads=32) as bx:
            S = T.alloc_shared((4,), "float32")
            if bx < 4:
                S[bx] = 1.0
            X[bx] = 0.0

    return main
