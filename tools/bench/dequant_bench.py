#!/usr/bin/env python3
"""TileLang's fp4 dequantizing GEMM (tests/ports/example_dequant_gemm_fp4_hopper.py, compiled by tlc
from the unchanged file) against cuBLAS's float16 GEMM on the same weights already dequantized
(torch.matmul: what the fused kernel saves is the float16 weights' memory traffic and a pass to
unpack them), in one process, on the same GPU.

    python3 tools/bench/dequant_bench.py [--rounds 3] [--defines NAME=VALUE,...]

Ct = dequant(B) @ A^T for A [m, k] float16 and B [n, k / 2] uint8 (two fp4 values a byte), float32
accumulation. Every row is checked first against the dequantized weights' product in float64
(max |out - ref| / max |ref| below 1e-2). Times are triton.testing.do_bench medians, --rounds rounds
in alternating order; TFLOP/s counts 2 m n k.
"""
import argparse
import os
import sys
from statistics import median

import numpy as np
import torch
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
import tlc  # noqa: E402
from kernels import fp4_to_fp16  # noqa: E402

PORT = os.path.join(ROOT, "tests", "ports", "example_dequant_gemm_fp4_hopper.py")
SHAPES = [(256, 256, 256), (1024, 4096, 4096), (4096, 4096, 4096), (8192, 8192, 8192), (16, 8192, 8192)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--defines", default="", help="extra -D values, NAME=VALUE,...")
    args = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in args.defines.split(",") if kv)
    print(f"GPU: {torch.cuda.get_device_name(0)}")
    print("| m | n | k | tlc us | tlc TFLOP/s | cuBLAS fp16 (dequantized B) us | TFLOP/s | tlc / cuBLAS time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for m, n, k in SHAPES:
        defines = {"M": m, "N": n, "K": k, "in_dtype": "float16", "out_dtype": "float16", "accum_dtype": "float32",
                   **extra}
        kern = tlc.compile(PORT, kernel="matmul", defines=defines)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        qb_np = np.random.default_rng(m + n + k).integers(0, 256, (n, k // 2)).astype(np.uint8)
        qb = torch.from_numpy(qb_np).cuda()
        b = torch.from_numpy(fp4_to_fp16(qb_np)).cuda()
        ct = torch.empty(n, m, device="cuda", dtype=torch.float16)
        kern(a, qb, ct)
        ref = b.double() @ a.double().T
        err = ((ct.double() - ref).abs().max() / ref.abs().max()).item()
        if not err < 1e-2:
            print(f"| {m} | {n} | {k} | wrong: max error {err:.3g} | | | | |")
            continue
        t_tlc, t_ref = [], []
        for r in range(args.rounds):
            fns = [("tlc", lambda: kern(a, qb, ct)), ("ref", lambda: torch.matmul(b, a.T))]
            for name, fn in fns if r % 2 == 0 else fns[::-1]:
                (t_tlc if name == "tlc" else t_ref).append(do_bench(fn, warmup=25, rep=100) * 1e3)
        tt, tr = median(t_tlc), median(t_ref)
        fl = 2 * m * n * k
        print(f"| {m} | {n} | {k} | {tt:.1f} | {fl / tt / 1e6:.1f} | {tr:.1f} | {fl / tr / 1e6:.1f} | {tt / tr:.2f} |")


if __name__ == "__main__":
    main()
