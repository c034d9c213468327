# RUN: --emit=layout
# A packed fragment read in a Parallel loop (TileLang's dequantizing GEMMs:
# B_local[i, j // 2], two 4-bit values to a byte; w[i, j // 8], eight to a
# uint32 word): the packed fragment takes the loop's layout with j divided,
# the loop's digits of j below the packing leaving the slots (or becoming
# replicas where they are threads), so every thread holds the bytes its
# iterations unpack. The packed tiles come through shared memory, as in
# TileLang's examples, or straight from global memory: the packed read's
# layout then overrides the one the copy would choose, and the copy follows.
import tilelang.language as T


@T.prim_func
def packed(B: T.Tensor((64, 32), "uint8"), W: T.Tensor((64, 8), "uint32"), C: T.Tensor((64, 64), "float16"),
           D: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        b_shared = T.alloc_shared((64, 32), "uint8")
        w_shared = T.alloc_shared((64, 8), "uint32")
        b = T.alloc_fragment((64, 32), "uint8")
        w = T.alloc_fragment((64, 8), "uint32")
        c = T.alloc_fragment((64, 64), "float16")
        d = T.alloc_fragment((64, 64), "float16")
        T.copy(B, b_shared)
        T.copy(W, w_shared)
        T.copy(b_shared, b)
        T.copy(w_shared, w)
        for i, j in T.Parallel(64, 64):
            c[i, j] = T.cast((b[i, j // 2] >> (4 * (j % 2))) & 15, "float16")
        for i, j in T.Parallel(64, 64):
            d[i, j] = T.cast((w[i, j // 8] >> (4 * (j % 8))) & 15, "float16")
        T.copy(c, C)
        T.copy(d, D)


@T.prim_func
def from_global(B: T.Tensor((64, 32), "uint8"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        b = T.alloc_fragment((64, 32), "uint8")
        c = T.alloc_fragment((64, 64), "float16")
        T.copy(B, b)
        for i, j in T.Parallel(64, 64):
            c[i, j] = T.cast((b[i, j // 2] >> (4 * (j % 2))) & 15, "float16")
        T.copy(c, C)
