# RUN: --emit=metadata
# PTX:
# T.im2col with the stride, dilation and pad known only at launch (integer
# scalar parameters): the output's dims and the grid are expressions of
# them, and one launch check holds them in range (a stride of 0 would
# divide by zero). Computed the same as with them compiled in
# (python/tests/test_ports.py). A stride known only at launch keeps the
# column tile a gather by cp.async (TMA's im2col mode steps by a stride
# in the map); the filters' view is loaded by TMA.
import tilelang
import tilelang.language as T


@tilelang.jit
def conv(data, kernel, S: T.int32, D: T.int32, P: T.int32):
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    data: T.Tensor((N, H, W, C), T.float16)
    kernel: T.Tensor((K, K, C, F), T.float16)
    out = T.empty((N, OH, OW, F), T.float16)
    with T.Kernel(T.ceildiv(F, 64), T.ceildiv(N * OH * OW, 64), threads=128) as (bx, by):
        a = T.alloc_shared((64, 32), T.float16)
        b = T.alloc_shared((32, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        kernel_flat = T.Tensor((K * K * C, F), T.float16, kernel.data)
        out_flat = T.reshape(out, (N * OH * OW, F))
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K * K * C, 32), num_stages=2):
            T.im2col(data, a, by, k, K, S, D, P)
            T.copy(kernel_flat[k * 32, bx * 64], b)
            T.gemm(a, b, acc)
        T.copy(acc, out_flat[by * 64, bx * 64])
    return out
