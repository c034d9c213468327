import tilelang
import tilelang.language as T
from tilelang.autotuner import *
from tvm import tirx
import itertools
import torch
import argparse

# fp4 dequantizing GEMM (dequantize_gemm/example_dequant_gemm_fp4_hopper.py):
# B holds two fp4 values (sign, 2-bit exponent, 1-bit mantissa) a byte; each
# k tile of B is unpacked to float16 in a Parallel loop (reading the byte
# B_local[i, j // 2]) and multiplied with A. The kernels and their helper are
# the example's; the Python around them (reference, tuning list, driver) is
# written for this port.


def _tir_u8_to_f4_to_f16(nbit: int, val: tirx.PrimExpr, pos: tirx.PrimExpr, dtype: str):
    assert nbit == 4
    assert dtype == T.float16
    assert val.dtype == T.uint8
    # e_f4 == 0 -> e_f16 = 0
    # e_f4 != 0 -> e_f16 = e_f4 + ExponentialBias(f16, f4) = e_f4 + (2^4 - 2^1) = e_f4 + 14
    # s1e2m1
    mask = tirx.const((1 << nbit) - 1, T.uint16)
    f4 = (val >> (pos.astype(T.uint16) * tirx.const(nbit, T.uint16))) & mask
    s = f4 >> tirx.const(3, T.uint16)
    e_f4 = (f4 & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)
    e_f16 = e_f4 + tirx.const(14, T.uint16)
    m_f4 = f4 & tirx.const(1, T.uint16)
    m_f16 = m_f4
    val_f16 = tirx.reinterpret(
        T.float16,
        ((e_f16 | (s << tirx.const(5, T.uint16))) << tirx.const(10, T.uint16) | m_f16 << tirx.const(9, T.uint16)).astype(T.uint16),
    )
    # return tirx.Select(e_f4 == tirx.const(0, "uint32"), tirx.const(0, T.float16), val_f16)
    return val_f16


def unpack_fp4(packed):
    """float16 weights [n, 2 k] from packed [n, k] uint8 (low nibble first), as the kernels decode them."""
    rows, cols = packed.shape
    nibbles = torch.stack((packed & 15, packed >> 4), dim=-1).reshape(rows, 2 * cols).to(torch.int32)
    bits = ((nibbles >> 3) << 15) | ((((nibbles >> 1) & 3) + 14) << 10) | ((nibbles & 1) << 9)
    return bits.to(torch.int16).view(torch.float16)


@tilelang.jit(out_idx=[1])
def test_convert(N, K, block_N, block_K, in_dtype, num_bits=4, threads=128):
    num_elems_per_byte = 8 // num_bits
    storage_dtype = T.uint8
    B_shape = (N, K // num_elems_per_byte)
    B_shared_shape = (block_N, block_K // num_elems_per_byte)
    B_dequantize_shared_shape = (block_N, block_K)

    @T.prim_func
    def main(
        B: T.Tensor(B_shape, storage_dtype),
        C: T.Tensor((N, K), in_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as (bx):
            B_shared = T.alloc_shared(B_shared_shape, storage_dtype)
            B_local = T.alloc_fragment(B_shared_shape, storage_dtype)
            B_dequantize_local = T.alloc_fragment(B_dequantize_shared_shape, in_dtype)

            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
                T.copy(B[bx * block_N, k * block_K // num_elems_per_byte], B_shared)
                T.copy(B_shared, B_local)
                for i, j in T.Parallel(block_N, block_K):
                    B_dequantize_local[i, j] = _tir_u8_to_f4_to_f16(
                        num_bits,
                        B_local[i, j // num_elems_per_byte],
                        j % num_elems_per_byte,
                        dtype=in_dtype,
                    )
                T.copy(B_dequantize_local, C[bx * block_N, k * block_K])

    return main


def check_convert(n=256, k=256):
    kernel = test_convert(n, k, 64, 64, T.float16)
    packed = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda")
    torch.testing.assert_close(kernel(packed), unpack_fp4(packed), rtol=0, atol=0)


def get_configs():
    """The tuning list: tile sizes, stages and thread counts, no split."""
    return [
        {"block_M": bm, "block_N": bn, "block_K": bk, "num_stages": st, "threads": th, "split": 1}
        for bm, bn, bk, st, th in itertools.product((64, 128), (64, 128), (128, 256), (1, 2), (128, 256))
    ]


@autotune(configs=get_configs(), warmup=10, rep=10)
@tilelang.jit(out_idx=[2])
def matmul(
    M,
    N,
    K,
    in_dtype,
    out_dtype,
    accum_dtype,
    num_bits=4,
    block_M=128,
    block_N=128,
    block_K=128,
    num_stages=2,
    threads=256,
    split=1,
):
    num_elems_per_byte = 8 // num_bits
    storage_dtype = T.uint8
    A_shape = (M, K)
    B_shape = (N, K // num_elems_per_byte)
    A_shared_shape = (block_M, block_K)
    B_shared_shape = (block_N, block_K // num_elems_per_byte)
    B_dequantize_shared_shape = (block_N, block_K)
    assert K % (block_K * split) == 0
    KK = K // split

    @T.prim_func
    def main_split(
        A: T.Tensor(A_shape, in_dtype),
        B: T.Tensor(B_shape, storage_dtype),
        Ct: T.Tensor((N, M), out_dtype),
    ):
        SplitC = T.alloc_buffer([split, (N + block_N - 1) // block_N * block_N, (M + block_M - 1) // block_M * block_M], out_dtype)
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared(A_shared_shape, in_dtype)
            B_shared = T.alloc_shared(B_shared_shape, storage_dtype)
            B_local = T.alloc_fragment(B_shared_shape, storage_dtype)
            B_dequantize_local = T.alloc_fragment(B_dequantize_shared_shape, in_dtype)
            B_dequantize_prev_local = T.alloc_fragment(B_dequantize_shared_shape, in_dtype)
            Ct_local = T.alloc_fragment((block_N, block_M), accum_dtype)

            T.annotate_layout(
                {
                    B_shared: tilelang.layout.make_swizzled_layout(B_shared),
                }
            )

            T.clear(Ct_local)
            for k in T.Pipelined(K // (block_K * split), num_stages=num_stages):
                T.copy(A[by * block_M, KK * bz + k * block_K], A_shared)
                T.copy(B[bx * block_N, (KK * bz + k * block_K) // num_elems_per_byte], B_shared)
                T.copy(B_shared, B_local)
                for i, j in T.Parallel(block_N, block_K):
                    B_dequantize_local[i, j] = _tir_u8_to_f4_to_f16(
                        num_bits,
                        B_local[i, j // num_elems_per_byte],
                        j % num_elems_per_byte,
                        dtype=in_dtype,
                    )
                T.copy(B_dequantize_local, B_dequantize_prev_local)
                T.gemm(B_dequantize_prev_local, A_shared, Ct_local, transpose_B=True)
            T.copy(Ct_local, SplitC[bz, bx * block_N : (bx + 1) * block_N, by * block_M : (by + 1) * block_M])
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M)) as (bx, by):
            acc = T.alloc_fragment((block_N, block_M), out_dtype)
            T.clear(acc)
            for k in range(split):
                for i, j in T.Parallel(block_N, block_M):
                    acc[i, j] += SplitC[k, bx * block_N + i, by * block_M + j]
            T.copy(acc, Ct[bx * block_N, by * block_M])

    @T.prim_func
    def main(
        A: T.Tensor(A_shape, in_dtype),
        B: T.Tensor(B_shape, storage_dtype),
        Ct: T.Tensor((N, M), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, in_dtype)
            B_shared = T.alloc_shared(B_shared_shape, storage_dtype)
            B_local = T.alloc_fragment(B_shared_shape, storage_dtype)
            B_dequantize_local = T.alloc_fragment(B_dequantize_shared_shape, in_dtype)
            B_dequantize_prev_local = T.alloc_fragment(B_dequantize_shared_shape, in_dtype)
            Ct_local = T.alloc_fragment((block_N, block_M), accum_dtype)
            Ct_shared = T.alloc_shared((block_N, block_M), out_dtype)

            T.annotate_layout(
                {
                    B_shared: tilelang.layout.make_swizzled_layout(B_shared),
                }
            )

            T.clear(Ct_local)
            for k in T.Pipelined(K // block_K, num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K // num_elems_per_byte], B_shared)
                T.copy(B_shared, B_local)
                for i, j in T.Parallel(block_N, block_K):
                    B_dequantize_local[i, j] = _tir_u8_to_f4_to_f16(
                        num_bits,
                        B_local[i, j // num_elems_per_byte],
                        j % num_elems_per_byte,
                        dtype=in_dtype,
                    )
                T.copy(B_dequantize_local, B_dequantize_prev_local)
                T.gemm(B_dequantize_prev_local, A_shared, Ct_local, transpose_B=True)
            T.copy(Ct_local, Ct_shared)
            T.copy(Ct_shared, Ct[bx * block_N : (bx + 1) * block_N, by * block_M : (by + 1) * block_M])

    if split == 1:
        return main
    else:
        return main_split


def ref_program(A, packed):
    """Ct = dequantized B times A^T, in float32, as float16."""
    return (unpack_fp4(packed).float() @ A.float().T).half()


def main(m=256, n=256, k=256):
    kernel = matmul(m, n, k, T.float16, T.float16, T.float32, num_bits=4, block_M=128, block_N=128, block_K=128,
                    num_stages=2, threads=256, split=1)
    A = torch.randn(m, k, device="cuda", dtype=torch.float16)
    packed = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda")
    torch.testing.assert_close(kernel(A, packed), ref_program(A, packed), rtol=1e-2, atol=1e-2)
    check_convert()
    print("dequantizing GEMM and conversion match the reference")


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description="fp4 dequantizing GEMM")
    for name in ("m", "n", "k"):
        cli.add_argument(f"--{name}", type=int, default=256)
    opts = cli.parse_args()
    main(opts.m, opts.n, opts.k)
