# RUN: --emit=tir
# PTX:
# Unsigned and 16-bit integer dtypes: uint8 / uint16 / int16 compute as
# int32 (a uint8 reads as 0..255), uint32 operations are unsigned (logical
# >>, //, %, <, min, max; a mixed operand converted to uint32 first), a float
# cast to an integer saturates. The interpreter test and the GPU test compare
# every output with NumPy (python/tests).
import tilelang.language as T


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
