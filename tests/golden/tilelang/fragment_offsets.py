# RUN: --emit=layout
# A fragment read or written in a Parallel loop at a loop variable plus an
# offset the iterations share (xf[i, jj * 8 + j] in a loop over (i, j)
# inside a serial loop over jj): the fragment seen as [64, 32, 8] (a view,
# xf_by8) at [i, jj, j], and the loop laid out as the gemm's register
# operand places those elements, so each thread reads its own.
import tilelang.language as T


@T.prim_func
def chunk_sums(X: T.Tensor((64, 256), "float16"), W: T.Tensor((32, 256), "float16"),
               Y: T.Tensor((64, 32), "float32"), S: T.Tensor((64, 8), "float32"), Z: T.Tensor((64, 256), "float32")):
    with T.Kernel(1, threads=128) as bx:
        xs = T.alloc_shared((64, 256), "float16")
        ws = T.alloc_shared((32, 256), "float16")
        xf = T.alloc_fragment((64, 256), "float16")
        acc = T.alloc_fragment((64, 32), "float32")
        part = T.alloc_fragment((64, 8), "float32")
        zf = T.alloc_fragment((64, 256), "float32")
        T.copy(X, xs)
        T.copy(W, ws)
        T.copy(xs, xf)
        T.clear(part)
        T.clear(acc)
        for jj in T.serial(32):
            for i, j in T.Parallel(64, 8):
                part[i, j] += xf[i, jj * 8 + j] * xf[i, j + 8 * jj]
                zf[i, jj * 8 + j] = xf[i, jj * 8 + j] * 2.0
        T.gemm(xf, ws, acc, transpose_B=True)
        T.copy(acc, Y)
        T.copy(part, S)
        T.copy(zf, Z)
