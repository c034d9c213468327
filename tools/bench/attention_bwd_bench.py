#!/usr/bin/env python3
"""TileLang's FlashAttention backward (tests/ports/example_mha_bwd_bshd.py) compiled by tlc, against
torch's scaled_dot_product_attention backward with the FlashAttention-2 and cuDNN backends, in one
process on the same float16 tensors.

    python3 tools/bench/attention_bwd_bench.py [--shapes BxSxHxD,...] [--rounds N]
        [--variant NAME=SPEC ...]

tlc's time is the whole backward as the port runs it: Delta (flashattn_bwd_preprocess), dQ zeroed,
the backward kernel (flashattn_bwd) and dQ's conversion (flashattn_bwd_postprocess). The gradients
are checked against cuDNN's before anything is timed (error relative to the largest gradient).

Each --variant compiles the backward kernel another way (the other three kernels stay as by
default) and times it beside the default: SPEC `arch:sm_90` (or any arch) compiles it for that
target, `ptx:DIR` reads DIR/flashattn_bwd_BxSxHxD_CAUSAL.ptx (written by another tlc build with
`--kernel=flashattn_bwd --emit=ptx` and the row's -D values: batch, seq_len, heads, dim,
is_causal, block_M 64, block_N 64 at head_dim 64 and 32 above, as the original takes them).
The backward kernel alone is timed for every variant too (column `bwd ms`).
Timing: triton's do_bench medians, --rounds rounds alternating the order, median per column."""
import argparse
import os
import sys
from statistics import median

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tlc  # noqa: E402

PORT = os.path.join(ROOT, "tests", "ports", "example_mha_bwd_bshd.py")


def tiles(b, s, h, d, causal):
    return {"batch": b, "seq_len": s, "heads": h, "dim": d, "is_causal": causal, "block_M": 64,
            "block_N": 64 if d <= 64 else 32}


def backward_kernel(spec, b, s, h, d, causal):
    """The variant's flashattn_bwd for the row."""
    if spec is None or spec.startswith("arch:"):
        arch = spec[5:] if spec else None
        return tlc.compile(PORT, kernel="flashattn_bwd", defines=tiles(b, s, h, d, causal), arch=arch).load()
    path = os.path.join(spec[4:], f"flashattn_bwd_{b}x{s}x{h}x{d}_{causal}.ptx")
    with open(path) as f:
        return tlc.from_ptx(f.read(), "flashattn_bwd", None, path).load()


def sdpa_backward(backend, q, k, v, do, causal):
    """A closure running the backend's backward (its forward run once here) and the gradients."""
    qt, kt, vt = (x.detach().transpose(1, 2).contiguous().requires_grad_() for x in (q, k, v))
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
    dot = do.transpose(1, 2).contiguous()

    def run():
        with sdpa_kernel(backend):
            return torch.autograd.grad(out, (qt, kt, vt), dot, retain_graph=True)
    grads = [g.transpose(1, 2) for g in run()]
    return run, grads


def rel_err(x, ref):
    return ((x.float() - ref.float()).abs().max() / ref.float().abs().max()).item()


def bench_row(b, s, h, d, causal, variants, rounds):
    defs = tiles(b, s, h, d, causal)
    sizes = {"batch": b, "heads": h, "seq_len": s, "dim": d}
    fwd = tlc.compile(PORT, kernel="flashattn_fwd", defines={**defs, "block_N": 64}).load()
    prep = tlc.compile(PORT, kernel="flashattn_bwd_preprocess", defines=sizes).load()
    post = tlc.compile(PORT, kernel="flashattn_bwd_postprocess", defines=sizes).load()
    q, k, v, do = (torch.randn(b, s, h, d, device="cuda", dtype=torch.float16) for _ in range(4))
    o = torch.empty_like(q)
    lse = torch.empty(b, h, s, device="cuda")
    fwd(q, k, v, o, lse)
    delta = torch.empty(b, h, s, device="cuda")
    dq = torch.zeros(b, s, h, d, device="cuda")
    dk, dv, dq_out = torch.empty_like(q), torch.empty_like(q), torch.empty_like(q)

    cudnn, ref = sdpa_backward(SDPBackend.CUDNN_ATTENTION, q, k, v, do, causal)
    fa2, _ = sdpa_backward(SDPBackend.FLASH_ATTENTION, q, k, v, do, causal)
    cols = {}
    for name, spec in variants:
        bwd = backward_kernel(spec, b, s, h, d, causal)

        def whole(bwd=bwd):
            prep(o, do, delta)
            dq.zero_()
            bwd(q, k, v, do, lse, delta, dq, dk, dv)
            post(dq, dq_out)
        whole()
        torch.cuda.synchronize()
        errs = [rel_err(x, r) for x, r in zip((dq_out, dk, dv), ref)]
        if max(errs) > 2e-2:
            raise SystemExit(f"{name} {b}x{s}x{h}x{d} causal={causal}: gradients wrong (dQ, dK, dV errors {errs})")
        cols[name] = (whole, lambda bwd=bwd: bwd(q, k, v, do, lse, delta, dq, dk, dv), errs)
    times = {("FA2", None): [], ("cuDNN", None): []}
    for name in cols:
        times[(name, "all")], times[(name, "bwd")] = [], []
    for r in range(rounds):
        order = list(cols) if r % 2 == 0 else list(reversed(cols))
        times[("cuDNN", None)].append(do_bench(cudnn))
        times[("FA2", None)].append(do_bench(fa2))
        for name in order:
            times[(name, "all")].append(do_bench(cols[name][0]))
            times[(name, "bwd")].append(do_bench(cols[name][1]))
    med = {key: median(t) for key, t in times.items()}
    flops = 2.5 * 4 * b * h * s * s * d * (0.5 if causal else 1.0)  # five gemms; half of them with the mask
    for name in cols:
        t = med[(name, "all")]
        e = cols[name][2]
        print(f"| {b}x{s}x{h}x{d} | {causal} | {name} | {t:.3f} | {med[(name, 'bwd')]:.3f} | {flops / t * 1e-9:.0f} | "
              f"{med[('FA2', None)]:.3f} | {med[('cuDNN', None)]:.3f} | {med[('FA2', None)] / t:.2f} | "
              f"{med[('cuDNN', None)] / t:.2f} | {e[0]:.1e} | {e[1]:.1e} | {e[2]:.1e} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="8x1024x32x64,8x4096x32x64,8x1024x16x128,4x4096x16x128")
    ap.add_argument("--causal", default="False,True")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--variant", action="append", default=[], help="NAME=arch:ARCH or NAME=ptx:DIR")
    args = ap.parse_args()
    variants = [("tlc", None)]
    for text in args.variant:
        name, _, spec = text.partition("=")
        if not name or not (spec.startswith("arch:") or spec.startswith("ptx:")):
            raise SystemExit(f"--variant {text}: write NAME=arch:ARCH or NAME=ptx:DIR")
        variants.append((name, spec))
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, libtlc {tlc.version()}")
    print("| b x s x h x d | causal | variant | tlc ms | bwd ms | tlc TFLOP/s | FA2 ms | cuDNN ms | tlc / FA2 | "
          "tlc / cuDNN | dQ err | dK err | dV err |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in args.shapes.split(","):
        b, s, h, d = (int(x) for x in shape.split("x"))
        for c in args.causal.split(","):
            bench_row(b, s, h, d, c == "True", variants, args.rounds)


if __name__ == "__main__":
    main()
