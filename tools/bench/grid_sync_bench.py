#!/usr/bin/env python3
"""What a grid barrier costs: tlc's T.sync_grid() (a cooperative launch, one
block per SM) against the other way to make every block wait for all the
others, a kernel boundary, in one process on one GPU.

    python3 tools/bench/grid_sync_bench.py [--lib gpu-build/carry/libtlc.so] [--rounds 5]

A kernel of one block per SM (128 threads) where thread 0 of each block adds
1 to its own counter, R + 1 times, with a sync_grid() between the adds (R
barriers), is timed for R in ROUNDS; beside it R + 1 launches of the same
kernel without barriers, back to back on one stream. Each kernel's counters
are checked first (every block's count is R + 1). The per-barrier cost is
the slope over R (least squares) of each; times are triton's do_bench
medians, alternating the two forms each round, and again inside a CUDA
graph (do_bench_cudagraph), where the launches' host cost is gone and what
is left of a kernel boundary is the GPU's."""
import argparse
import os
import sys

import torch
from triton.testing import do_bench, do_bench_cudagraph

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tlc  # noqa: E402

ROUNDS = (0, 1, 4, 16, 32)


def source(barriers):
    step = "        if tx == 0:\n            X[bx] = X[bx] + 1\n"
    body = step + ("        T.sync_grid()\n" + step) * barriers
    return ("import tilelang.language as T\n\n\n@T.prim_func\ndef count(X: T.Tensor((B,), T.int32)):\n"
            "    with T.Kernel(B, threads=128) as bx:\n        tx = T.get_thread_binding()\n" + body)


def slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    if args.lib:
        os.environ["TLC_LIBRARY"] = args.lib
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"# {torch.cuda.get_device_name(0)}, {sms} SMs, one block of 128 threads per SM")
    plain = tlc.compile(source(0), defines={"B": sms}, name="grid_sync_bench.py")
    x = torch.zeros(sms, device="cuda", dtype=torch.int32)
    synced = []
    for r in ROUNDS:
        k = tlc.compile(source(r), defines={"B": sms}, name="grid_sync_bench.py")
        x.zero_()
        k(x)
        torch.cuda.synchronize()
        assert x.tolist() == [r + 1] * sms, (r, x.tolist()[:8])

        def launches(n=r + 1):
            for _ in range(n):
                plain(x)
        row = []
        for bench in (do_bench, do_bench_cudagraph):
            times = {"sync": [], "launch": []}
            for i in range(args.rounds):
                order = (("sync", lambda: k(x)), ("launch", launches))
                for name, fn in (order if i % 2 == 0 else order[::-1]):
                    kw = dict(warmup=20, rep=100) if bench is do_bench else dict(rep=100)
                    times[name].append(bench(fn, **kw) * 1e3)
            row += [sorted(times[n])[len(times[n]) // 2] for n in ("sync", "launch")]
        synced.append(row)
        print(f"| {r:3d} barriers | sync_grid {row[0]:8.2f} us, graph {row[2]:8.2f} us | {r + 1:3d} launches "
              f"{row[1]:8.2f} us, graph {row[3]:8.2f} us |")
    for c, what in ((0, "sync_grid"), (1, "kernel boundary (launched)"), (2, "sync_grid in a graph"),
                    (3, "kernel boundary in a graph")):
        print(f"per barrier, {what}: {slope(ROUNDS, [row[c] for row in synced]):.2f} us")


if __name__ == "__main__":
    main()
