# RUN: --emit=layout
# Packed reads tlc cannot lay out: a packing that does not divide the loop's
# columns (j // 3 over 64) gives the fragment no layout that serves the loop,
# and the copy's stays (a conflict); an index that is not a loop variable
# divided by a constant is refused by name.
import tilelang.language as T


@T.prim_func
def not_dividing(B: T.Tensor((64, 22), "uint8"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        b_shared = T.alloc_shared((64, 22), "uint8")
        b = T.alloc_fragment((64, 22), "uint8")
        c = T.alloc_fragment((64, 64), "float16")
        T.copy(B, b_shared)
        T.copy(b_shared, b)
        for i, j in T.Parallel(64, 64):
            c[i, j] = T.cast(b[i, j // 3], "float16")
        T.copy(c, C)


@T.prim_func
def not_a_variable(B: T.Tensor((64, 33), "uint8"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        b_shared = T.alloc_shared((64, 33), "uint8")
        b = T.alloc_fragment((64, 33), "uint8")
        c = T.alloc_fragment((64, 64), "float16")
        T.copy(B, b_shared)
        T.copy(b_shared, b)
        for i, j in T.Parallel(64, 64):
            c[i, j] = T.cast(b[i, (j + 1) // 2], "float16")
        T.copy(c, C)
