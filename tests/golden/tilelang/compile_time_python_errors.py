# RUN: --emit=tir -D n=4
"""Compile-time Python used on what is not known at compile time, or beyond
what it can do: each line is one located error."""
import math

import tilelang
import tilelang.language as T


@tilelang.jit
def bad(n, flag, causal, block=64):
    shape = (4, 8)
    a = len(n)                            # an int has no length
    b = shape[2]                          # out of range
    c = [x for x in n]                    # not a sequence
    d = [x for x in range(0, 10, 0)]      # step 0
    d2 = len(range(-9223372036854775807, 4611686018427387903))   # more than 2^63 items
    e = (1, 2) * 5000                     # too many items
    f = math.sqrt(-1.0)                   # no finite value
    g = math.factorial(5)                 # not one tlc runs
    h = [x for x in shape if flag]        # the condition needs flag
    i = (1, 2) if flag else (2, 1)        # a choice of tuples needs flag
    (j, k) = (0, 0)
    l = [p + q for p, q in (1, 2)]        # cannot unpack an int
    m = (1, 2) - (1,)                     # no such operator on tuples
    for q in n:                           # an int is not a sequence
        pass
    r = isinstance(block, dict)           # not a type tlc tests
    o = tilelang.math.cdiv(-9223372036854775807, -1)   # past int64
    g = torch.cuda.get_device_properties(0).total_memory   # not known when tlc compiles
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for t in T.Parallel(64):
                A[t] = math.exp(A[t])     # math is Python's: T.exp in a kernel
            if causal:                    # a flag without a default: one error, naming its -D
                last = 63
            A[last] = 0.0
    return main
