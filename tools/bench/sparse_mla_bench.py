#!/usr/bin/env python3
"""DeepSeek V3.2's sparse MLA forward (TileLang's kernel, tests/ports/sparse_mla_fwd.py) as tlc
compiles it, at the model's shape (128 heads, 512 + 64 dims, 2,048 keys a query picked by an index
tensor), in one process on one GPU, beside TileLang's hand-pipelined form of the same kernel
(tests/ports/sparse_mla_fwd_pipelined.py: 384 threads, a cp.async producer warpgroup and two
consumers on mbarriers, compiled by tlc with its branches run as written) and its seesaw schedule
(tests/ports/sparse_mla_fwd_seesaw.py: pages in pairs, one each consumer):

    python3 tools/bench/sparse_mla_bench.py [--lib gpu-build/carry/libtlc.so] [--seq 4096] [--seq-kv 8192]

There is no other implementation of this kernel on the GPU machine (FlashMLA's build there is the
dense decode), so the reference beside it is the same kernel at num_stages=1: the gathered KV rows
loaded in the iteration that uses them, as before the Pipelined loop staged gathers. Each output is
checked against a float64 torch reference on 64 queries whose picks are all visible before it is
timed (the hand-pipelined kernel writes no log-sum-exp: its output alone). TFLOP/s count
2 * S * H * topk * (576 + 512), as TileLang's example does."""
import argparse
import math
import os
import sys

import torch
from triton.testing import do_bench

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tlc  # noqa: E402

PORT = os.path.join(ROOT, "tests", "ports", "sparse_mla_fwd.py")
HAND = os.path.join(ROOT, "tests", "ports", "sparse_mla_fwd_pipelined.py")
SEESAW = os.path.join(ROOT, "tests", "ports", "sparse_mla_fwd_seesaw.py")


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
    # checked on 64 queries past the first topk, whose picks are all visible rows (no padding: the
    # hand-pipelined kernel does not load a masked row, so its stage holds whatever it held before)
    q0 = max(0, min(topk, s - 64))
    rows = kv[0, :, 0].double()[idx[0, q0:q0 + 64, 0].long()]
    scores = torch.einsum("shd,skd->shk", q[0, q0:q0 + 64].double(), rows) * 576 ** -0.5
    want = torch.einsum("shk,skd->shd", scores.softmax(-1), rows[..., :512])
    want_lse = torch.logsumexp(scores, -1) / math.log(2)
    del rows, scores
    flops = 2.0 * s * h * topk * (576 + 512)
    print(f"# {torch.cuda.get_device_name(0)}, bfloat16, S {s}, S_kv {skv}, heads {h}, topk {topk}")
    print("| kernel | us | TFLOP/s |")
    print("| --- | --- | --- |")
    defs = {"heads": h, "dim": 512, "tail_dim": 64, "topk": topk}
    start = torch.zeros(1, device="cuda", dtype=torch.int32)
    hand = tlc.compile(HAND, defines={**defs, "kv_stride": 1})
    seesaw = tlc.compile(SEESAW, defines={**defs, "kv_stride": 1})
    kernels = {"Pipelined, num_stages=2, 256 threads": (tlc.compile(PORT, defines={**defs, "num_stages": 2}), (q, kv, idx, out, lse)),
               "num_stages=1 (unstaged), 256 threads": (tlc.compile(PORT, defines={**defs, "num_stages": 1}), (q, kv, idx, out, lse)),
               "TileLang's hand-pipelined, 384 threads": (hand, (q, kv, idx, start, out, lse)),
               "TileLang's seesaw, 384 threads": (seesaw, (q, kv, idx, start, out, lse))}
    for name, (k, a) in kernels.items():
        out.fill_(float("nan"))
        k(*a)
        torch.testing.assert_close(out[0, q0:q0 + 64].double(), want, rtol=2e-2, atol=2e-2)
        if k is not hand and k is not seesaw:
            torch.testing.assert_close(lse[0, q0:q0 + 64].double(), want_lse, rtol=1e-3, atol=1e-3)
    times = {name: [] for name in kernels}
    for r in range(args.rounds):
        for name in (list(kernels) if r % 2 else list(kernels)[::-1]):
            k, a = kernels[name]
            times[name].append(do_bench(lambda: k(*a), warmup=20, rep=200) * 1e3)
    for name in kernels:
        t = sorted(times[name])[len(times[name]) // 2]
        print(f"| {name} | {t:.1f} | {flops / t / 1e6:.1f} |")


if __name__ == "__main__":
    main()
