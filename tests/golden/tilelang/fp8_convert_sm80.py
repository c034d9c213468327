# RUN: --emit=ptx --arch=sm_80 -o /dev/null
# float8_e4m3 conversions need sm_89 (cvt ... e4m3x2; PTX ISA 8.1 there, 8.0 from sm_90).
import tilelang.language as T


@T.prim_func
def convert(X: T.Tensor((128,), T.float32), Q: T.Tensor((128,), T.float8_e4m3)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            Q[i] = X[i]
