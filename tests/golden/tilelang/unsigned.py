# RUN: --emit=tir
# PTX:
# Unsigned and 16-bit integer dtypes: uint8 / uint16 / int16 compute as
# int32 (a uint8 reads as 0..255), uint32 operations are unsigned (logical
# >>, //, %, <, min, max; a mixed operand converted to uint32 first), a float
# cast to an integer saturates. TVM's tir.const(value, dtype) is a typed
# constant and reinterpret(dtype, value) the same bytes read as another dtype
# (a wider integer gives its low bytes). The interpreter test and the GPU
# test compare every output with NumPy (python/tests).
import tilelang.language as T
from tvm import tirx


def fp4_to_fp16(val, pos):
    """TileLang's dequantize example's helper: the 4-bit float (sign, 2-bit
    exponent, 1-bit mantissa) at nibble `pos` of a uint8, as float16 bits."""
    f4 = (val >> (pos.astype(T.uint16) * tirx.const(4, T.uint16))) & tirx.const(15, T.uint16)
    s = f4 >> tirx.const(3, T.uint16)
    e_f16 = ((f4 & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)) + tirx.const(14, T.uint16)
    m_f4 = f4 & tirx.const(1, T.uint16)
    bits = ((e_f16 | (s << tirx.const(5, T.uint16))) << tirx.const(10, T.uint16) | m_f4 << tirx.const(9, T.uint16))
    return tirx.reinterpret(T.float16, bits.astype(T.uint16))


@T.prim_func
def unsigned_ops(M: T.Tensor((256,), "uint8"), W: T.Tensor((256,), "uint32"), H: T.Tensor((256,), "uint16"),
                 S: T.Tensor((256,), "int16"), bound: T.uint32, F: T.Tensor((256,), "float32"),
                 U: T.Tensor((256,), "uint32"), B: T.Tensor((256,), "uint8"), C: T.Tensor((256,), "int8"),
                 R: T.Tensor((4,), "uint32")):
    with T.Kernel(1, threads=128) as bx:
        m = T.alloc_fragment((256,), "uint8")
        w = T.alloc_fragment((256,), "uint32")
        hi = T.alloc_fragment((1,), "uint32")
        lo = T.alloc_fragment((1,), "uint32")
        T.copy(M, m)
        T.copy(W, w)
        for i in T.Parallel(256):
            nibble = (w[i] >> 28) & T.uint32(0xF)
            F[i] = (T.cast(m[i], "float32") + T.cast(nibble, "float32") * 1000.0 + T.cast(H[i], "float32") * 0.25
                    + T.cast(S[i], "float32") + T.if_then_else(w[i] > T.uint32(0x80000000), 0.5, 0.0)
                    + T.if_then_else(-1 < w[i], 0.0, 0.125))
            U[i] = w[i] // T.uint32(3) + T.max(w[i], T.uint32(7)) % 5 + T.min(w[i], bound) + (w[i] << 3) + ~w[i]
            B[i] = T.cast(T.cast(m[i], "float32") * 2.0 - 100.0, "uint8")
            C[i] = T.cast(T.cast(S[i], "float32") * 0.01, "int8")
        T.reduce_max(w, hi, dim=0)
        T.reduce_min(w, lo, dim=0)
        R[0] = hi[0]
        R[1] = lo[0]
        R[2] = T.cast(M[0], "uint32") * T.uint32(0x01010101)
        R[3] = T.cast(S[0], "uint32")


@T.prim_func
def reinterpret_bits(B: T.Tensor((64, 32), "uint8"), C: T.Tensor((64, 64), "float16"), D: T.Tensor((64,), "int8"),
                     E: T.Tensor((64,), "uint32")):
    with T.Kernel(1, threads=128) as bx:
        for i, j in T.Parallel(64, 64):
            C[i, j] = fp4_to_fp16(B[i, j // 2], j % 2)
        for i in T.Parallel(64):
            D[i] = T.reinterpret(((B[i, 0] >> 4) & tirx.const(15, T.uint8)) << tirx.const(4, T.uint8), dtype="int8") >> 4
            E[i] = T.reinterpret("uint32", T.cast(B[i, 1], "float32") - 64.0)
