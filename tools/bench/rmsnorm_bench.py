#!/usr/bin/env python3
"""RMSNorm: tlc's kernel (dsl-examples/rmsnorm.tl through the JIT in libtlc.so,
launched with libtlrt on torch's tensors) against torch.nn.functional.rms_norm,
in one process, on the same data, on the same GPU.

    python3 tools/bench/rmsnorm_bench.py [--lib gpu-build/carry/libtlc.so]
        [--quick] [--sweep] [--out DIR]

tlc launches on torch's current stream (tlrt_stream_from_handle on
torch.cuda.current_stream().cuda_stream), so both sides share one stream.

Two timings per shape, both with CUDA events, both reported:
- do_bench: triton.testing.do_bench, median. It clears the L2 cache before
  every call and times each call alone (one launch between two events), so
  a kernel of a few us is mostly launch latency. Shapes of at most
  4096 x 1024 elements are timed ROUNDS times, tlc and torch alternately,
  keeping each side's median.
- graph: GRAPH_LAUNCHES back-to-back launches of the operation (8 when one
  input + output set is 256 MiB or more) captured in one torch.cuda.CUDAGraph
  (tlc through ctypes on the capture stream; torch's F.rms_norm likewise in a
  graph of its own), replayed until a timed region lasts GRAPH_MIN_MS, the
  median of GRAPH_REPEATS regions divided by the launches: the per-kernel
  GPU time, without per-launch host cost or launch gaps; tlc's and torch's
  graphs are timed alternately ROUNDS times at every shape, keeping each
  side's median. Where one input +
  output set is under twice the L2 cache, the launches rotate over K =
  ceil(3 x L2 / set) sets, one launch each (K <= GRAPH_MAX_SETS), so a launch
  finds its input evicted by the others'; where that would take more sets
  (1 and 7 rows: a few hundred KiB at most) the data is L2-resident whatever
  is done, and the table says so ("(L2)" after sets x launches). Every captured tlc launch's output
  (poisoned first) and every torch graph output is checked against eager
  torch.

Bandwidth counts the bytes that must move: read x + write y (the weight is
negligible). The device's copy bandwidth is measured in the same run (a
torch device-to-device copy of 2 GiB, bytes read + written) and each
bandwidth is also given as a percentage of it. Shapes of at least
SAME_SIZE_MIN_BYTES moved are also set beside a copy of their own bytes,
timed the same way (graph, same rotation): at 64 MB a copy pays its launch
ramp and tail too and moves less than the 2 GiB copy does. Every tlc result is checked
against torch's before timing.

Launch configs: tools/bench/rmsnorm_config.h's rule (tlc_rmsnorm_config_for,
the same function as rule() below), the same for every row count.
--configs "C:BLOCK_M:threads,..." overrides it per C (and --small-configs
for launches of fewer blocks than SMALL_BLOCKS). --sweep first tries
several (BLOCK_M, threads) per C at the largest row count and several
one-row-per-block configs at 1 and 7 rows (both kernels, float16), and uses
the fastest: they are printed and written to OUT/rmsnorm_configs.txt and
OUT/rmsnorm_small_configs.txt in the format of $TLC_RMSNORM_CONFIGS,
which tests/gpu/test_rmsnorm.c also reads.

Shapes: issue 3's item 6 (C in ITEM6_CS x rows in {1, 7, 4096, 302400})
and issue 16's widths (WIDE_CS at 16384 rows), both kernels, float16 and
bfloat16.
"""
import argparse
import json
import math
import os
import re
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))  # the tlc package (python/), used in place
import tlc  # noqa: E402
EPS = 1e-5
ROUNDS = 3  # alternating tlc / torch timings per small shape (median of each)
GRAPH_LAUNCHES = 32  # launches per captured graph (8 for sets of 256 MiB or more)
GRAPH_MAX_SETS = 128  # at most this many rotated input/output sets (and launches) per graph
GRAPH_MIN_MS = 2.0  # each timed region replays the graph at least this long
GRAPH_REPEATS = 5  # timed regions per graph measurement (median)
SAME_SIZE_MIN_BYTES = 64 << 20  # shapes moving this much get a same-size copy reference


# ---------------------------------------------------------------- configs
ITEM6_CS = [96, 160, 192, 256, 320, 384, 512, 640, 1024, 4096, 8192]
WIDE_CS = [2048, 4096, 5120, 7168, 8192, 12288, 16384, 32768]
SMALL_BLOCKS = 132  # an H100's SMs: launches of fewer blocks take the --small-configs overrides


def rule(C):
    """tools/bench/rmsnorm_config.h's tlc_rmsnorm_config_for: (BLOCK_M, threads)."""
    if C <= 2048:
        vectors, bm = max(C // 8, 1), 1
        while bm < 64 and ((bm * vectors) % 32 or bm * vectors < 128):
            bm *= 2
        return (bm, bm * vectors)
    per_thread = 16 * ((C + 8191) // 8192)
    return (1, ((C + per_thread - 1) // per_thread + 31) // 32 * 32)


class Configs:
    """The header's rule, with the overrides --configs, --small-configs or --sweep give."""

    def __init__(self):
        self.big, self.small, self.small_blocks = {}, {}, SMALL_BLOCKS

    def big_for(self, C):
        return self.big.get(C) or rule(C)

    def small_for(self, C):
        return self.small.get(C) or self.big_for(C)

    def for_rows(self, C, rows):
        b = self.big_for(C)
        return self.small_for(C) if rows < self.small_blocks * b[0] else b


def candidates(C, first):
    """`first`, then block shapes with 5..32 elements per thread (powers of two, and
    thread counts of 3, 5 or 6 warps, which split rows of 96, 160 or 192 elements evenly)."""
    out = [first]
    for thr in (64, 96, 128, 160, 192, 256, 512):
        for bm in (1, 2, 4, 8, 16, 32):
            if 5 <= bm * C / thr <= 32 and (bm, thr) not in out:
                out.append((bm, thr))
    return out


def small_candidates(C, cfg):
    """One row per block, 32..256 threads (at most 64 elements per thread), and the current configs."""
    out = [cfg.small_for(C)]
    for cand in [(1, t) for t in (32, 64, 128, 256)] + [cfg.big_for(C)]:
        if cand not in out and C * cand[0] / cand[1] <= 64:
            out.append(cand)
    return out


def parse_configs(text):
    """ "96:32:192,160:16:160" -> {96: (32, 192), 160: (16, 160)} (the format of $TLC_RMSNORM_CONFIGS) """
    out = {}
    for item in filter(None, text.replace(" ", "").split(",")):
        C, bm, thr = (int(v) for v in item.split(":"))
        out[C] = (bm, thr)
    return out


def format_configs(table):
    return ",".join(f"{C}:{bm}:{t}" for C, (bm, t) in sorted(table.items()))


# ---------------------------------------------------------------- measuring
def bench_ms(fn, quick):
    return do_bench(fn, warmup=10 if quick else 25, rep=40 if quick else 100, return_mode="median")


def copy_bandwidth():
    n = 1 << 30  # 1 Gi halves = 2 GiB
    a = torch.randn(n, device="cuda", dtype=torch.float16)
    b = torch.empty_like(a)
    ms = bench_ms(lambda: b.copy_(a), False)
    del a, b
    return 2 * n * 2 / (ms * 1e-3) / 1e9


def make_inputs(rows, C, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    scale = torch.exp(torch.empty(rows, 1, device="cuda").uniform_(-3.0, 3.0, generator=g))
    x = (torch.randn(rows, C, device="cuda", generator=g) * scale).to(dtype)
    w = torch.empty(C, device="cuda").uniform_(-1.5, 1.5, generator=g).to(dtype)
    return x, w


def check(y, ref, chunk_elems=1 << 26):
    """(bad elements, relative L2 error) of y against ref, |y - ref| <= 1.5e-2 |ref| + 4e-3
    and no NaN; by row blocks of about chunk_elems, so that the float32 temporaries of
    a 302400 x 8192 check stay near 1 GiB."""
    step = max(1, chunk_elems // max(1, y.shape[-1]))
    bad, err2, ref2 = 0, 0.0, 0.0
    for r0 in range(0, y.shape[0], step):
        yf, rf = y[r0:r0 + step].float(), ref[r0:r0 + step].float()
        d = yf - rf
        bad += int((((d.abs() > 1.5e-2 * rf.abs() + 4e-3)) | torch.isnan(yf)).sum().item())
        err2 += float(d.double().square().sum().item())
        ref2 += float(rf.double().square().sum().item())
    return bad, (err2 ** 0.5) / max(ref2 ** 0.5, 1e-30)


def replay_us(g, launches):
    """Per-launch GPU time (us) of graph g holding `launches` launches: replays back to
    back until a region lasts GRAPH_MIN_MS, median of GRAPH_REPEATS regions."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay()  # warm-up, then one replay alone to size the regions
    start.record()
    g.replay()
    end.record()
    end.synchronize()
    reps = max(1, math.ceil(GRAPH_MIN_MS / max(start.elapsed_time(end), 1e-3)))
    per = []
    for _ in range(GRAPH_REPEATS):
        start.record()
        for _ in range(reps):
            g.replay()
        end.record()
        end.synchronize()
        per.append(start.elapsed_time(end) * 1e3 / (reps * launches))
    return sorted(per)[len(per) // 2]


def graph_sets(rows, C, set_bytes, l2_bytes):
    """(launches per graph, input/output sets rotated over, whether all of it stays in L2).
    Sets under twice the L2 rotate over ceil(3 x L2 / set) of them, one launch each (so
    up to GRAPH_MAX_SETS launches); where that many would still not be enough (sets of a
    few hundred KiB or less: 1 and 7 rows) the data stays in L2 whatever is done, and
    GRAPH_LAUNCHES launches rotate over as many sets."""
    if set_bytes >= 2 * l2_bytes:
        return (GRAPH_LAUNCHES if set_bytes < (256 << 20) else 8), 1, False
    k = -(-3 * l2_bytes // set_bytes)
    if k <= GRAPH_MAX_SETS:
        return max(GRAPH_LAUNCHES, k), k, False
    return GRAPH_LAUNCHES, GRAPH_LAUNCHES, GRAPH_LAUNCHES * set_bytes <= l2_bytes


class GraphPair:
    """tlc's kernel and torch's op on the same rotating inputs, each captured as `n`
    back-to-back launches in a CUDA graph of its own on side stream `side`."""

    def __init__(self, tlc, k, x, w, op, dtype, seed, side, l2_bytes):
        rows, C = x.shape
        self.n, self.k, self.l2 = graph_sets(rows, C, 2 * x.numel() * x.element_size() + 2 * C, l2_bytes)
        self.xs, self.ws = [x], [w]
        for j in range(1, self.k):
            xj, wj = make_inputs(rows, C, dtype, seed + 7919 * j)
            self.xs.append(xj)
            self.ws.append(wj)
        self.ys = [torch.full_like(x, float("nan")) for _ in range(self.k)]
        self.op = op
        runs = [k.bind(self.xs[j], self.ws[j], self.ys[j], stream=side) for j in range(self.k)]
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # torch's warm-up before capture, as its docs ask
            op(x, w)
        torch.cuda.current_stream().wait_stream(side)
        self.tlc_graph, self.torch_graph = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.tlc_graph, stream=side):
            for i in range(self.n):
                runs[i % self.k]()
        self.outs = [None] * self.k  # torch's outputs, one live per set (the graph pool reuses the rest)
        with torch.cuda.graph(self.torch_graph, stream=side):
            for i in range(self.n):
                self.outs[i % self.k] = op(self.xs[i % self.k], self.ws[i % self.k])
        self.keep = runs

    def check(self):
        """Replays both graphs once (tlc's outputs poisoned first); counts bad elements."""
        for y in self.ys:
            y.fill_(float("nan"))
        self.tlc_graph.replay()
        self.torch_graph.replay()
        torch.cuda.synchronize()
        bad = 0
        for j in range(self.k):
            ref = self.op(self.xs[j], self.ws[j])
            bad += check(self.ys[j], ref)[0] + check(self.outs[j], ref)[0]
        return bad


def same_size_copy_us(x, dtype, seed, side, l2_bytes):
    """Per-launch time (us) of torch's device-to-device copy of x's bytes into a tensor of
    the same shape, captured and replayed like GraphPair (the same sets rotated over): what
    moving rmsnorm's bytes costs at this size, launch ramp and tail included."""
    rows, C = x.shape
    n, k, _ = graph_sets(rows, C, 2 * x.numel() * x.element_size() + 2 * C, l2_bytes)
    xs = [x] + [make_inputs(rows, C, dtype, seed + 7919 * j)[0] for j in range(1, k)]
    ys = [torch.empty_like(x) for _ in range(k)]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        ys[0].copy_(xs[0])
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=side):
        for i in range(n):
            ys[i % k].copy_(xs[i % k])
    us = replay_us(g, n)
    del g, xs, ys
    return us


def host_us(fn, n=200, repeats=5):
    """Host time (us) of one call of fn: median over `repeats` loops of n calls, the
    stream synchronized between loops (n is small enough that the launch queue never
    fills, so this is the calling thread's time, not the GPU's)."""
    fn()
    per = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        per.append((time.perf_counter() - t0) / n * 1e6)
    torch.cuda.synchronize()
    return sorted(per)[repeats // 2]


def time_config(tlc, src, x, w, y, refs, bm, thr, dtype, quick=True):
    """tlc's times (us) of both kernels with (BLOCK_M, threads) on x, after checking them; raises RuntimeError."""
    out = []
    for name in ("rmsnorm", "rmsnorm_silu"):
        defs = {"C": x.shape[1], "BLOCK_M": bm, "threads": thr, "dtype": tlc.dtype_name(dtype)}
        k = tlc.compile(src, kernel=name, defines=defs, name="rmsnorm.tl").load()
        run = k.bind(x, w, y)
        y.fill_(float("nan"))
        run()
        bad, _ = check(y, refs[name])
        if bad:
            raise RuntimeError(f"WRONG({bad})")
        out.append(bench_ms(run, quick) * 1e3)
    return out


def sweep(tlc, src, cfg, Cs):
    """Many rows: the fastest (BLOCK_M, threads) per C at 302400 rows (16384 for C >= 4096),
    by the sum of both kernels' times, float16."""
    print("\nconfig sweep, many rows (float16): C rows | BLOCK_M x threads: rmsnorm us / rmsnorm+silu us ...")
    for C in Cs:
        rows = 16384 if C >= 4096 else 302400
        x, w = make_inputs(rows, C, torch.float16, 1)
        y = torch.empty_like(x)
        refs = {"rmsnorm": F.rms_norm(x, (C,), w, EPS)}
        refs["rmsnorm_silu"] = F.silu(refs["rmsnorm"])
        best, res = None, []
        for bm, thr in candidates(C, cfg.big_for(C)):
            try:
                t = time_config(tlc, src, x, w, y, refs, bm, thr, torch.float16)
            except RuntimeError as e:
                res.append(f"{bm}x{thr}: {str(e).splitlines()[0][:80]}")
                continue
            res.append(f"{bm}x{thr}: {t[0]:.1f}/{t[1]:.1f}")
            if best is None or sum(t) < best[0]:
                best = (sum(t), bm, thr)
        print(f"  C={C} rows={rows} | " + " | ".join(res), flush=True)
        if best:
            cfg.big[C] = (best[1], best[2])
        del x, w, y, refs
    print("best (many rows): " + ", ".join(f"{{{C}, {bm}, {t}}}" for C, (bm, t) in sorted(cfg.big.items())))


def sweep_small(tlc, src, cfg, Cs):
    """Few rows: the fastest one-row-per-block config per C at 1 and 7 rows (sum of the
    four times: both kernels, both row counts), float16."""
    print("\nconfig sweep, few rows (float16): C | BLOCK_M x threads: us at rows=1 (rmsnorm/silu), rows=7 ...")
    for C in Cs:
        data = []
        for rows in (1, 7):
            x, w = make_inputs(rows, C, torch.float16, 2 + rows)
            y = torch.empty_like(x)
            refs = {"rmsnorm": F.rms_norm(x, (C,), w, EPS)}
            refs["rmsnorm_silu"] = F.silu(refs["rmsnorm"])
            data.append((x, w, y, refs))
        best, res = None, []
        for bm, thr in small_candidates(C, cfg):
            try:
                t = [v for (x, w, y, refs) in data
                     for v in time_config(tlc, src, x, w, y, refs, bm, thr, torch.float16, quick=False)]
            except RuntimeError as e:
                res.append(f"{bm}x{thr}: {str(e).splitlines()[0][:80]}")
                continue
            res.append(f"{bm}x{thr}: {t[0]:.2f}/{t[1]:.2f}, {t[2]:.2f}/{t[3]:.2f}")
            if best is None or sum(t) < best[0]:
                best = (sum(t), bm, thr)
        print(f"  C={C} | " + " | ".join(res), flush=True)
        if best:
            cfg.small[C] = (best[1], best[2])
    print("best (few rows): " + ", ".join(f"{{{C}, {bm}, {t}}}" for C, (bm, t) in sorted(cfg.small.items())))


def item6_grid(results, dtype, Cs, method):
    """Markdown: tlc us / torch us per (C, rows), rmsnorm; rmsnorm+silu; bold where tlc is
    slower. method: "do_bench" or "graph"."""
    tk, rk = ("tlc_us", "torch_us") if method == "do_bench" else ("tlc_graph_us", "torch_graph_us")
    by = {(r["C"], r["rows"], r["op"]): r for r in results if r["dtype"] == dtype and tk in r}
    lines = [f"{dtype}, {method}: tlc us / torch us (rmsnorm; rmsnorm+silu)", "",
             "| C | rows=1 | rows=7 | rows=4096 | rows=16384 | rows=302400 |", "| --- | --- | --- | --- | --- | --- |"]
    for C in Cs:
        cells = []
        for rows in (1, 7, 4096, 16384, 302400):
            parts = []
            for op in ("rmsnorm", "rmsnorm_silu"):
                r = by.get((C, rows, op))
                if r is None:
                    parts.append("-")
                    continue
                prec = 2 if max(r[tk], r[rk]) < 20 else 1
                t = f"{r[tk]:.{prec}f}"
                parts.append(f"{'**' + t + '**' if r[tk] > r[rk] else t}/{r[rk]:.{prec}f}")
            cells.append("; ".join(parts))
        lines.append(f"| {C} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def launch_floors(side):
    """What the two methods measure for a kernel that does (almost) nothing: torch's fill
    of one element, by do_bench and per launch in a graph of GRAPH_LAUNCHES."""
    t = torch.zeros(1, device="cuda")
    db = do_bench(lambda: t.fill_(1.0), warmup=25, rep=100, return_mode="median") * 1e3
    g = torch.cuda.CUDAGraph()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.graph(g, stream=side):
        for _ in range(GRAPH_LAUNCHES):
            t.fill_(1.0)
    return db, replay_us(g, GRAPH_LAUNCHES)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    ap.add_argument("--src", default=os.path.join(ROOT, "dsl-examples/rmsnorm.tl"))
    ap.add_argument("--quick", action="store_true", help="shorter timing; skip the bfloat16 item-6 grid")
    ap.add_argument("--sweep", action="store_true", help="try several (BLOCK_M, threads) per C first")
    ap.add_argument("--configs", default=os.environ.get("TLC_RMSNORM_CONFIGS", ""),
                    help="override many-rows configs: C:BLOCK_M:threads,... (default $TLC_RMSNORM_CONFIGS)")
    ap.add_argument("--small-configs", default=os.environ.get("TLC_RMSNORM_SMALL_CONFIGS", ""),
                    help="override few-rows configs (default $TLC_RMSNORM_SMALL_CONFIGS)")
    ap.add_argument("--out", default=os.environ.get("OUT"))
    ap.add_argument("--max-jobs", type=int, default=0, help="measure only the first N shapes (a smoke test)")
    ap.add_argument("--shapes", default="", help="measure only these shapes: ROWSxC,... (e.g. 4096x4096)")
    a = ap.parse_args()

    tlc.load_library(a.lib)
    src = open(a.src).read()
    props = torch.cuda.get_device_properties(0)
    copy_gbs = copy_bandwidth()
    arch = tlc.device_arch()
    print(f"device: {props.name}, {props.multi_processor_count} SMs, tlc arch {arch} (PTX: {tlc.ptx_generator()}), "
          f"torch {torch.__version__}")
    print(f"device-to-device copy (torch, 2 GiB, read + write): {copy_gbs:.0f} GB/s")

    cfg = Configs()
    Cs = sorted(set(ITEM6_CS) | set(WIDE_CS))
    cfg.big.update(parse_configs(a.configs))
    cfg.small.update(parse_configs(a.small_configs))
    if a.sweep:
        t0 = time.time()
        sweep(tlc, src, cfg, Cs)
        sweep_small(tlc, src, cfg, Cs)
        print(f"(sweeps took {time.time() - t0:.0f} s)")
        if a.out:
            with open(os.path.join(a.out, "rmsnorm_configs.txt"), "w") as f:
                f.write(format_configs(cfg.big) + "\n")
            with open(os.path.join(a.out, "rmsnorm_small_configs.txt"), "w") as f:
                f.write(format_configs(cfg.small) + "\n")

    headline = [(16384, 4096), (16384, 8192), (302400, 160), (302400, 320), (302400, 640), (302400, 1024)]
    item6 = [(r, C) for C in ITEM6_CS for r in (1, 7, 4096, 302400)] + [(16384, C) for C in WIDE_CS]
    jobs = [(r, C, torch.float16, s) for (r, C) in headline for s in (False, True)]
    jobs += [(r, C, torch.bfloat16, s) for (r, C) in headline for s in (False, True)]
    jobs += [(r, C, torch.float16, s) for (r, C) in item6 if (r, C) not in headline for s in (False, True)]
    if not a.quick:
        jobs += [(r, C, torch.bfloat16, s) for (r, C) in item6 if (r, C) not in headline for s in (False, True)]
    if a.shapes:
        only = {tuple(int(v) for v in sh.split("x")) for sh in a.shapes.split(",")}
        jobs = [j for j in jobs if (j[0], j[1]) in only]
    if a.max_jobs > 0:  # smoke test: a few of each kind (big first, then 1 and 7 rows)
        jobs = jobs[:a.max_jobs // 2] + [j for j in jobs if j[0] < 4096][:a.max_jobs - a.max_jobs // 2]

    side = torch.cuda.Stream()  # the graphs' capture stream
    l2_bytes = props.L2_cache_size
    floor_db, floor_graph = launch_floors(side)
    print(f"L2 cache: {l2_bytes >> 20} MiB. Launch floor (torch fill of 1 element): do_bench {floor_db:.2f} us, "
          f"graph {floor_graph:.2f} us per launch")

    rows_out = []
    hdr = ("| rows x C | dtype | op | BLOCK_M x threads | tlc us | torch us | torch/tlc | tlc us graph | "
           "torch us graph | torch/tlc graph | tlc GB/s graph | % copy | same-size copy us | % same-size copy | "
           "sets x launches (L2) | check |")
    print("\n(us: do_bench median; graph: per launch in a replayed CUDA graph)\n" + hdr + "\n" + "|---" * 16 + "|")
    kcache = {}
    same_size = {}  # (rows, C, dtype) -> us of the same-size copy
    host = None
    for rows, C, dtype, silu in jobs:
        bm, thr = cfg.for_rows(C, rows)
        name = "rmsnorm_silu" if silu else "rmsnorm"
        key = (name, C, dtype, bm, thr)
        seed = rows * 131 + C
        try:
            if key not in kcache:
                defs = {"C": C, "BLOCK_M": bm, "threads": thr, "dtype": tlc.dtype_name(dtype)}
                kcache[key] = tlc.compile(src, kernel=name, defines=defs, name="rmsnorm.tl").load()
            x, w = make_inputs(rows, C, dtype, seed)
            y = torch.full_like(x, float("nan"))
            run = kcache[key].bind(x, w, y)  # on torch's current stream
            op = (lambda a, b: F.silu(F.rms_norm(a, (C,), b, EPS))) if silu else (lambda a, b: F.rms_norm(a, (C,), b, EPS))
            torch_fn = lambda: op(x, w)  # noqa: E731
            run()
            ref = torch_fn()
            bad, rel = check(y, ref)
            del ref  # 4.6 GiB at 302400 x 8192: the graphs below need the room
            # Small shapes take ~5 us, where one median moves by a few tenths between
            # calls: time tlc and torch alternately ROUNDS times, keep each one's median.
            rounds = 1 if rows * C > 4096 * 1024 else ROUNDS
            ts, rs = [], []
            for _ in range(rounds):
                ts.append(bench_ms(run, a.quick) * 1e3)
                rs.append(bench_ms(torch_fn, a.quick) * 1e3)
            t_us, r_us = sorted(ts)[rounds // 2], sorted(rs)[rounds // 2]
            if host is None and rows == 7 and dtype == torch.bfloat16 and not silu:
                host = (rows, C, host_us(run), host_us(torch_fn))
            try:  # a failure here keeps the do_bench numbers
                gp = GraphPair(tlc, kcache[key], x, w, op, dtype, seed, side, l2_bytes)
                gbad = gp.check()
                # Graph timings alternate ROUNDS times at every size: a shape timed
                # right after the 4.6 GiB ones measured up to 10% slow in one round.
                tg, rg = [], []
                for _ in range(ROUNDS):
                    tg.append(replay_us(gp.tlc_graph, gp.n))
                    rg.append(replay_us(gp.torch_graph, gp.n))
                tg_us, rg_us = sorted(tg)[ROUNDS // 2], sorted(rg)[ROUNDS // 2]
                sets = (gp.k, gp.n, gp.l2)
                del gp
            except Exception as e:  # noqa: BLE001 (torch raises several kinds from a capture)
                print(f"graph timing of {rows} x {C} {tlc.dtype_name(dtype)} {name} failed: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:300] if str(e) else ''}", flush=True)
                gbad, tg_us, rg_us, sets = 1, float("nan"), float("nan"), (0, 0, False)
                torch.cuda.synchronize()
        except RuntimeError as e:
            print(f"| {rows} x {C} | {tlc.dtype_name(dtype)} | {name} | {bm} x {thr} | ERROR: {str(e).splitlines()[0][:200]} |")
            rows_out.append(dict(rows=rows, C=C, dtype=tlc.dtype_name(dtype), op=name, error=str(e)[:2000]))
            continue
        nbytes = 2 * rows * C * x.element_size()
        gbs = lambda us: nbytes / (us * 1e-6) / 1e9  # noqa: E731
        if nbytes >= SAME_SIZE_MIN_BYTES and (rows, C, dtype) not in same_size:
            same_size[(rows, C, dtype)] = same_size_copy_us(x, dtype, seed, side, l2_bytes)
        cp_us = same_size.get((rows, C, dtype), float("nan"))
        status = "ok" if bad == 0 and gbad == 0 else f"WRONG {bad} eager, {gbad} graph"
        print(f"| {rows} x {C} | {tlc.dtype_name(dtype)} | {'rmsnorm+silu' if silu else 'rmsnorm'} | {bm} x {thr} | "
              f"{t_us:.2f} | {r_us:.2f} | {r_us / t_us:.2f} | {tg_us:.2f} | {rg_us:.2f} | {rg_us / tg_us:.2f} | "
              f"{gbs(tg_us):.0f} | {100 * gbs(tg_us) / copy_gbs:.0f}% | {cp_us:.2f} | {100 * cp_us / tg_us:.0f}% | "
              f"{sets[0]} x {sets[1]}{' (L2)' if sets[2] else ''} | "
              f"{status} (rel {rel:.1e}) |", flush=True)
        rows_out.append(dict(rows=rows, C=C, dtype=tlc.dtype_name(dtype), op=name, block_m=bm, threads=thr,
                             tlc_us=t_us, tlc_gbs=gbs(t_us), torch_us=r_us, torch_gbs=gbs(r_us),
                             tlc_graph_us=tg_us, tlc_graph_gbs=gbs(tg_us), torch_graph_us=rg_us,
                             torch_graph_gbs=gbs(rg_us), same_size_copy_us=cp_us, graph_sets=sets[0], graph_launches=sets[1],
                             l2_resident=sets[2], wrong=bad, wrong_graph=gbad, rel_l2=rel))
        del x, w, y
        if rows * C >= 302400 * 1024:
            torch.cuda.empty_cache()
    torch.cuda.synchronize()
    grids = "\n\n".join(item6_grid(rows_out, d, Cs, m) for m in ("graph", "do_bench") for d in ("float16", "bfloat16"))
    if a.out:
        with open(os.path.join(a.out, "rmsnorm_bench.json"), "w") as f:
            json.dump(dict(device=props.name, copy_gbs=copy_gbs, arch=arch, torch=torch.__version__,
                           l2_bytes=l2_bytes, launch_floor_do_bench_us=floor_db, launch_floor_graph_us=floor_graph,
                           host_us=host, configs={str(k): v for k, v in cfg.big.items()},
                           small_configs={str(k): v for k, v in cfg.small.items()}, results=rows_out), f, indent=1)
        with open(os.path.join(a.out, "rmsnorm_item6.md"), "w") as f:
            f.write(grids + "\n")
    wrong = sum(1 for r in rows_out if r.get("wrong") or r.get("wrong_graph") or r.get("error"))
    print("\n" + grids + "\n")
    counts = {}
    for method, tk, rk in (("do_bench", "tlc_us", "torch_us"), ("graph", "tlc_graph_us", "torch_graph_us")):
        slower = [r for r in rows_out if tk in r and r[tk] > r[rk]]
        counts[method] = len(slower)
        for r in slower:
            print(f"slower ({method}): {r['rows']} x {r['C']} {r['dtype']} {r['op']} ({r['block_m']} x {r['threads']}): "
                  f"tlc {r[tk]:.2f} us, torch {r[rk]:.2f} us")
    if host:
        print(f"host time per call ({host[0]} x {host[1]} bfloat16 rmsnorm, Python loop): tlc launcher "
              f"{host[2]:.2f} us, torch F.rms_norm {host[3]:.2f} us")
    print(f"launch floor (1-element fill): do_bench {floor_db:.2f} us, graph {floor_graph:.2f} us per launch")
    big = [r for r in rows_out if "tlc_graph_us" in r and 2 * r["rows"] * r["C"] * 2 >= SAME_SIZE_MIN_BYTES]
    for label, ok in (("95% of the 2 GiB copy", lambda r: r["tlc_graph_gbs"] >= 0.95 * copy_gbs),
                      ("95% of a copy of the same bytes", lambda r: r["same_size_copy_us"] >= 0.95 * r["tlc_graph_us"])):
        below = [r for r in big if not ok(r)]
        print(f"shapes of >= {SAME_SIZE_MIN_BYTES >> 20} MB moved at {label}: {len(big) - len(below)} of {len(big)}"
              + ("; below: " + ", ".join(f"{r['rows']} x {r['C']} {r['dtype']} {r['op']} "
                                        f"({100 * r['tlc_graph_gbs'] / copy_gbs:.0f}%, "
                                        f"{100 * r['same_size_copy_us'] / r['tlc_graph_us']:.0f}% same-size)"
                                        for r in below) if below else ""))
    print(f"\nrmsnorm_bench: {len(rows_out)} shapes, {wrong} wrong or failed, tlc slower than torch at "
          f"{counts['do_bench']} (do_bench) and {counts['graph']} (graph); copy {copy_gbs:.0f} GB/s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
