#!/usr/bin/env python3
"""TileLang's GEMV example's SIMT kernels (tests/golden/tilelang/thread_binding.py: thread-indexed
code, compiled by tlc from the kernels as TileLang writes them) against torch's matrix-vector
product (cuBLAS) on the same tensors, in one process, on the same GPU.

    python3 tools/bench/gemv_bench.py [--rounds 3]

C = B @ A for B [n, k] and A [k] float16, float32 accumulation. Every kernel's C is checked first
against the product in float64 (max |C - ref| / max |ref| below 1e-2). Times are triton.testing.do_bench
medians (L2 cleared before each call), --rounds rounds in alternating order; GB/s counts B's bytes.
"""
import argparse
import os
import sys
from statistics import median

import torch
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tlc  # noqa: E402

SRC = os.path.join(ROOT, "tests", "golden", "tilelang", "thread_binding.py")
KERNELS = ("naive_gemv", "naive_splitk_gemv", "splitk_gemv_vectorized", "splitk_gemv_vectorized_tvm")
SHAPES = [(4096, 4096), (8192, 8192), (16384, 8192)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"GPU: {torch.cuda.get_device_name(0)}, tlc PTX: {tlc.ptx_generator()}")
    print("| n | k | kernel | tlc us | tlc GB/s | torch (cuBLAS) us | torch GB/s | tlc / torch time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, k in SHAPES:
        a = torch.randn(k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16)
        ref = b.double() @ a.double()
        for name in KERNELS:
            kern = tlc.compile(SRC, kernel=name)
            c = torch.full((n,), float("nan"), device="cuda", dtype=torch.float16)
            kern(a, b, c)
            err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            if not err < 1e-2:
                print(f"| {n} | {k} | {name} | wrong: max error {err:.3g} | | | | |")
                continue
            t_tlc, t_ref = [], []
            for r in range(args.rounds):
                fns = [(t_tlc, lambda: kern(a, b, c)), (t_ref, lambda: torch.mv(b, a))]
                for out, fn in fns if r % 2 == 0 else fns[::-1]:
                    out.append(do_bench(fn, warmup=25, rep=100) * 1e3)
            us, ref_us = median(t_tlc), median(t_ref)
            gbs = lambda t: n * k * 2 / (t * 1e-6) / 1e9  # noqa: E731
            print(f"| {n} | {k} | {name} | {us:.1f} | {gbs(us):.0f} | {ref_us:.1f} | {gbs(ref_us):.0f} | "
                  f"{us / ref_us:.2f} |")


if __name__ == "__main__":
    main()
