# RUN: --emit=ptx --arch=sm_80 -o /dev/null
# float8_e4m3 where tlc cannot lower it: gemm operands read MN-major (the
# tensor cores' float8 forms, as tlc lowers them, read K-major operands)
# and a gemm on a target without float8 tensor-core instructions (before sm_89).
import tilelang.language as T


@T.prim_func
def b_not_transposed(A: T.Tensor((128, 64), T.float8_e4m3), B: T.Tensor((64, 128), T.float8_e4m3),
                     C: T.Tensor((128, 128), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128, 64), T.float8_e4m3)
        B_shared = T.alloc_shared((64, 128), T.float8_e4m3)
        C_local = T.alloc_fragment((128, 128), T.float32)
        T.copy(A, A_shared)
        T.copy(B, B_shared)
        T.gemm(A_shared, B_shared, C_local, clear_accum=True)
        T.copy(C_local, C)


@T.prim_func
def before_sm89(A: T.Tensor((128, 64), T.float8_e4m3), B: T.Tensor((128, 64), T.float8_e4m3),
             C: T.Tensor((128, 128), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        A_shared = T.alloc_shared((128, 64), T.float8_e4m3)
        B_shared = T.alloc_shared((128, 64), T.float8_e4m3)
        C_local = T.alloc_fragment((128, 128), T.float32)
        T.copy(A, A_shared)
        T.copy(B, B_shared)
        T.gemm(A_shared, B_shared, C_local, transpose_B=True, clear_accum=True)
        T.copy(C_local, C)
