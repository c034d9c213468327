#!/usr/bin/env python3
"""DeepSeek V3.2's sparse MLA forward (TileLang's kernel, tests/ports/sparse_mla_fwd.py) as tlc
compiles it, at the model's shape (128 heads, 512 + 64 dims, 2,048 keys a query picked by an index
tensor), in one process on one GPU:

    python3 tools/bench/sparse_mla_bench.py [--lib gpu-build/carry/libtlc.so] [--seq 4096] [--seq-kv 8192]

There is no other implementation of this kernel on the GPU machine (FlashMLA's build there is the
dense decode), so the reference beside it is the same kernel at num_stages=1: the gathered KV rows
loaded in the iteration that uses them, as before the Pipelined loop staged gathers. Each output is
checked against a float64 torch reference on the first 64 queries before it is timed. TFLOP/s count
2 * S * H * topk * (576 + 512), as TileLang's example does."""
import argparse
import os
import sys

import torch
from triton.testing import do_bench

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
import tlc  # noqa: E402
from kernels import sparse_mla_reference  # noqa: E402

PORT = os.path.join(ROOT, "tests", "ports", "sparse_mla_fwd.py")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--seq-kv", type=int, default=8192)
    ap.add_argument("--heads", type=int, default=128)
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.lib:
        os.environ["TLC_LIBRARY"] = args.lib
    s, skv, h, topk = args.seq, args.seq_kv, args.heads, args.topk
    torch.manual_seed(0)
    q = torch.randn(1, s, h, 576, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(1, skv, 1, 576, device="cuda", dtype=torch.bfloat16)
    # TileLang's test: query t picks up to topk of the keys before it, the rest padded past the end
    idx = torch.full((1, s, 1, topk), skv, device="cuda", dtype=torch.int32)
    for t in range(s):
        pick = torch.randperm(max(1, t))[:topk]
        idx[0, t, 0, :len(pick)] = pick
    out = torch.empty(1, s, h, 512, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(1, s, h, device="cuda", dtype=torch.float32)
    want, want_lse = (x[0] for x in sparse_mla_reference(q[:, :64], kv, idx[:, :64]))
    flops = 2.0 * s * h * topk * (576 + 512)
    print(f"# {torch.cuda.get_device_name(0)}, bfloat16, S {s}, S_kv {skv}, heads {h}, topk {topk}, 256 threads")
    print("| num_stages | us | TFLOP/s |")
    print("| --- | --- | --- |")
    kernels = {st: tlc.compile(PORT, defines={"heads": h, "dim": 512, "tail_dim": 64, "topk": topk,
                                              "num_stages": st}) for st in (2, 1)}
    times = {st: [] for st in kernels}
    for st, k in kernels.items():
        out.fill_(float("nan"))
        k(q, kv, idx, out, lse)
        torch.testing.assert_close(out[0, :64].double(), want, rtol=2e-2, atol=2e-2)
        torch.testing.assert_close(lse[0, :64].double(), want_lse, rtol=1e-3, atol=1e-3)
    for r in range(args.rounds):
        for st in (sorted(kernels) if r % 2 else sorted(kernels, reverse=True)):
            times[st].append(do_bench(lambda: kernels[st](q, kv, idx, out, lse), warmup=20, rep=200) * 1e3)
    for st in sorted(kernels, reverse=True):
        t = sorted(times[st])[len(times[st]) // 2]
        print(f"| {st} | {t:.1f} | {flops / t / 1e6:.1f} |")


if __name__ == "__main__":
    main()
