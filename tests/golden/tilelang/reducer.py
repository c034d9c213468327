# RUN: --emit=tir
# TileLang's reducers: T.alloc_reducer makes a fragment that a Parallel loop
# updates with += (each iteration adding into the element its other loop
# variable does not index), and T.finalize_reducer combines the threads'
# partials. tlc writes the loop into a fragment of the loop's shape and a
# reduce over the other dim into the reducer (clear=false), so the reduce
# combines the threads and finalize_reducer has nothing left to do.
# gemv_alloc_reducer is TileLang's GEMV example's; row_max is a max
# reducer. The interpreter and GPU tests compare with NumPy (python/tests).
import tilelang as tl
import tilelang.language as T


@tl.jit(
    pass_configs={
        tl.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
        tl.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
    },
)
def gemv_alloc_reducer(
    a, x, block_M=128, block_N=128, num_stages=2, threads=256, dtype: T.dtype = T.float16, accum_dtype: T.dtype = T.float
):
    M, N = T.const("M, N")
    a: T.Tensor((M, N), dtype)
    x: T.Tensor((N,), dtype)
    o = T.empty((M,), dtype)

    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as i0_m:
        o_reducer = T.alloc_reducer(block_M, accum_dtype, replication="all")
        T.clear(o_reducer)
        for i0_n in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
            a_smem = T.alloc_shared((block_M, block_N), dtype)
            T.copy(a[i0_m * block_M, i0_n * block_N], a_smem)
            a_frag = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(a_smem, a_frag)
            x_frag = T.alloc_fragment(block_N, dtype)
            T.copy(x[i0_n * block_N], x_frag)
            for i1_m, i1_n in T.Parallel(block_M, block_N):
                o_reducer[i1_m] += a_frag[i1_m, i1_n] * x_frag[i1_n]
        T.finalize_reducer(o_reducer)
        T.copy(o_reducer, o[i0_m * block_M])

    return o


@T.prim_func
def row_max(A: T.Tensor((64, 256), "float32"), O: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        m = T.alloc_reducer((64,), "float32", op="max")
        T.fill(m, -T.infinity("float32"))
        for k in T.serial(4):
            a = T.alloc_fragment((64, 64), "float32")
            T.copy(A[0, k * 64], a)
            for i, j in T.Parallel(64, 64):
                m[i] = T.max(m[i], a[i, j])
        T.finalize_reducer(m)
        T.copy(m, O)
