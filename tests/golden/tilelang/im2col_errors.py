# RUN: --emit=tir
# What T.im2col and the views of tensors refuse.
import tilelang
import tilelang.language as T


@tilelang.jit
def wrong_operands(x, flat, block_M=64, block_K=32):
    N, H, W, C = T.const("N, H, W, C")
    x: T.Tensor((N, H, W, C), T.float16)
    flat: T.Tensor((N * H, W * C), T.float16)
    with T.Kernel(4, threads=128) as bx:
        s = T.alloc_shared((block_M, block_K), T.float16)
        s32 = T.alloc_shared((block_M, block_K), T.float32)
        f = T.alloc_fragment((block_M, block_K), T.float16)
        T.im2col(flat, s, bx, 0, 3, 1, 1, 1)
        T.im2col(x, f, bx, 0, 3, 1, 1, 1)
        T.im2col(x, s32, bx, 0, 3, 1, 1, 1)
        T.im2col(x, s, bx, 0, 0, 1, 1, 1)
        T.im2col(x, s, bx, 0, 3, 1, 1, -1)


@tilelang.jit
def block_stride(x, scale: T.float32, block_M=64, block_K=32):
    N, H, W, C = T.const("N, H, W, C")
    x: T.Tensor((N, H, W, C), T.float16)
    with T.Kernel(4, threads=128) as bx:
        s = T.alloc_shared((block_M, block_K), T.float16)
        T.im2col(x, s, bx, 0, 3, bx + 1, 1, 1)
        T.im2col(x, s, bx, 0, 3, 1, T.int32(scale), 1)


@tilelang.jit
def channels(x, block_M=64, block_K=32):
    x: T.Tensor((2, 8, 8, 48), T.float16)
    with T.Kernel(4, threads=128) as bx:
        s = T.alloc_shared((block_M, block_K), T.float16)
        T.im2col(x, s, bx, 0, 3, 1, 1, 1)


@tilelang.jit
def views(x, y):
    M, K = T.const("M, K")
    x: T.Tensor((M, K), T.float16)
    y: T.Tensor((64, 32), T.float16)
    with T.Kernel(4, threads=128) as bx:
        s = T.alloc_shared((64, 32), T.float16)
        wrong_count = T.Tensor((64, 64), T.float16, y.data)
        wrong_dtype = T.Tensor((M * K,), T.float32, x.data)
        not_data = T.Tensor((M * K,), T.float16, x)
        of_shared = T.view(s, (32, 64))
        runtime_size = T.Tensor((M * bx,), T.float16, x.data)
