# RUN: --emit=tir
# annotate_layout({X: T.Layout(X.shape, lambda ...)}) on a global tensor:
# X[i, j] is kept where the row-major position of the lambda's indices in
# their own shape points (here (i // 4, j, i % 4) in (25, 16, 4): rows in
# groups of four, interleaved). Each access of X is built at the logical
# index of that position: a read and a write in a Parallel loop, an element
# atomic_add (an index that may leave X sends dim 0 past its end, where the
# access is masked), and a copy, which becomes a Parallel loop of elements
# with the copy's tail masks (100 rows in tiles of 64).
import tilelang
import tilelang.language as T


def interleave(X):
    return T.Layout(X.shape, lambda i, j: [i // 4, j, i % 4])


@tilelang.jit
def layout_access():
    @T.prim_func
    def main(X: T.Tensor((100, 16), "float32"), Y: T.Tensor((100, 16), "float32"), n: T.int32):
        with T.Kernel(T.ceildiv(100, 64), threads=128) as bx:
            T.annotate_layout({X: interleave(X)})
            tile = T.alloc_fragment((64, 16), "float32")
            T.copy(X[bx * 64 : (bx + 1) * 64, :], tile)
            for i, j in T.Parallel(64, 16):
                Y[bx * 64 + i, j] = tile[i, j] + X[n, j]
            for i, j in T.Parallel(64, 16):
                T.atomic_add(X[bx * 64 + i, j], 1.0)
            X[0, 3] = 2.0

    return main
