# RUN: --emit=layout
# A FullCol gemm's accumulator stored half its rows at a time (as DeepSeek
# V3.2's sparse MLA backward stores dKV): the Parallel loop over all 32 rows
# guarded by `if i < 16` runs over 16 (sema_parallel_guard.c), so that the
# read acc[i + s * 16, j] is a view of the accumulator split at 16 rows
# (acc_by16, read at [s, i, j]) and the loop takes the accumulator's
# placement of those rows: each thread stores its own elements. A loop
# shorter than the fragment it reads (8 of rowmax's 32 rows) is not laid
# out as that fragment (which would run all 32 and write M[8:16] too).
import tilelang.language as T


@T.prim_func
def halves(A: T.Tensor((128, 32), "float16"), B: T.Tensor((128, 512), "float16"), C: T.Tensor((32, 512), "float32"),
           M: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        a_s = T.alloc_shared((128, 32), "float16")
        b_s = T.alloc_shared((128, 512), "float16")
        acc = T.alloc_fragment((32, 512), "float32")
        rowmax = T.alloc_fragment((32,), "float32")
        half = T.alloc_shared((16, 512), "float32")
        T.copy(A, a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, acc, transpose_A=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
        T.reduce_max(acc, rowmax, dim=1)
        for s in T.serial(2):
            for i, j in T.Parallel(32, 512):
                if i < 16:
                    half[i, j] = acc[i + s * 16, j]
            T.copy(half, C[s * 16, 0])
        for i in T.Parallel(8):
            M[i] = rowmax[i]
