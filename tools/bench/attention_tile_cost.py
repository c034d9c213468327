#!/usr/bin/env python3
"""Attention's cost per tile and per key block, tlc against cuDNN, in one
process: a kernel's time at a fixed number of tiles and a growing number of
keys is a line, T = A + S * seq_kv; A over the tiles each SM takes is the
fixed cost of a tile (its first score gemm and softmax, its last output
gemm, its epilogue, what waits between tiles), S * 128 over the same the
time of one 128-key iteration.

    python3 tools/bench/attention_tile_cost.py [SRC.tl] [--dim 128] [--rounds 3]
        [--seq-q 4096,16384] [--seq-kv 1024,2048,4096,8192,16384] [--block-m 128]

SRC defaults to dsl-examples/flash_attention.tl (non-causal, bfloat16, its
defaults but block_M, which this script sets: 128 unless --block-m says
otherwise, 0 for the kernel's own choice, which is then read from its
launch metadata). Heads: 2048 / dim; batch: 16384 / seq_q tokens, so every
seq_q has the same number of rows. Each point is checked against cuDNN
first (max |out - ref| / max |ref| below 1e-2), then timed with
triton.testing.do_bench (median of each round, the middle round kept).
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tlc  # noqa: E402


def fit(xs, ys):
    """Least-squares line through (xs, ys): (intercept, slope)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def tile_rows(kern):
    """Query rows per tile of the compiled kernel, from its launch metadata:
    64 rows per consumer warpgroup, and a producer warpgroup beside them
    (the warp-specialized form, sm_90a)."""
    t = kern.metadata["threads"]
    threads = t[0] if isinstance(t, (list, tuple)) else int(t)
    return (threads - 128) // 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", nargs="?", default=os.path.join(ROOT, "dsl-examples/flash_attention.tl"))
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seq-q", default="4096,16384")
    ap.add_argument("--seq-kv", default="1024,2048,4096,8192,16384")
    ap.add_argument("--block-m", type=int, default=128, help="query rows per tile (0: the kernel's choice)")
    a = ap.parse_args()
    d, h = a.dim, 2048 // a.dim
    defines = {"dim": d, "causal": False, "dtype": "bfloat16"}
    if a.block_m:
        defines["block_M"] = a.block_m
    kern = tlc.compile(open(a.src).read(), kernel="flash_attention", name=os.path.basename(a.src),
                       defines=defines).load()
    bm = a.block_m or tile_rows(kern)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"# {torch.cuda.get_device_name()}, bfloat16, head_dim {d}, {h} heads, non-causal; us")
    print("| seq_q x batch | seq_kv | tlc us | cuDNN us | tlc TFLOP/s | cuDNN TFLOP/s | err |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    fits = []
    for sq in (int(v) for v in a.seq_q.split(",")):
        b = 16384 // sq
        rows = []
        for skv in (int(v) for v in a.seq_kv.split(",")):
            torch.manual_seed(0)
            q = torch.randn(b, sq, h, d, device="cuda", dtype=torch.bfloat16)
            k, v = (torch.randn(b, skv, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
            out = torch.empty_like(q)
            lse = torch.empty(b, h, sq, device="cuda", dtype=torch.float32)
            run = kern.bind(q, k, v, out, lse, d ** -0.5)
            qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))

            def cudnn():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return F.scaled_dot_product_attention(qt, kt, vt)

            ref = cudnn().transpose(1, 2).float()
            run()
            torch.cuda.synchronize()
            err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
            if not err < 1e-2:
                raise SystemExit(f"seq_q {sq} seq_kv {skv}: tlc's output is wrong (error {err:.2e})")
            t = sorted(do_bench(run, warmup=10, rep=60, return_mode="median") * 1e3 for _ in range(a.rounds))
            c = sorted(do_bench(cudnn, warmup=10, rep=60, return_mode="median") * 1e3 for _ in range(a.rounds))
            t, c = t[len(t) // 2], c[len(c) // 2]
            flops = 4 * b * h * sq * skv * d
            rows.append((skv, t, c))
            print(f"| {sq} x {b} | {skv} | {t:.1f} | {c:.1f} | {flops / t / 1e6:.0f} | {flops / c / 1e6:.0f} | {err:.1e} |")
        per_sm = b * h * -(-sq // bm) / sms
        for name, i in (("tlc", 1), ("cuDNN", 2)):
            icpt, slope = fit([r[0] for r in rows], [r[i] for r in rows])
            fits.append(f"| {sq} x {b} | {name} | {icpt / per_sm:.2f} | {slope * 128 / per_sm:.3f} |")
    print(f"\nper tile and per 128-key iteration ({sms} SMs), us:\n")
    print("| seq_q x batch | kernel | a tile's fixed cost | an iteration |")
    print("| --- | --- | --- | --- |")
    print("\n".join(fits))


if __name__ == "__main__":
    main()
