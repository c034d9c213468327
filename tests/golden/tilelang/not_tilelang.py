# RUN: --emit=summary
# A file with decorators but no TileLang kernel decorator and no
# `with T.Kernel(...)` line (a Triton kernel and its benchmark) is Python:
# tlc reports that it holds no kernel, not the Python it cannot read.
import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def main():
    x = torch.randn(4096, device="cuda")
    y = torch.randn(4096, device="cuda")
    out = torch.empty_like(x)
    ms = do_bench(lambda: add_kernel[(4,)](x, y, out, 4096, BLOCK=1024))
    print(f"{ms:.3f} ms")


if __name__ == "__main__":
    main()
