# RUN: --emit=tir
# Python's print in a factory or a helper (TileLang runs it while it builds
# the kernel), also of the kernel after its definition (`print(main)`), is a
# call that does nothing in tlc, its arguments unread
# (T.print, on the device, is refused: golden sema/tilelang_unsupported).
import tilelang
import tilelang.language as T


def describe(n):
    print("building with", n, "rows")
    return n * 2


@tilelang.jit
def scaled(n=64):
    print("n =", n)
    m = describe(n)

    @T.prim_func
    def main(X: T.Tensor((m,), "float32")):
        with T.Kernel(1, threads=128):
            print("tracing the kernel body")
            for i in T.Parallel(m):
                X[i] = X[i] * 2.0

    print(main)
    return main
