#!/usr/bin/env python3
"""A/B of kernel variants in one process: DSL sources (and -D values) of the
same kernel, timed side by side on the same tensors, each checked first.

    python3 tools/bench/variant_ab.py attention NAME=SRC[@D=V,D=V] NAME=SRC ... [--shapes ...]
    python3 tools/bench/variant_ab.py attention_varlen NAME=SRC ... [--shapes causal:dim,...]
    python3 tools/bench/variant_ab.py mla       NAME=SRC ... [--shapes bxtxh_qxs_q,...]
    python3 tools/bench/variant_ab.py rmsnorm   NAME=SRC ... [--shapes ROWSxC,...] [--kernels ...]

SRC is a .tl path (relative to the repository root or absolute), compiled
by tlc's default PTX generator, or by the one named in a prefix `llvm:` or
`direct:` (e.g. `old=llvm:dsl-examples/mla_decode.tl`); after `@`,
`,`-separated -D values for that variant only (e.g. `b64=dsl-examples/
flash_attention.tl@block_N=64`). SRC `ptx:DIR` takes every kernel from PTX
another tlc build wrote instead (two compilers side by side): the file
DIR/KERNEL@D=V,D=V.ptx, the -D values this script passes sorted by name
(the script says which file it misses; `tlc --emit=ptx --kernel=KERNEL
-D ...` writes it). Every variant's output is checked against
a torch reference before anything is timed (attention: SDPA in float32,
per packed sequence for attention_varlen, whose 8 sequences of 8192 down
to 128 tokens are attention_bench.py's;
MLA: the reference of mla_bench.py, with FlashMLA beside when it is found
in gpu-build/flashmla; RMSNorm: F.rms_norm, and its SiLU). Timing:
triton's do_bench medians (attention, MLA: L2 cleared before each call) or
rmsnorm_bench.py's graph replay over rotating sets (RMSNorm), --rounds
rounds alternating the order, median per variant.

--unchecked NAME,... times those variants even when their output is wrong
(their errors are still printed): variants that leave a piece of the work
out to show what it costs.

The variant listed first tends to measure faster (1-5% on an H100 in the
2026-11 sessions, although the rounds alternate), so the whole comparison
runs twice, the second time in the opposite order, and both are printed
with their mean: compare means, and distrust differences smaller than the
gap between the two orders.
"""
import argparse
import os
import sys
from statistics import median

import torch
import torch.nn.functional as F
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tlc  # noqa: E402


def parse_variant(text):
    name, _, rest = text.partition("=")
    path, _, defs = rest.partition("@")
    if not name or not path:
        raise SystemExit(f"variant '{text}': write NAME=SRC[@D=V,...]")
    d = dict(kv.split("=", 1) for kv in defs.split(",") if kv)
    if path.startswith("ptx:"):
        return name, "ptx:" + (path[4:] if os.path.isabs(path[4:]) else os.path.join(ROOT, path[4:])), d
    backend = None
    for b in ("llvm", "direct"):
        if path.startswith(b + ":"):
            backend, path = b, path[len(b) + 1:]
    path = path if os.path.isabs(path) else os.path.join(ROOT, path)
    return name, (backend, open(path).read()), d


def build(src, kernel, name, defines, arch=None):
    """The variant's kernel: compiled from its source, or read from its PTX directory."""
    if not isinstance(src, str):
        backend, text = src
        return tlc.compile(text, kernel=kernel, name=name, defines=defines, arch=arch, backend=backend).load()
    defs = ",".join(f"{k}={defines[k]}" for k in sorted(defines))
    path = os.path.join(src[4:], f"{kernel}@{defs}.ptx")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: missing (tlc --emit=ptx --kernel={kernel} "
                         + " ".join(f"-D {k}={defines[k]}" for k in sorted(defines)) + f" {name})")
    with open(path) as f:
        return tlc.from_ptx(f.read(), kernel, arch, name).load()


def time_rounds(fns, rounds):
    """{name: median us} over `rounds` rounds in alternating order."""
    names = list(fns)
    times = {n: [] for n in names}
    for r in range(rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            times[n].append(do_bench(fns[n], warmup=10, rep=60, return_mode="median") * 1e3)
    return {n: median(v) for n, v in times.items()}


# ---------------- attention ----------------
def attention(variants, a):
    dtype = getattr(torch, a.dtype)
    shapes = [s.split(":") for s in (a.shapes or "0:128:4096,0:128:16384,1:128:4096,1:128:16384,"
                                                   "0:64:4096,0:64:16384,1:64:4096,1:64:16384").split(",")]
    yield "causal:dim:seq", "TFLOP/s"
    for causal, d, s in shapes:
        causal, d, s = causal in ("1", "True"), int(d), int(s)
        h, b = 2048 // d, 16384 // s
        torch.manual_seed(0)
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=dtype) for _ in range(3))
        ref = F.scaled_dot_product_attention(*(x.transpose(1, 2).float() for x in (q, k, v)),
                                             is_causal=causal).transpose(1, 2)
        fns, errs = {}, {}
        for name, src, defs in variants:
            kern = build(src, "flash_attention", "flash_attention.tl",
                         {"dim": d, "causal": causal, "dtype": tlc.dtype_name(dtype), **defs})
            out = torch.full_like(q, float("nan"))
            lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
            fns[name] = kern.bind(q, k, v, out, lse, d ** -0.5)
            fns[name]()
            torch.cuda.synchronize()
            errs[name] = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        del ref
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        yield f"{int(causal)}:{d}:{s}", (fns, errs, lambda us: flops / (us * 1e-6) / 1e12, 1e-2)


# ---------------- variable-length attention ----------------
def attention_varlen(variants, a):
    import attention_bench as ab
    dtype = getattr(torch, a.dtype)
    seqs = ab.VARLEN_SEQS
    shapes = [s.split(":") for s in (a.shapes or "0:128,1:128,0:64,1:64").split(",")]
    yield "causal:dim", "TFLOP/s"
    for causal, d in shapes:
        causal, d = causal in ("1", "True"), int(d)
        h = 2048 // d
        torch.manual_seed(0)
        q, k, v, cu = ab.varlen_inputs(h, d, dtype)
        ref = ab.varlen_ref(q, k, v, cu, causal)
        fns, errs = {}, {}
        for name, src, defs in variants:
            kern = build(src, "flash_attention_varlen", "flash_attention.tl",
                         {"dim": d, "causal": causal, "dtype": tlc.dtype_name(dtype), **defs})
            out = torch.full_like(q, float("nan"))
            lse = torch.empty(h, q.shape[0], device="cuda", dtype=torch.float32)
            fns[name] = kern.bind(q, k, v, cu, cu, out, lse, max(seqs), d ** -0.5)
            fns[name]()
            torch.cuda.synchronize()
            errs[name] = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        del ref
        flops = sum(4 * h * n * n * d / (2 if causal else 1) for n in seqs)
        yield f"{int(causal)}:{d}", (fns, errs, lambda us: flops / (us * 1e-6) / 1e12, 1e-2)


# ---------------- MLA decode ----------------
def mla(variants, a):
    import mla_bench as mb
    fm = None
    fm_dir = os.path.join(ROOT, "gpu-build/flashmla")
    if os.path.isdir(fm_dir):
        sys.path.insert(0, fm_dir)
        import flash_mla as fm
    dtype = getattr(torch, a.dtype)
    D, DV = mb.D, mb.DV
    rows = [tuple(int(x) for x in r.split("x")) for r in
            (a.shapes or "64x1024x16x1,64x1024x16x2,64x1024x128x1,64x1024x128x2,"
                          "128x4096x16x1,128x4096x128x1,128x4096x128x2,64x8192x16x2").split(",")]
    ks = {name: {n: build(src, n, "mla_decode.tl", {"dtype": tlc.dtype_name(dtype), "causal": "False",
                                                    **(defs if n == "mla_decode_split" else {})}, "sm_90a")
                 for n in ("mla_decode_schedule", "mla_decode_split", "mla_decode_combine")}
          for name, src, defs in variants}
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    yield "b x t x h_q x s_q", "us"
    for (b, t, h_q, s_q) in rows:
        torch.manual_seed(0)
        q, kcache, block_table, seqlens = mb.make_inputs(b, t, h_q, s_q, dtype)
        scale = D ** -0.5
        ref = mb.reference(q, kcache, block_table, seqlens, scale, False)
        fns, errs, keep = {}, {}, []
        for name, _, _ in variants:
            schedule, run, out, bufs = mb.tlc_launches(ks[name], q, kcache, block_table, seqlens, scale, sms)
            schedule()
            run()
            torch.cuda.synchronize()
            errs[name] = mb.rel_err(out, ref)
            fns[name] = run
            keep.append((bufs, out))
        if fm:
            md, nsplits = fm.get_mla_metadata(seqlens, s_q * h_q, 1)
            fns["FlashMLA"] = lambda: fm.flash_mla_with_kvcache(q, kcache, block_table, seqlens, DV, md, nsplits,
                                                                softmax_scale=scale, causal=False)
            errs["FlashMLA"] = mb.rel_err(fns["FlashMLA"]()[0], ref)
        del ref
        yield f"{b}x{t}x{h_q}x{s_q}", (fns, errs, lambda us: us, 1e-2)


# ---------------- RMSNorm ----------------
def rmsnorm(variants, a):
    import rmsnorm_bench as rb
    dtype = getattr(torch, a.dtype)
    side = torch.cuda.Stream()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    bw = rb.copy_bandwidth()
    shapes = [tuple(int(v) for v in s.split("x")) for s in
              (a.shapes or "4096x4096,16384x8192,16384x32768,302400x96,302400x1024").split(",")]
    yield "kernel rows x C", f"% of the 2 GiB copy ({bw:.0f} GB/s), graph timing"
    for kname in (a.kernels or "rmsnorm,rmsnorm_silu").split(","):
        for rows, C in shapes:
            bm, thr = rb.rule(C)
            x, w = rb.make_inputs(rows, C, dtype, 1)
            if kname == "rmsnorm":
                def op(p, q, C=C):
                    return F.rms_norm(p, (C,), q, rb.EPS)
            else:
                def op(p, q, C=C):
                    return F.silu(F.rms_norm(p, (C,), q, rb.EPS))
            pairs, errs = {}, {}
            for name, src, defs in variants:
                kern = build(src, kname, "rmsnorm.tl",
                             {"C": C, "BLOCK_M": bm, "threads": thr, "dtype": tlc.dtype_name(dtype), **defs})
                pairs[name] = rb.GraphPair(tlc, kern, x, w, op, dtype, 1, side, l2)
                errs[name] = float(pairs[name].check())  # elements out of tolerance
            moved = 2 * rows * C * x.element_size()
            fns = {n: p for n, p in pairs.items()}
            yield f"{kname} {rows}x{C}", (fns, errs, lambda us: 100 * moved / (us * 1e-6) / 1e9 / bw, 0.5)


def graph_rounds(pairs, rounds):
    import rmsnorm_bench as rb
    names = list(pairs)
    times = {n: [] for n in names}
    for r in range(rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            times[n].append(rb.replay_us(pairs[n].tlc_graph, pairs[n].n))
    return {n: median(v) for n, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel", choices=["attention", "attention_varlen", "mla", "rmsnorm"])
    ap.add_argument("variants", nargs="+", help="NAME=SRC[@D=V,D=V]")
    ap.add_argument("--shapes", default="", help="attention causal:dim:seq, attention_varlen causal:dim, "
                                                 "mla bxtxh_qxs_q, rmsnorm ROWSxC")
    ap.add_argument("--kernels", default="", help="rmsnorm: rmsnorm,rmsnorm_silu")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--unchecked", default="", help="NAME,NAME: variants timed even when their results are "
                                                   "wrong (a variant that leaves a piece of the work out)")
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    a = ap.parse_args()
    tlc.load_library(a.lib)
    variants = [parse_variant(v) for v in a.variants]
    names = {v[0] for v in variants}
    if len(names) != len(variants):
        raise SystemExit("variant names must differ")
    unchecked = set(filter(None, a.unchecked.split(",")))
    if unchecked - names:
        raise SystemExit(f"--unchecked names no variant: {', '.join(sorted(unchecked - names))}")
    gen = {"attention": attention, "attention_varlen": attention_varlen, "mla": mla,
           "rmsnorm": rmsnorm}[a.kernel](variants, a)
    what, unit = next(gen)
    print(f"# {a.kernel}, {torch.cuda.get_device_name(0)}, {a.dtype}: {unit}; each cell: first order / "
          f"opposite order (mean)")
    bad = 0
    header = None
    for label, (fns, errs, conv, tol) in gen:
        if header is None:
            header = list(fns)
            print(f"| {what} | " + " | ".join(header) + " | errors |")
            print("| --- | " + " | ".join("---" for _ in header) + " | --- |")
        wrong = [n for n, e in errs.items() if not e < tol and n not in unchecked]
        if wrong:
            bad += 1
            print(f"| {label} | WRONG: {', '.join(f'{n} {errs[n]:.3g}' for n in wrong)} |", flush=True)
            continue
        timer = graph_rounds if a.kernel == "rmsnorm" else time_rounds
        fwd = timer(fns, a.rounds)
        rev = timer(dict(reversed(list(fns.items()))), a.rounds)
        cells = []
        for n in header:
            x, y = conv(fwd[n]), conv(rev[n])
            cells.append(f"{x:.1f} / {y:.1f} ({(x + y) / 2:.1f})")
        print(f"| {label} | " + " | ".join(cells) + " | " + " ".join(f"{errs[n]:.1e}" for n in header) + " |",
              flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
