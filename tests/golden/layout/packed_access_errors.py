# RUN: --emit=layout
# Packed reads tlc cannot lay out: the fragment copied straight from global
# memory takes the copy's layout first, which does not hold each thread's
# bytes (stage it through shared memory, as TileLang's examples do); a
# packing that does not divide the loop's columns (j // 3 over 64) gives the
# loop no layout for it either; an index that is not a loop variable divided
# by a constant is refused by name.
import tilelang.language as T


@T.prim_func
def from_global(B: T.Tensor((64, 32), "uint8"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        b = T.alloc_fragment((64, 32), "uint8")
        c = T.alloc_fragment((64, 64), "float16")
        T.copy(B, b)
        for i, j in T.Parallel(64, 64):
            c[i, j] = T.cast((b[i, j // 2] >> (4 * (j % 2))) & 15, "float16")
        T.copy(c, C)


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
