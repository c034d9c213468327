# RUN: --emit=tir -D sizes=(100,200,300) -D mode=fast
"""Python a factory computes from compile-time values before its kernel:
builtins over sequences, the math module, tilelang.math, int.bit_length,
isinstance, sequence operators, indexing and slicing, comprehensions and
generator expressions, a for loop with list.append / extend. Each result is stored into its own element of A, so the dump
shows the value tlc computed (the expected one is in the comment)."""
import math

import tilelang
import tilelang.language as T


@tilelang.jit
def folded(sizes, mode, block_M=64, trans=False):
    shape = (4, 8) + (2,)                           # (4, 8, 2)
    reps = [1, 2] * 2                               # [1, 2, 1, 2]
    m_blocks = sum((s + block_M - 1) // block_M for s in sizes)   # 2 + 4 + 5 = 11
    evens = [i * i for i in range(6) if i % 2 == 0]                # [0, 4, 16]
    prods = [a * b for a, b in ((1, 2), (3, 4))]                   # [2, 12]
    digits = "".join(c for c in "int8" if c in "0123456789") if False else "8"
    name = "float" + "16"
    tile = (block_M, 32) if not trans else (32, block_M)
    offsets = [0]                                   # a Python loop, run at compile time
    for size in sizes[:-1]:
        offsets.append(offsets[-1] + math.ceil(size / block_M))
    offsets.extend([7])                             # [0, 2, 6, 7]
    ints = isinstance(block_M, int) and not isinstance(block_M, (float, str))
    @T.prim_func
    def main(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            s = T.alloc_shared(tile, "float32", scope="shared")   # (64, 32): the scope asks for what tlc does
            A[0] = len(shape) + len(reps) + len(name)               # 3 + 4 + 7 = 14
            A[1] = max(shape) + min(3, 1, 2) + max(7, 5, 9, 2)      # 8 + 1 + 9 = 18
            A[2] = sum(reps) + sum(evens, 100)                      # 6 + 120 = 126
            A[3] = m_blocks + prods[-1] + evens[1]                  # 11 + 12 + 4 = 27
            A[4] = math.ceil(100 / 64) + math.floor(-2.5) + math.trunc(-2.5)   # 2 - 3 - 2 = -3
            A[5] = math.sqrt(16.0) + math.log2(1024) + math.log(8, 2)          # 4 + 10 + 3 = 17
            A[6] = tilelang.math.next_power_of_2(100) + tilelang.math.cdiv(100, 64)   # 128 + 2 = 130
            A[7] = block_M.bit_length() + math.gcd(48, 18)          # 7 + 6 = 13
            A[8] = len(shape[1:]) + shape[::-1][0] + len(name[:5])  # 2 + 2 + 5 = 9
            A[9] = any(x > 10 for x in evens) + all(x < 10 for x in evens)   # 1 + 0
            A[10] = len(tuple(c for c in name)) + len(list(range(3)))        # 7 + 3 = 10
            A[11] = math.pi
            A[12] = s.shape[0] if False else tile[0]                # 64
            A[13] = 1 if mode == "fast" and digits == "8" else 0    # 1
            A[14] = offsets[-2] + offsets[-1] + ints                # 6 + 7 + 1 = 14
            A[15] = len([x for x in range(-9223372036854775807, 9223372036854775807, 4611686018427387904)])   # 4
            A[16] = len(shape[1::9223372036854775807] + shape[-1::-9223372036854775807])   # 1 + 1 = 2
    return main
