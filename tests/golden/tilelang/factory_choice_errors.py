# RUN: --emit=summary
# Which function a factory returns must be known at compile time, and it
# returns one of its @T.prim_func functions by name.
import tilelang
import tilelang.language as T


@tilelang.jit
def unknown_flag(N, flag):
    @T.prim_func
    def a(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0

    @T.prim_func
    def b(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 2.0

    if flag:
        return a
    return b


@tilelang.jit
def not_a_function(N):
    @T.prim_func
    def a(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0

    @T.prim_func
    def b(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 2.0

    return c


@tilelang.jit
def an_expression(N):
    @T.prim_func
    def a(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0

    @T.prim_func
    def b(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 2.0

    return [a, b][0]


@tilelang.jit
def run_time_condition(N, scale=1.5):
    @T.prim_func
    def a(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 1.0

    @T.prim_func
    def b(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32):
            A[0] = 2.0

    return a if N > 64 else b
