# RUN: --emit=summary
# `...` parses where Python allows it: a factory's return annotation
# (ignored, as all annotations of a factory), a relative import, Python the
# filter skips. In a kernel it has no meaning and says so.
from typing import Any, Callable
from ...pkg import helper

import tilelang
import tilelang.language as T


@tilelang.jit
def scale(N, block=128) -> Callable[..., Any]:
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 2.0
    return main


@tilelang.jit
def fill(N, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            x = ...
            for i in T.Parallel(block):
                A[bx * block + i] = 1.0
    return main


def skipped(*args: Any) -> Callable[..., None]:
    return ...
