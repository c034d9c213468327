# RUN: --emit=ast
"""Python around a kernel that tlc must skip without reading it.

A docstring may hold what looks like code at the start of a line:
@tilelang.jit
def not_a_kernel(A):
    with T.Kernel(1) as bx:
        pass
"""
from __future__ import annotations

import functools, os, sys  # several modules on one line
from typing import (
    Optional,
    Tuple,
)

import torch
import tilelang
import tilelang.language as T

BLOCK = 64
SCALE = 0.5 * 2
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
squares = [i * i for i in range(4)]
table = {"a": 1, 'b': 2}
π = 3.14159
M, N = 4096, 4096
x = y = 0
banner = f"{'tlc':>{8}} {os.sep!r} {{literal}}"
path = os.path.join(os.path.dirname(__file__),
"data",    # a continuation line at column 0, inside brackets
    "weights.bin")
total = 1 + \
2
raw = r"C:\dir\"x" + '\''
matrix = torch.ones(2, 2) @ torch.ones(2, 2)


def helper(a, b=None, *args, **kwargs) -> Optional[int]:
    """Returns something; says def f(): and @T.prim_func in its text."""
    s = f"""multi-line f-string {a!s}
def inside_string():
@tilelang.jit
"""
# a comment at column 0 inside a function
    if a is not None and b not in (1, 2):
	    return lambda z: z ** 2  # a tab-indented line
    return {k: v for k, v in kwargs.items()}


@functools.lru_cache(maxsize=None)
@torch.no_grad()
def cached(n: int) -> int:
    return n


async def fetch():
    await something()


class Config:
    block: int = 128

    @staticmethod
    @T.prim_func
    def method_kernel(A: T.Tensor((4,), "float32")):
        with T.Kernel(1):
            pass

    def __init__(self):
        self.x: Tuple[int, ...] = (1, 2)


try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
else:
    del np
finally:
    pass

with open(os.devnull) as f:
    print("ok", file=f)

for _ in range(2):
    assert True, "never"

while False:
    break

global_counter: int = 0
global_counter += 1
print(f"{global_counter=}")
lambda: None
...


@tilelang.autotune(configs=[{"threads": t} for t in (64, 128)])
@tilelang.jit(out_idx=[-1])
def scale_rows(X, threads=128):
    R, C = T.const("R, C")
    X: T.Tensor((R, C), "float32")
    Y = T.empty((R, C), "float32")
    with T.Kernel(T.ceildiv(R, BLOCK), threads=threads) as bx:
        t = T.alloc_fragment((BLOCK, BLOCK), "float32")
        T.copy(X[bx * BLOCK, 0], t)
        for i, j in T.Parallel(BLOCK, BLOCK):
            t[i, j] = t[i, j] * SCALE
        T.copy(t, Y[bx * BLOCK, 0])
    return Y


if __name__ == "__main__":
    @tilelang.jit
    def defined_in_main(A):
        pass
    print(helper(1), cached(2), Config())
