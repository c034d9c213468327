#!/usr/bin/env python3
"""MLA decode: tlc's dsl-examples/mla_decode.tl (through the JIT in
libtlc.so, launched with libtlrt on torch's tensors) against FlashMLA
(DeepSeek's CUTLASS kernel, ../shared/anchors/flashmla) and a torch
reference, in one process, on the same tensors, on the same GPU.

    python3 tools/bench/mla_bench.py [--lib gpu-build/carry/libtlc.so]
        [--flashmla DIR] [--quick] [--out DIR]

The 24 rows of ../shared/anchors/h100.md: bf16, 64-token pages, h_kv = 1,
d = 576 (512 latent + 64 rope), dv = 512, non-causal, every sequence of
length t. Both kernels read the same tensors in FlashMLA's layout: q
[b, s_q, h_q, 576] and the cache [pages, 64, 1, 576], pages shuffled
through block_table.

q and the output are passed to tlc as [b, s_q * h_q, ...] views (the same
memory). tlc runs three kernels: mla_decode_schedule (from cache_seqlens, on the
GPU), mla_decode_split (one block per SM: num_parts = SMs / head blocks)
and mla_decode_combine. FlashMLA's get_mla_metadata and tlc's schedule both
run once per decode step for all layers, so neither is in the kernel time;
the schedule's own time is reported beside it, and get_mla_metadata's beside
that. Nobody picks num_split.

Every row is checked first: tlc's and FlashMLA's outputs against the
torch reference (float32 math on the same bf16 inputs): max |out - ref| /
max |ref|, which must stay below 1e-2 for tlc (bf16 rounding of P and of
the output give ~2e-3). Times are triton.testing.do_bench medians (L2
cleared before each call), --rounds rounds in alternating order, median
per kernel. TFLOP/s counts 2 * b * s_q * t * h_q * (576 + 512); GB/s counts
(b*t*576 + b*s_q*h_q*576 + b*s_q*h_q*512) * 2 bytes, as h100.md does.
"""
import argparse
import math
import os
import sys

import torch
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))  # the tlc package (python/), used in place
import tlc  # noqa: E402
D, DV, PAGE = 576, 512, 64
ROWS = [(b, t, h, s) for b in (64, 128) for t in (1024, 4096, 8192) for h in (16, 128) for s in (1, 2)]


def reference(q, kcache, block_table, seqlens, sm_scale, causal):
    """float32 attention per sequence (all rows of a sequence at once)."""
    b, s_q, h_q, _ = q.shape
    out = torch.empty(b, s_q, h_q, DV, dtype=torch.float32, device=q.device)
    for i in range(b):
        n = int(seqlens[i])
        pages = block_table[i, :(n + PAGE - 1) // PAGE]
        k = kcache[pages].reshape(-1, D)[:n].float()                   # [n, 576]
        qi = q[i].float().reshape(s_q * h_q, D)
        s = (qi @ k.t()) * sm_scale                                    # [s_q * h_q, n]
        if causal:
            pos = torch.arange(n, device=q.device)
            tok = torch.arange(s_q, device=q.device).repeat_interleave(h_q)
            s = s.masked_fill(pos[None, :] > (n - s_q + tok)[:, None], float("-inf"))
        p = torch.softmax(s, dim=-1).nan_to_num(0.0)
        out[i] = (p @ k[:, :DV]).reshape(s_q, h_q, DV)
    return out


def rel_err(x, ref):
    return ((x.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()


def make_inputs(b, t, h_q, s_q, dtype):
    """q [b, s_q, h_q, 576], the cache [pages, 64, 1, 576] (pages shuffled through the block
    table) and every sequence's length t, from torch's current random state."""
    pages = (t + PAGE - 1) // PAGE
    q = torch.randn(b, s_q, h_q, D, device="cuda").to(dtype)
    kcache = torch.randn(b * pages, PAGE, 1, D, device="cuda").to(dtype)
    block_table = torch.randperm(b * pages, device="cuda", dtype=torch.int32).view(b, pages)
    seqlens = torch.full((b,), t, device="cuda", dtype=torch.int32)
    return q, kcache, block_table, seqlens


def tlc_launches(ks, q, kcache, block_table, seqlens, sm_scale, sms):
    """tlc's three kernels (ks: name -> loaded kernel) bound to these tensors: (schedule, run, out,
    buffers), where run() launches the split and the combine, out is the output (NaN until run) and
    buffers are the scratch tensors to keep alive while the launches are."""
    b, s_q, h_q, _ = q.shape
    parts = max(sms // ((s_q * h_q + 63) // 64), 1)  # the split's blocks per head block
    sched = torch.empty(parts, 4, device="cuda", dtype=torch.int32)
    splits = torch.empty(b, 2, device="cuda", dtype=torch.int32)
    glse = torch.empty(b + parts, s_q * h_q, device="cuda", dtype=torch.float32)
    part = torch.empty(b + parts, s_q * h_q, DV, device="cuda", dtype=torch.float32)
    out = torch.full((b, s_q, h_q, DV), float("nan"), device="cuda", dtype=q.dtype)
    q_rows, out_rows = q.view(b, s_q * h_q, D), out.view(b, s_q * h_q, DV)  # the same memory
    schedule = ks["mla_decode_schedule"].bind(seqlens, sched, splits)
    split = ks["mla_decode_split"].bind(q_rows, kcache, block_table, seqlens, sched, splits, glse,
                                        part, out_rows, sm_scale, h_q)
    combine = ks["mla_decode_combine"].bind(splits, glse, part, out_rows)

    def run():
        split()
        combine()
    return schedule, run, out, (sched, splits, glse, part)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    ap.add_argument("--src", default=os.path.join(ROOT, "dsl-examples/mla_decode.tl"))
    ap.add_argument("--flashmla", default=os.path.join(ROOT, "gpu-build/flashmla"),
                    help="folder holding flash_mla/ and its built extension (none: tlc and torch only)")
    ap.add_argument("--quick", action="store_true", help="6 rows instead of 24")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    ap.add_argument("--out", default=None, help="folder for mla_bench.md")
    ap.add_argument("--defines", default="", help="extra -D for the split kernel, NAME=VALUE,...")
    a = ap.parse_args()
    dtype = getattr(torch, a.dtype)
    fm = None
    if a.flashmla and os.path.isdir(a.flashmla):
        sys.path.insert(0, a.flashmla)
        import flash_mla as fm
    tlc.load_library(a.lib)
    src = open(a.src).read()
    extra = dict(kv.split("=", 1) for kv in a.defines.split(",") if kv)
    defs = {"dtype": tlc.dtype_name(dtype), "causal": "False"}
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    t0.record()
    ks = {n: tlc.compile(src, kernel=n, defines={**defs, **(extra if n == "mla_decode_split" else {})},
                         arch="sm_90a", name="mla_decode.tl").load()
          for n in ("mla_decode_schedule", "mla_decode_split", "mla_decode_combine")}
    t1.record()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    gpu = torch.cuda.get_device_name(0)
    lines = [f"# MLA decode, {a.dtype}, {gpu} ({sms} SMs), tlc (PTX: {tlc.ptx_generator()}) vs FlashMLA"
             f"{'' if fm else ' (FlashMLA not found)'}", "",
             "| b | t | h_q | s_q | FlashMLA us | tlc us | tlc / FlashMLA speed | tlc TFLOP/s | tlc GB/s "
             "| schedule us | FlashMLA metadata us | tlc err | FlashMLA err |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for ln in lines:
        print(ln, flush=True)
    rows = ROWS if not a.quick else [r for r in ROWS if r[0] == 128 and r[1] in (1024, 4096)
                                     and (r[2], r[3]) != (16, 2)]
    ratios, bad = [], 0
    torch.manual_seed(0)
    for (b, t, h_q, s_q) in rows:
        q, kcache, block_table, seqlens = make_inputs(b, t, h_q, s_q, dtype)
        sm_scale = D ** -0.5
        ref = reference(q, kcache, block_table, seqlens, sm_scale, False)
        schedule, run_tlc, out, _bufs = tlc_launches(ks, q, kcache, block_table, seqlens, sm_scale, sms)
        schedule()
        run_tlc()
        torch.cuda.synchronize()
        e_tlc = rel_err(out, ref)
        fns = {"tlc": run_tlc, "schedule": schedule}
        e_fm = float("nan")
        if fm:
            md, nsplits = fm.get_mla_metadata(seqlens, s_q * h_q, 1)

            def run_fm():
                return fm.flash_mla_with_kvcache(q, kcache, block_table, seqlens, DV, md, nsplits,
                                                 softmax_scale=sm_scale, causal=False)
            o_fm, _ = run_fm()
            e_fm = rel_err(o_fm, ref)
            fns["fm"] = run_fm
            fns["fm_metadata"] = lambda: fm.get_mla_metadata(seqlens, s_q * h_q, 1)
        del ref
        if not e_tlc < 1e-2:
            bad += 1
            print(f"| {b} | {t} | {h_q} | {s_q} | WRONG: tlc error {e_tlc:.3g} |", flush=True)
            continue
        times = {k: [] for k in fns}
        names = list(fns)
        for r in range(a.rounds):
            for k in (names if r % 2 == 0 else names[::-1]):
                times[k].append(do_bench(fns[k], warmup=10, rep=60, return_mode="median"))
        us = {k: median(v) * 1e3 for k, v in times.items()}
        flops = 2 * b * s_q * t * h_q * (D + DV)
        byts = (b * t * D + b * s_q * h_q * D + b * s_q * h_q * DV) * 2
        fm_us = us.get("fm", float("nan"))
        ratio = fm_us / us["tlc"] if fm else float("nan")
        if fm:
            ratios.append(ratio)
        line = (f"| {b} | {t} | {h_q} | {s_q} | {fm_us:.1f} | {us['tlc']:.1f} | {ratio:.2f} | "
                f"{flops / us['tlc'] / 1e6:.0f} | {byts / us['tlc'] / 1e3:.0f} | {us['schedule']:.1f} | "
                f"{us.get('fm_metadata', float('nan')):.1f} | "
                f"{e_tlc:.1e} | {e_fm:.1e} |")
        lines.append(line)
        print(line, flush=True)
    tail = []
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        tail.append(f"geometric mean of tlc / FlashMLA speed over {len(ratios)} rows: {g:.3f}; "
                    f"lowest {min(ratios):.3f}")
    tail.append(f"JIT compile of the three kernels (cold cache or cache hit): {t0.elapsed_time(t1):.0f} ms")
    for ln in tail:
        print(ln)
    lines += [""] + tail
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "mla_bench.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
