# RUN: --emit=layout
# Fragments read or written element by element outside a Parallel loop are
# held whole by every thread (slots in row-major order, every thread a
# replica): a scalar kept in a (1,) fragment, a mask read in a serial loop
# at a run-time index (local memory), a reduce of a 1-D tile into a (1,)
# fragment. A Parallel loop reads them at any index; a fragment read
# transposed (x[j, i]) gets the loop's layout transposed. Y[bz] = X^T *
# S[bz] + (mask bits set in row bz) + sum(X) (python/tests/test_gpu.py runs
# it).
import tilelang
import tilelang.language as T


@T.prim_func
def per_thread(X: T.Tensor((64, 32), "float32"), Mask: T.Tensor((4, 8), "bool"), S: T.Tensor((4,), "float32"),
               Y: T.Tensor((4, 32, 64), "float32")):
    with T.Kernel(4, threads=128) as bz:
        scale = T.alloc_fragment((1,), "float32")
        mask = T.alloc_fragment((8,), "bool")
        x = T.alloc_fragment((64, 32), "float32")
        xt = T.alloc_fragment((32, 64), "float32")
        row = T.alloc_fragment((64 * 32,), "float32")
        total = T.alloc_fragment((1,), "float32")
        count = T.alloc_var("int32")
        scale[0] = S[bz]
        T.copy(Mask[bz, :], mask)
        count = 0
        for k in T.serial(8):
            if mask[k]:
                count = count + 1
        T.copy(X, x)
        for i, j in T.Parallel(32, 64):
            xt[i, j] = x[j, i] * scale[0] + count
        for i in T.Parallel(64 * 32):
            row[i] = X[i // 32, i % 32]
        T.reduce_sum(row, total, dim=-1)
        for i, j in T.Parallel(32, 64):
            xt[i, j] = xt[i, j] + total[0]
        T.copy(xt, Y[bz, :, :])
