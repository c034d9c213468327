# RUN: --emit=tir
# PTX:
# Warp shuffles in thread-indexed code: T.shfl_xor(value, lane_mask) is
# the value of lane laneid ^ lane_mask (a butterfly), T.shfl_sync(value,
# lane) the value of lane `lane`, and TVM's tvm_warp_shuffle(mask, value,
# lane, width, warp_size) CUDA's __shfl_sync, all within parts of `width`
# lanes of the warp. row_sums: each warp sums a 32-value row by a
# butterfly, lane 0's total given to every lane, and groups of 8 lanes sum
# their own values. The interpreter and GPU tests compare with NumPy
# (python/tests).
import tilelang.language as T


@T.prim_func
def row_sums(A: T.Tensor((4, 32), "float32"), S: T.Tensor((4, 32), "float32"), G: T.Tensor((4, 32), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding(0)
        row = tx // 32
        lane = tx % 32
        v = T.alloc_local((1,), "float32")
        g = T.alloc_local((1,), "float32")
        v[0] = A[row, lane]
        g[0] = v[0]
        for i in T.unroll(5):
            v[0] = v[0] + T.shfl_xor(v[0], 16 >> i)
        for i in T.unroll(3):
            g[0] += T.shfl_xor(g[0], 1 << i, width=8)
        S[row, lane] = T.shfl_sync(v[0], 0) if lane % 2 == 0 else T.tvm_warp_shuffle(0xFFFFFFFF, v[0], 31, 32, 32)
        G[row, lane] = g[0]
