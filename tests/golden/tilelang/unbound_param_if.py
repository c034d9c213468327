# RUN: --emit=summary
# A factory's `if` on a parameter without a default, outside the kernel:
# the diagnostic names the -D to give.
import tilelang
import tilelang.language as T


@tilelang.jit
def scaled(heads, dim=64):
    if heads > 64:
        replicas = heads // 64
    else:
        replicas = 1

    @T.prim_func
    def main(X: T.Tensor((replicas * 64, dim), T.float32)):
        with T.Kernel(replicas, threads=128) as bx:
            for i, j in T.Parallel(64, dim):
                X[bx * 64 + i, j] = X[bx * 64 + i, j] * 2.0

    return main
