import tilelang
import tilelang.language as T


# A 2-d convolution as an implicit GEMM: each block computes block_M output
# pixels by block_N filters, its A tiles gathered from the NHWC image by
# T.im2col (columns in (kh, kw, c) order), its B tiles from the filters
# viewed as a (KH * KW * C, F) matrix, its output written through a view of
# the NHWC result as (N * OH * OW, F).


@tilelang.jit
def convolution(data, kernel, S, D, P, block_M, block_N, block_K, num_stages, threads, dtype=T.float16, accum_dtype=T.float32):
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    dtype = T.float16
    accum_dtype = T.float32

    data: T.Tensor((N, H, W, C), dtype)
    kernel: T.Tensor((KH, KW, C, F), dtype)
    out = T.empty((N, OH, OW, F), dtype)

    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=threads) as (bx, by):
        data_shared = T.alloc_shared((block_M, block_K), dtype)
        kernel_shared = T.alloc_shared((block_K, block_N), dtype)
        out_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        out_shared = T.alloc_shared((block_M, block_N), dtype)

        kernel_flat = T.Tensor((KH * KW * C, F), dtype, kernel.data)
        out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)

        T.clear(out_local)
        for k_iter in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=num_stages):
            T.im2col(data, data_shared, by, k_iter, KH, S, D, P)
            T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
            T.gemm(data_shared, kernel_shared, out_local)

        T.copy(out_local, out_shared)
        T.copy(out_shared, out_flat[by * block_M, bx * block_N])

    return out


def reference(image, filters, stride, padding, dilation):
    """torch's conv2d on the NHWC image and (KH, KW, C, F) filters, NHWC out."""
    import torch

    out = torch.conv2d(image.permute(0, 3, 1, 2), filters.permute(3, 2, 0, 1), stride=stride, padding=padding,
                       dilation=dilation)
    return out.permute(0, 2, 3, 1)


def main(n=8, c=64, h=28, w=28, f=128, k=3, s=1, d=1, p=1):
    import torch

    image = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
    filters = torch.randn(k, k, c, f, device="cuda", dtype=torch.float16)
    out = convolution(image, filters, s, d, p, 64, 128, 32, 3, 256)
    torch.testing.assert_close(out, reference(image, filters, s, p, d), rtol=1e-2, atol=1e-2)
    print("convolution matches torch.conv2d")


if __name__ == "__main__":
    main()
