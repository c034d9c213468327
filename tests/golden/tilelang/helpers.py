"""The file's own Python functions that kernels and factories call run at
compile time, on the call's values: cdiv serves both a constant and the
grid (N symbolic), and a scalar of the kernel (bx) too; _check only
asserts; tile_shape and count_pow2 take if, for, +=, break and continue.
The reference function and main() stay Python that tlc never reads, and so
does `uses_lambda`, which no kernel calls."""
import torch
import tilelang
import tilelang.language as T


def cdiv(a, b):
    return (a + b - 1) // b


def _check(block, minimum=16):
    assert block % minimum == 0, "block must be a multiple of the minimum"


def tile_shape(block_M, trans):
    if trans:
        return (32, block_M)
    shape = [block_M]
    for extra in (32,):
        shape += [extra]
    return tuple(shape)


def count_pow2(limit):
    n = 0
    for i in range(limit):
        if i == 0:
            continue
        if i & (i - 1) == 0:
            n += 1
        if i > 100:
            break
    return n


def uses_lambda(xs):
    return sorted(xs, key=lambda x: -x)


def ref_program(x):
    return torch.relu(x)


@tilelang.jit
def k(N, block_M=64, trans=False):
    _check(block_M)
    shape = tile_shape(block_M, trans)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(cdiv(N, block_M), threads=128) as bx:
            s = T.alloc_shared(shape, "float32")
            f = T.alloc_fragment((block_M,), "float32")
            for i in T.Parallel(block_M):
                f[i] = count_pow2(1000) + cdiv(bx, 2) + cdiv(100, 64)   # 7 + ceildiv(bx, 2) + 2
            T.copy(f, A[bx * block_M])
    return main


def main():
    print(ref_program(torch.ones(4)), uses_lambda([1, 2]))


if __name__ == "__main__":
    main()
