#!/usr/bin/env python3
"""TileLang's Hadamard transform (tests/ports/example_hadamard.py, thread-indexed code with warp
shuffles, compiled by tlc from the example's kernel) against the same transform as a matrix product
in torch (x @ H^T with cuBLAS, what the example's reference computes) and a copy of the same bytes,
in one process, on the same GPU.

    python3 tools/bench/hadamard_bench.py [--rounds 3]

Each row is checked first against the float64 product. Times are triton.testing.do_bench medians
(L2 cleared before each call), --rounds rounds in alternating order; GB/s counts the bytes read and
written once.
"""
import argparse
import os
import sys
from statistics import median

import torch
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
import tlc  # noqa: E402
from test_ports import hadamard_matrix  # noqa: E402

PORT = os.path.join(ROOT, "tests", "ports", "example_hadamard.py")
SHAPES = [(4096, 1024), (4096, 8192), (64, 32768)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"GPU: {torch.cuda.get_device_name(0)}, tlc PTX: {tlc.ptx_generator()}")
    print("| rows | n | tlc us | tlc GB/s | torch x @ H^T us | copy us | copy GB/s | tlc / copy time |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for rows, n in SHAPES:
        kern = tlc.compile(PORT, defines={"n": n, "dtype": "float32"})
        x = torch.randn(rows, n, device="cuda")
        y, z = torch.full_like(x, float("nan")), torch.empty_like(x)
        h = torch.from_numpy(hadamard_matrix(n)).float().cuda()
        kern(x, y)
        ref = x.double() @ h.double().T
        err = ((y.double() - ref).abs().max() / ref.abs().max()).item()
        if not err < 1e-5:
            print(f"| {rows} | {n} | wrong: max error {err:.3g} | | | | | |")
            continue
        t = {"tlc": [], "mm": [], "copy": []}
        for r in range(args.rounds):
            fns = [("tlc", lambda: kern(x, y)), ("mm", lambda: x @ h.T), ("copy", lambda: z.copy_(x))]
            for name, fn in fns if r % 2 == 0 else fns[::-1]:
                t[name].append(do_bench(fn, warmup=25, rep=100) * 1e3)
        us, mm, cp = median(t["tlc"]), median(t["mm"]), median(t["copy"])
        gbs = lambda u: 2 * x.numel() * 4 / (u * 1e-6) / 1e9  # noqa: E731
        print(f"| {rows} | {n} | {us:.1f} | {gbs(us):.0f} | {mm:.1f} | {cp:.1f} | {gbs(cp):.0f} | {us / cp:.2f} |")


if __name__ == "__main__":
    main()
