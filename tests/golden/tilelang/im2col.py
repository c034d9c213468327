# RUN: --emit=tir -D S=2 -D D=1 -D P=1
# T.im2col: a convolution's column tile as a Parallel loop of element reads
# (the tile's filter position computed once, padding and the pixels past the
# last read as 0), and views of tensors as matrices (T.Tensor(shape, dtype,
# X.data), T.reshape): their element counts checked at launch where sizes
# decide them, proven equal where the factors match.
import tilelang
import tilelang.language as T


@tilelang.jit
def conv(data, kernel, S, D, P):
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
