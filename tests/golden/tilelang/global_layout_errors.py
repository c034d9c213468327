# RUN: --emit=summary
# annotate_layout with T.Layout on a global tensor: what is refused.
import tilelang
import tilelang.language as T


def flat(X):
    return T.Layout(X.shape, lambda i, j: [j, i])


@tilelang.jit
def after_use():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            X[0, 0] = 1.0
            T.annotate_layout({X: flat(X)})

    return main


@tilelang.jit
def twice():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: flat(X)})
            T.annotate_layout({X: flat(X)})

    return main


@tilelang.jit
def wrong_shape():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: T.Layout((8, 4), lambda i, j: [j, i])})

    return main


@tilelang.jit
def not_every_element():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: T.Layout(X.shape, lambda i, j: [i, j * 2])})

    return main


@tilelang.jit
def negative():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: T.Layout(X.shape, lambda i, j: [i - 1, j])})

    return main


@tilelang.jit
def unbounded():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: T.Layout(X.shape, lambda i, j: [i << j, j])})

    return main


@tilelang.jit
def not_a_lambda():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: T.Layout(X.shape, flat)})

    return main


@tilelang.jit
def arity():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: T.Layout(X.shape, lambda i: [i])})

    return main


@tilelang.jit
def float_index():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: T.Layout(X.shape, lambda i, j: [i * 0.5, j])})

    return main


@tilelang.jit
def shared_buffer():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((8, 8), "float32")
            T.annotate_layout({S: T.Layout(S.shape, lambda i, j: [j, i])})
            T.copy(X, S)

    return main


@tilelang.jit
def other_tile_ops():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32"), Y: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: flat(X)})
            T.fill(X, 0)
            T.reduce_sum(X, Y, dim=1)

    return main


@tilelang.jit
def symbolic(N):
    @T.prim_func
    def main(X: T.Tensor((N, 8), "float32")):
        with T.Kernel(1, threads=64):
            T.annotate_layout({X: flat(X)})

    return main


@tilelang.jit
def lambda_elsewhere():
    @T.prim_func
    def main(X: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64):
            f = lambda i: i + 1  # noqa: E731
            X[0, 0] = f(1)

    return main
