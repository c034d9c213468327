# Macro calls that cannot be expanded, each reported at the call with a
# note at the macro.
import tilelang.language as T


@T.macro
def scale_rows(acc: T.FragmentBuffer([64, 64], "float"), factor: T.float32):
    for i, j in T.Parallel(64, 64):
        acc[i, j] = acc[i, j] * factor


@T.macro
def forever(acc: T.FragmentBuffer([64, 64], "float")):
    forever(acc)


@T.macro
def gives_back(acc: T.FragmentBuffer([64, 64], "float")):
    return acc


@T.prim_func
def k(A: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_fragment((64, 64), "float")
        T.copy(A, acc)
        scale_rows(acc)
        scale_rows(acc, 2.0, 3.0)
        scale_rows(acc, scale=2.0)
        scale_rows(acc, 2.0, factor=3.0)
        forever(acc)
        gives_back(acc)
        scale_rows(acc, 0.5)
        T.copy(acc, A)
