#!/usr/bin/env python3
"""2-d convolution: TileLang's implicit-GEMM example as tlc compiles it
(tests/ports/example_convolution.py: T.im2col tiles, the filters viewed as a
matrix) against torch.conv2d (cuDNN) on channels-last tensors, in one process
on one GPU.

    python3 tools/bench/conv_bench.py [--lib gpu-build/carry/libtlc.so] [--rounds 5] [--tiles k=v,...] [--tuned]

Each row's output is checked against torch's (float64) before it is timed;
times are triton's do_bench medians over rounds that alternate the order of
the two. TFLOP/s count 2 * N * OH * OW * F * K * K * C. With --tuned, tlc's
kernel is tlc.autotune over TUNE_TILES (the fastest on each row's tensors,
named in the last column) instead of one set of tiles."""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tlc  # noqa: E402

PORT = os.path.join(ROOT, "tests", "ports", "example_convolution.py")
# N, C, H, W, F, K, S, D, P: the example's own default first, then ResNet-like layers
SHAPES = ((128, 128, 64, 64, 128, 3, 1, 1, 1), (64, 64, 56, 56, 64, 3, 1, 1, 1), (64, 256, 28, 28, 256, 3, 1, 1, 1),
          (64, 512, 14, 14, 512, 3, 1, 1, 1), (64, 128, 56, 56, 128, 3, 2, 1, 1))
TILES = {"block_M": 64, "block_N": 128, "block_K": 32, "num_stages": 3, "threads": 256}
# --tuned: block_M x block_N x block_K, stages, threads
TUNE_TILES = [dict(zip(("block_M", "block_N", "block_K", "num_stages", "threads"), t)) for t in (
    (64, 128, 32, 3, 256), (128, 128, 64, 4, 128), (128, 128, 64, 5, 256), (128, 64, 64, 4, 128),
    (64, 128, 64, 4, 128), (128, 256, 64, 3, 256), (256, 128, 64, 3, 256))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tiles", help="the port's -D tile values, e.g. block_M=128,block_N=128,block_K=64,"
                    "num_stages=3,threads=256 (default: %s)" % ",".join(f"{k}={v}" for k, v in TILES.items()))
    ap.add_argument("--tuned", action="store_true", help="tlc.autotune over TUNE_TILES on each row")
    args = ap.parse_args()
    tiles = dict(TILES)
    if args.tiles:
        tiles.update({k: int(v) for k, v in (kv.split("=") for kv in args.tiles.split(","))})
    if args.lib:
        os.environ["TLC_LIBRARY"] = args.lib
    torch.manual_seed(0)
    print(f"# {torch.cuda.get_device_name(0)}, float16, " + ("tuned" if args.tuned else f"tiles {tiles}"))
    print("| N | C | H x W | F | K | S | tlc us | cuDNN us | tlc TFLOP/s | cuDNN TFLOP/s | tlc / cuDNN |" +
          (" tiles |" if args.tuned else ""))
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if args.tuned else ""))
    for (n, c, h, w, f, k, s, d, p) in SHAPES:
        if not args.tuned:
            kern = tlc.compile(PORT, defines={"S": s, "D": d, "P": p, **tiles})
        image = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
        filters = torch.randn(k, k, c, f, device="cuda", dtype=torch.float16)
        oh, ow = (h + 2 * p - d * (k - 1) - 1) // s + 1, (w + 2 * p - d * (k - 1) - 1) // s + 1
        out = torch.empty(n, oh, ow, f, device="cuda", dtype=torch.float16)
        # torch's operands in its own layout, channels-last in memory (cuDNN's NHWC kernels)
        x = image.permute(0, 3, 1, 2)
        wt = filters.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
        chosen = ""
        if args.tuned:  # tuned on these tensors, then the chosen tiles timed as with --tiles
            tuned = tlc.autotune(PORT, TUNE_TILES, defines={"S": s, "D": d, "P": p})
            cfg = tuned.config_for(image, filters, out)
            kern = tlc.compile(PORT, defines={"S": s, "D": d, "P": p, **cfg})
            chosen = " {block_M} x {block_N} x {block_K}, {num_stages} stages, {threads} threads |".format(**cfg)
        kern(image, filters, out)
        ref = F.conv2d(x.double(), wt.double(), stride=s, padding=p, dilation=d).permute(0, 2, 3, 1)
        torch.testing.assert_close(out.double(), ref, rtol=1e-2, atol=0.25)
        runs = {"tlc": [], "torch": []}
        fns = (("tlc", lambda: kern(image, filters, out)),
               ("torch", lambda: F.conv2d(x, wt, stride=s, padding=p, dilation=d)))
        for i in range(args.rounds):
            for name, fn in (fns if i % 2 == 0 else fns[::-1]):
                runs[name].append(do_bench(fn, warmup=20, rep=100) * 1e3)
        t, r = (sorted(runs[x])[len(runs[x]) // 2] for x in ("tlc", "torch"))
        flops = 2.0 * n * oh * ow * f * k * k * c
        print(f"| {n} | {c} | {h} x {w} | {f} | {k} | {s} | {t:.1f} | {r:.1f} | {flops / t / 1e6:.1f} | "
              f"{flops / r / 1e6:.1f} | {r / t:.2f} |" + chosen)


if __name__ == "__main__":
    main()
