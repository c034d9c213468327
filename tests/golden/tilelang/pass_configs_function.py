# RUN: --emit=tir
# pass_configs=get_pass_configs() (TileLang's flash decoding example): a
# function of the file, without arguments, that returns a dict written
# out, read as that dict; fast math is the switch tlc honours.
import tilelang
import tilelang.language as T


def get_pass_configs():
    return {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True, tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}


@tilelang.jit(pass_configs=get_pass_configs())
def silu(M, C=64):
    @T.prim_func
    def main(X: T.Tensor((M, C), "float32"), Y: T.Tensor((M, C), "float32")):
        with T.Kernel(M, threads=64) as bx:
            x = T.alloc_fragment((C,), "float32")
            T.copy(X[bx, 0], x)
            for j in T.Parallel(C):
                x[j] = x[j] / (1.0 + T.exp(-x[j]))
            T.copy(x, Y[bx, 0])

    return main
