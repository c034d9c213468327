#!/usr/bin/env python3
"""What a page of MLA decode costs tlc's split kernel, three ways (H100; docs/benchmarks.md,
MLA decode, tenth session):

    python3 tools/bench/mla_profile.py parts    [--shapes ...]
    python3 tools/bench/mla_profile.py power    [--shapes ...]
    python3 tools/bench/mla_profile.py variants SRC [SRC ...] [--shapes ...]

parts: the same problem with the parts divided by 1, 2, 4 and 8 (fewer blocks, each walking more
pages). If a block's page time were fixed, time x blocks / (pages x head blocks) would stay level;
it is printed in ns per page and block.

power: SM clock and board power (nvidia-smi sampled every 100 ms) over 3 s of back-to-back calls,
with every SM busy and with an eighth of them, and FlashMLA's call beside (when
gpu-build/flashmla is there).

variants: the page time of other sources of mla_decode.tl at full occupancy, next to the shipped
one, in alternating order. Their results are not checked: a variant may leave a piece of the page
out to show what that piece costs.

Rows are bxtxh_qxs_q (default 64x4096x128x2,128x4096x128x1); bf16, every sequence of length t,
pages shuffled through the block table, as mla_bench.py makes them. Times are the middle of three
triton do_bench medians. The shipped kernel's output is checked against mla_bench.py's torch
reference before anything is timed.
"""
import argparse
import os
import subprocess
import sys
import time

import torch
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlc  # noqa: E402
import mla_bench as mb  # noqa: E402

KERNELS = ("mla_decode_schedule", "mla_decode_split", "mla_decode_combine")


def load(src):
    defs = {"dtype": "bfloat16", "causal": "False"}
    return {n: tlc.compile(src, kernel=n, defines=defs, arch="sm_90a", name="mla_decode.tl").load() for n in KERNELS}


def middle_us(fn):
    return sorted(do_bench(fn, warmup=10, rep=80, return_mode="median") for _ in range(3))[1] * 1e3


class Problem:
    """One row's tensors and its page count (pages x head blocks)."""

    def __init__(self, b, t, h, s):
        self.b, self.t, self.h, self.s = b, t, h, s
        torch.manual_seed(0)
        self.q, self.kc, self.bt, self.sl = mb.make_inputs(b, t, h, s, torch.bfloat16)
        self.hb = (s * h + 63) // 64
        self.pages = b * ((t + 63) // 64) * self.hb

    def launches(self, ks, sms):
        """run() for tlc's split and combine with sms // head blocks parts, and the blocks it runs."""
        sched, run, out, bufs = mb.tlc_launches(ks, self.q, self.kc, self.bt, self.sl, mb.D ** -0.5, sms)
        sched()
        run()
        torch.cuda.synchronize()
        self._keep = bufs
        return run, out, max(sms // self.hb, 1) * self.hb

    def label(self):
        return f"{self.b}x{self.t}x{self.h}x{self.s}"


def check(p, ks, sms):
    run, out, _ = p.launches(ks, sms)
    ref = mb.reference(p.q, p.kc, p.bt, p.sl, mb.D ** -0.5, False)
    err = mb.rel_err(out, ref)
    if not err < 1e-2:
        raise SystemExit(f"{p.label()}: tlc's output is wrong (error {err:.3g})")


def parts(problems, ks, sms):
    print("| b x t x h_q x s_q | blocks | us | ns per page and block |\n| --- | --- | --- | --- |")
    for p in problems:
        check(p, ks, sms)
        for f in (1, 2, 4, 8):
            run, _, blocks = p.launches(ks, sms // f)
            us = middle_us(run)
            print(f"| {p.label()} | {blocks} | {us:.1f} | {us * blocks / p.pages * 1e3:,.0f} |", flush=True)


def sample(fn, seconds=3.0):
    """Calls of fn in `seconds` of back-to-back runs, and the median SM clock (MHz, and the lowest)
    and board power (W) nvidia-smi saw meanwhile (the first half second left out)."""
    mon = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=subprocess.PIPE, text=True)
    t0, n = time.time(), 0
    while time.time() - t0 < seconds:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        n += 20
    mon.terminate()
    rows = [tuple(float(x) for x in ln.split(",")) for ln in mon.communicate()[0].splitlines() if "," in ln][5:]
    if not rows:
        return n, float("nan"), float("nan"), float("nan")
    clk, pw = sorted(r[0] for r in rows), sorted(r[1] for r in rows)
    return n, clk[len(clk) // 2], clk[0], pw[len(pw) // 2]


def power(problems, ks, sms):
    fm = None
    fm_dir = os.path.join(ROOT, "gpu-build/flashmla")
    if os.path.isdir(fm_dir):
        sys.path.insert(0, fm_dir)
        import flash_mla as fm
    print("| b x t x h_q x s_q | kernel | blocks | calls in 3 s | SM clock MHz (lowest) | power W |\n"
          "| --- | --- | --- | --- | --- | --- |")
    for p in problems:
        check(p, ks, sms)
        runs = []
        for f in (1, 8):
            run, _, blocks = p.launches(ks, sms // f)
            runs.append(("tlc", blocks, run))
        if fm:
            md, nsplits = fm.get_mla_metadata(p.sl, p.s * p.h, 1)

            def run_fm(p=p, md=md, nsplits=nsplits):
                fm.flash_mla_with_kvcache(p.q, p.kc, p.bt, p.sl, mb.DV, md, nsplits, softmax_scale=mb.D ** -0.5,
                                          causal=False)
            runs.append(("FlashMLA", "", run_fm))
        for name, blocks, fn in runs:
            fn()
            torch.cuda.synchronize()
            n, clk, low, pw = sample(fn)
            print(f"| {p.label()} | {name} | {blocks} | {n} | {clk:.0f} ({low:.0f}) | {pw:.0f} |", flush=True)


def variants(problems, ks, sms, paths):
    kss = {"shipped": ks}
    for path in paths:
        kss[os.path.basename(path)] = load(open(path).read())
    print("| b x t x h_q x s_q | source | us (first / second round) | ns per page and block |\n"
          "| --- | --- | --- | --- |")
    for p in problems:
        check(p, ks, sms)
        us = {n: [] for n in kss}
        for rnd in range(2):
            for n in (list(kss) if rnd == 0 else list(kss)[::-1]):
                run, _, blocks = p.launches(kss[n], sms)
                us[n].append((middle_us(run), blocks))
        for n, v in us.items():
            mean = sum(u for u, _ in v) / len(v)
            print(f"| {p.label()} | {n} | {v[0][0]:.1f} / {v[1][0]:.1f} | {mean * v[0][1] / p.pages * 1e3:,.0f} |",
                  flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["parts", "power", "variants"])
    ap.add_argument("sources", nargs="*", help="variants: other sources of mla_decode.tl")
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    ap.add_argument("--shapes", default="64x4096x128x2,128x4096x128x1")
    a = ap.parse_args()
    if a.mode == "variants" and not a.sources:
        ap.error("variants: name at least one source")
    tlc.load_library(a.lib)
    ks = load(open(os.path.join(ROOT, "dsl-examples/mla_decode.tl")).read())
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"# mla_profile {a.mode}: {torch.cuda.get_device_name(0)} ({sms} SMs), bf16\n")
    problems = [Problem(*(int(x) for x in s.split("x"))) for s in a.shapes.split(",")]
    if a.mode == "parts":
        parts(problems, ks, sms)
    elif a.mode == "power":
        power(problems, ks, sms)
    else:
        variants(problems, ks, sms, a.sources)
    return 0


if __name__ == "__main__":
    sys.exit(main())
