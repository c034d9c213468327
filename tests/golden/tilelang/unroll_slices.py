# RUN: --emit=tir
# PTX:
# A T.unroll loop whose body slices gemm operands by its variable is
# written out once per iteration in sema (the slices' offsets constants,
# as planning needs them); clear_accum may be a condition: folded in each
# written-out copy (j == 0), tested when the gemm runs otherwise (k == 0 of
# a serial loop: the accumulator selected to 0 there). Checked in the
# interpreter by python/tests/test_interpret.py.
import tilelang
import tilelang.language as T


@tilelang.jit
def k_steps(A, B, block=64):
    A: T.Tensor((block, 4 * block), T.float16)
    B: T.Tensor((4 * block, block), T.float16)
    C = T.empty((block, block), T.float32)
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_shared((block, 4 * block), T.float16)
        b = T.alloc_shared((4 * block, block), T.float16)
        acc = T.alloc_fragment((block, block), T.float32)
        T.copy(A, a)
        T.copy(B, b)
        T.fill(acc, 1)
        for j in T.unroll(4):
            T.gemm(a[:, j * block : (j + 1) * block], b[j * block : (j + 1) * block, :], acc, clear_accum=(j == 0))
        for k in T.serial(2):
            T.gemm(a[:, 0:block], b[0:block, :], acc, clear_accum=(k == 0))
        T.copy(acc, C)
    return C
