# RUN: --emit=layout
# A gemm accumulator spreads its rows over the threads, so no thread holds
# a whole column: reading acc[k, j] at a row k shared by a Parallel loop's
# iterations is a layout conflict that names the reason.
import tilelang.language as T


@T.prim_func
def rows_of_acc(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), O: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_shared((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        s = T.alloc_fragment((64,), "float32")
        T.copy(A, a)
        T.copy(B, b)
        T.gemm(a, b, acc, clear_accum=True)
        T.clear(s)
        for k in T.serial(64):
            for j in T.Parallel(64):
                s[j] += acc[k, j]
        T.copy(s, O)
