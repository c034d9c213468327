# RUN: --emit=summary -D n=32
# A bare `*` in a signature (keyword-only parameters after it) is Python
# tlc takes: the parameters are bound by name as any others.
import tilelang
import tilelang.language as T


@tilelang.jit
def scaled(n, *, m=4, dtype=T.float32):
    @T.prim_func
    def main(A: T.Tensor((n * m,), dtype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(n * m):
                A[i] = A[i] * 2.0

    return main


def host(x, *, flag=False, scale=1.0):
    return x
