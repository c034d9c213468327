# RUN: --emit=tir
# Reducers and thread all-reduces tlc refuses: a Parallel loop that
# updates a reducer other than as r[i] += value (here a plain store, and a
# loop with two variables the reducer does not index), finalize_reducer of
# a fragment that is no reducer, a T.attr that is not a thread all-reduce,
# and an all-reduce under a condition on the thread index (every thread
# must reach it).
import tilelang.language as T


@T.prim_func
def bad_reducers(A: T.Tensor((64, 64), "float32"), O: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        m = T.alloc_reducer((64,), "float32")
        f = T.alloc_fragment((64,), "float32")
        a = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a)
        T.clear(m)
        for i, j in T.Parallel(64, 64):
            m[i] = a[i, j]
        for i, j, k in T.Parallel(8, 8, 64):
            m[i] += a[i * 8 + j, k]
        T.finalize_reducer(f)
        T.copy(m, O)


@T.prim_func
def bad_allreduce(A: T.Tensor((128,), "float32"), O: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=(32, 4)) as bx:
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        r = T.alloc_local((1,), "float32")
        with T.attr(T.comm_reducer(lambda x, y: x * y, [T.cast(1, "float32")]), "reduce_scope", 0):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, r[0], ty, dtype="handle"))
        if tx < 16:
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope", 0):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, r[0], ty, dtype="handle"))
        O[tx + 32 * ty] = r[0]
