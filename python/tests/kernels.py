"""Small DSL kernels the tests compile and run."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "dsl-examples")

SCALE = """\
@jit(N=256, threads=128)
def scale(X: Tensor[(N,), float32], Y: Tensor[(N,), float32], s: float32):
    with Kernel(1, threads=threads) as bx:
        x = alloc_fragment((N,), float32)
        copy(X, x)
        for i in Parallel(N):
            x[i] = x[i] * s
        copy(x, Y)
"""

# Reads past the end of a local buffer: sema cannot see it (the index is a scalar parameter), the
# interpreter must.
OUT_OF_BOUNDS = """\
@jit(N=64, threads=32)
def oob(X: Tensor[(N,), float32], Y: Tensor[(N,), float32], k: int32):
    with Kernel(1, threads=threads) as bx:
        t = alloc_local((4,), float32)
        for i in range(4):
            t[i] = X[i]
        Y[0] = t[k]
"""
