#!/usr/bin/env python3
"""Attention forward: tlc's dsl-examples/flash_attention.tl (through the JIT
in libtlc.so, launched with libtlrt on torch's tensors) against torch's
scaled_dot_product_attention with the cuDNN and the FlashAttention-2
backends, in one process, on the same tensors, on the same GPU.

    python3 tools/bench/attention_bench.py [--lib gpu-build/carry/libtlc.so]
        [--quick] [--rounds 3] [--out DIR] [--defines NAME=VALUE,...]

Shapes: batch x seq x heads x head_dim with batch * seq = 16k tokens, 4k to
16k tokens per sequence, head_dim 128 (16 heads) and 64 (32 heads), bf16
and fp16, causal and not; MHA (heads_kv = heads). Then (not with --quick)
flash_attention_varlen on 16k tokens of packed sequences of mixed lengths
against torch's varlen FlashAttention-2 entry point, checked against
per-sequence SDPA in float32. tlc runs the kernel with
its defaults (or --defines), and again autotuned (tlc.autotune) over the
kernel's two tiles (TUNE_CONFIGS: 128 x 128 over two warpgroups, 192 x 112
over three), chosen per row by timing both on the row's tensors. Every row
is checked first: both tlc outputs and log-sum-exps against torch's (max |out - ref| / max |ref| below 1e-2).
Times are triton.testing.do_bench medians (L2 cleared before each call),
--rounds rounds in alternating order, median per kernel. TFLOP/s counts
4 * b * h * s * s * d, halved when causal.
"""
import argparse
import os
import sys
from statistics import median

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))  # the tlc package (python/), used in place
import tlc  # noqa: E402
TOKENS = 16384
# The autotuned column's candidates, the kernel's two tiles (flash_attention.tl's header): 128 query
# rows over two consumer warpgroups with 128-key blocks (stages: the file's rule), and 192 rows over
# three with 112-key blocks on two stages.
TUNE_CONFIGS = [{"block_M": 128, "block_N": 128, "threads": 256},
                {"block_M": 192, "block_N": 112, "threads": 384, "num_stages": 2}]


def tile_name(config):
    return f"{config['block_M']}x{config['block_N']}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    ap.add_argument("--src", default=os.path.join(ROOT, "dsl-examples/flash_attention.tl"))
    ap.add_argument("--quick", action="store_true", help="bf16, seq 4096 and 16384 only")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None, help="folder for attention_bench.md")
    ap.add_argument("--defines", default="", help="extra -D for the kernel, NAME=VALUE,...")
    a = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in a.defines.split(",") if kv)
    tlc.load_library(a.lib)
    src = open(a.src).read()
    gpu = torch.cuda.get_device_name(0)
    lines = [f"# Attention forward, {gpu}, tlc (PTX: {tlc.ptx_generator()}) vs torch SDPA (cuDNN, FlashAttention-2)",
             "",
             "| dtype | seq | heads x dim | causal | cuDNN TFLOP/s | FA2 TFLOP/s | tlc TFLOP/s | tlc / cuDNN "
             "| tlc / FA2 | tlc tuned TFLOP/s | tuned tile | tuned / cuDNN | tlc err | lse err |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for ln in lines:
        print(ln, flush=True)
    dtypes = [torch.bfloat16] if a.quick else [torch.bfloat16, torch.float16]
    seqs = [4096, 16384] if a.quick else [4096, 8192, 16384]
    torch.manual_seed(0)
    kernels = {}
    bad = 0
    for dtype in dtypes:
        for d, h in ((128, 16), (64, 32)):
            for causal in (False, True):
                key = (dtype, d, causal)
                if key not in kernels:
                    defs = {"dim": d, "causal": causal, "dtype": tlc.dtype_name(dtype)}
                    defs.update(extra)
                    kernels[key] = (tlc.compile(src, kernel="flash_attention", defines=defs,
                                                name="flash_attention.tl").load(),
                                    tlc.autotune(src, TUNE_CONFIGS, kernel="flash_attention", defines=defs,
                                                 name="flash_attention.tl"))
                for s in seqs:
                    b = TOKENS // s
                    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=dtype) for _ in range(3))
                    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
                    out = torch.full_like(q, float("nan"))
                    lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
                    run = kernels[key][0].bind(q, k, v, out, lse, d ** -0.5)
                    run()
                    out_t, lse_t = torch.full_like(out, float("nan")), torch.empty_like(lse)
                    run_t = kernels[key][1].bind(q, k, v, out_t, lse_t, d ** -0.5)   # tunes for this shape
                    tile = tile_name(kernels[key][1].config_for(q, k, v, out_t, lse_t, d ** -0.5))
                    run_t()
                    torch.cuda.synchronize()
                    ref = F.scaled_dot_product_attention(qt.float(), kt.float(), vt.float(), is_causal=causal)
                    ref = ref.transpose(1, 2)
                    err = max(((o.float() - ref).abs().max() / ref.abs().max()).item() for o in (out, out_t))
                    lerr = 0.0  # the log-sum-exp, one head at a time (an s x s matrix each)
                    mask = torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1) if causal else None
                    for hh in range(h):
                        sc = torch.matmul(qt[:, hh].float(), kt[:, hh].float().transpose(1, 2)) * d ** -0.5
                        if causal:
                            sc.masked_fill_(mask, float("-inf"))
                        lr = torch.logsumexp(sc, dim=-1)
                        lerr = max(lerr, *(((x[:, hh] - lr).abs().max() / lr.abs().max()).item() for x in (lse, lse_t)))
                        del sc, lr
                    del ref, mask
                    if not (err < 1e-2 and lerr < 1e-2):
                        bad += 1
                        print(f"| {tlc.dtype_name(dtype)} | {s} | {h} x {d} | {causal} | WRONG: err {err:.3g} "
                              f"lse {lerr:.3g} |", flush=True)
                        continue

                    def sdpa(backend):
                        def f():
                            with sdpa_kernel(backend):
                                return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
                        return f
                    fns = {"tlc": run, "tuned": run_t, "cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
                           "fa2": sdpa(SDPBackend.FLASH_ATTENTION)}
                    times = {n: [] for n in fns}
                    names = list(fns)
                    for r in range(a.rounds):
                        for n in (names if r % 2 == 0 else names[::-1]):
                            try:
                                times[n].append(do_bench(fns[n], warmup=10, rep=60, return_mode="median"))
                            except RuntimeError:
                                times[n].append(float("nan"))
                    fl = 4 * b * h * s * s * d / (2 if causal else 1)
                    tf = {n: fl / (median(v) * 1e-3) / 1e12 for n, v in times.items()}
                    line = (f"| {tlc.dtype_name(dtype)} | {s} | {h} x {d} | {causal} | {tf['cudnn']:.0f} | "
                            f"{tf['fa2']:.0f} | {tf['tlc']:.0f} | {tf['tlc'] / tf['cudnn']:.2f} | "
                            f"{tf['tlc'] / tf['fa2']:.2f} | {tf['tuned']:.0f} | {tile} | "
                            f"{tf['tuned'] / tf['cudnn']:.2f} | {err:.1e} | {lerr:.1e} |")
                    lines.append(line)
                    print(line, flush=True)
                    del q, k, v, qt, kt, vt, out, lse, out_t, lse_t
    if not a.quick:
        bad += varlen_rows(a, src, extra, lines)
    if a.out:
        with open(os.path.join(a.out, "attention_bench.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
    sys.exit(1 if bad else 0)


# Packed sequences of these lengths (16k tokens in all), as serving stacks
# batch them.
VARLEN_SEQS = [8192, 4096, 2048, 1024, 512, 256, 128, 128]


def varlen_inputs(h, d, dtype):
    """q, k, v of VARLEN_SEQS packed ([tokens, h, d]) and their cumulative
    lengths (int32, on the GPU)."""
    seqs, total = VARLEN_SEQS, sum(VARLEN_SEQS)
    cu = torch.tensor([0] + [sum(seqs[:i + 1]) for i in range(len(seqs))], device="cuda", dtype=torch.int32)
    q, k, v = (torch.randn(total, h, d, device="cuda", dtype=dtype) for _ in range(3))
    return q, k, v, cu


def varlen_ref(q, k, v, cu, causal):
    """SDPA in float32 per packed sequence."""
    ref = torch.empty(q.shape, device="cuda", dtype=torch.float32)
    for i in range(len(cu) - 1):
        lo, hi = int(cu[i]), int(cu[i + 1])
        qi, ki, vi = (x[lo:hi].transpose(0, 1).float() for x in (q, k, v))
        ref[lo:hi] = F.scaled_dot_product_attention(qi, ki, vi, is_causal=causal).transpose(0, 1)
    return ref


def varlen_reference(name, fn, out_ref):
    """fn's output checked against the reference; None when the backend
    cannot run here or disagrees (then it is reported, not timed)."""
    try:
        out = fn()
        torch.cuda.synchronize()
    except (RuntimeError, AttributeError, TypeError) as e:
        print(f"# {name}: not available ({str(e).splitlines()[0][:100]})", flush=True)
        return None
    err = ((out.float() - out_ref).abs().max() / out_ref.abs().max()).item()
    if not err < 1e-2:
        print(f"# {name}: output differs from the reference ({err:.3g}), not timed", flush=True)
        return None
    return fn


def varlen_rows(a, src, extra, lines):
    """flash_attention_varlen on packed sequences against torch's varlen
    FlashAttention-2 entry point (where this torch has it), on the same
    tensors. torch's cuDNN one (_cudnn_attention_forward with cumulative
    lengths) gave the right output at 7-16 TFLOP/s on the H100 (why was not
    established): no reference for a kernel. Returns the number of wrong rows."""
    seqs = VARLEN_SEQS
    total = sum(seqs)
    head = ["", f"Variable-length: {len(seqs)} packed sequences of {', '.join(map(str, seqs))} tokens "
            f"({total} in all), queries and keys alike", "",
            "| dtype | heads x dim | causal | FA2 varlen TFLOP/s | tlc TFLOP/s | tlc / FA2 | tlc tuned TFLOP/s "
            "| tuned tile | tuned / FA2 | tlc err |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for ln in head:
        lines.append(ln)
        print(ln, flush=True)
    bad = 0
    for dtype in (torch.bfloat16, torch.float16):
        for d, h in ((128, 16), (64, 32)):
            for causal in (False, True):
                defs = {"dim": d, "causal": causal, "dtype": tlc.dtype_name(dtype)}
                defs.update(extra)
                kern = tlc.compile(src, kernel="flash_attention_varlen", defines=defs,
                                   name="flash_attention.tl").load()
                q, k, v, cu = varlen_inputs(h, d, dtype)
                out = torch.full_like(q, float("nan"))
                lse = torch.empty(h, total, device="cuda", dtype=torch.float32)
                run = kern.bind(q, k, v, cu, cu, out, lse, max(seqs), d ** -0.5)
                run()
                tuned = tlc.autotune(src, TUNE_CONFIGS, kernel="flash_attention_varlen", defines=defs,
                                     name="flash_attention.tl")
                out_t, lse_t = torch.full_like(out, float("nan")), torch.empty_like(lse)
                targs = (q, k, v, cu, cu, out_t, lse_t, max(seqs), d ** -0.5)
                run_t = tuned.bind(*targs)
                tile = tile_name(tuned.config_for(*targs))
                run_t()
                torch.cuda.synchronize()
                ref = varlen_ref(q, k, v, cu, causal)
                err = max(((o.float() - ref).abs().max() / ref.abs().max()).item() for o in (out, out_t))
                if not err < 1e-2:
                    bad += 1
                    line = f"| {tlc.dtype_name(dtype)} | {h} x {d} | {causal} | WRONG: err {err:.3g} |"
                    lines.append(line)
                    print(line, flush=True)
                    continue
                mx = max(seqs)
                fns = {"tlc": run, "tuned": run_t}
                fa2 = varlen_reference("FA2 varlen", lambda: torch.ops.aten._flash_attention_forward(
                    q, k, v, cu, cu, mx, mx, 0.0, causal, False, scale=d ** -0.5)[0], ref)
                if fa2:
                    fns["fa2"] = fa2
                times = {n: [] for n in fns}
                names = list(fns)
                for r in range(a.rounds):
                    for n in (names if r % 2 == 0 else names[::-1]):
                        times[n].append(do_bench(fns[n], warmup=10, rep=60, return_mode="median"))
                fl = sum(4 * h * n * n * d / (2 if causal else 1) for n in seqs)
                tf = {n: fl / (median(t) * 1e-3) / 1e12 for n, t in times.items()}
                cell = lambda n: f"{tf[n]:.0f}" if n in tf else "-"  # noqa: E731
                ratio = lambda n: f"{tf['tlc'] / tf[n]:.2f}" if n in tf else "-"  # noqa: E731
                tuned_ratio = f"{tf['tuned'] / tf['fa2']:.2f}" if "fa2" in tf else "-"
                line = (f"| {tlc.dtype_name(dtype)} | {h} x {d} | {causal} | {cell('fa2')} | "
                        f"{tf['tlc']:.0f} | {ratio('fa2')} | {tf['tuned']:.0f} | {tile} | {tuned_ratio} | "
                        f"{err:.1e} |")
                lines.append(line)
                print(line, flush=True)
                del q, k, v, out, lse, ref, out_t, lse_t
    return bad


if __name__ == "__main__":
    main()
