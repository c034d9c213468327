#!/usr/bin/env python3
"""GEMM: tlc's kernel (dsl-examples/gemm.tl through the JIT in libtlc.so,
launched with libtlrt on torch's tensors) against torch.matmul (cuBLAS), in
one process, on the same data, on the same GPU. Both tlc code paths: sm_90a
(TMA + wgmma) and sm_80 (cp.async + ldmatrix + mma.sync; the driver compiles
its PTX for the Hopper GPU).

    python3 tools/bench/gemm_bench.py [--lib gpu-build/carry/libtlc.so] [--quick] [--static]

Each path tries the tile configurations in CANDIDATES at every shape
(each checked first, then all timed interleaved with cuBLAS, printed as
"screen") and keeps the fastest. The kept kernels and cuBLAS are then timed
two ways:
  interleaved: call by call in turn (--calls each, L2 cleared before every
    call like do_bench; "hot": again without clearing), so that every
    kernel sees the same clock: the ratio is work per clock, and the GPU's
    clock drift moves both sides alike;
  alone: triton.testing.do_bench of each kernel on its own (median of
    ~100 ms), --rounds rounds in alternating order, median of the rounds'
    ratios: each kernel runs at the clock its own power draw allows.
TFLOP/s counts 2*M*N*K. Every tlc result is checked against torch's
before it is timed (C poisoned with NaN first). --quick: 4096^3 only.
"""
import argparse
import os
import sys

import torch
from triton.testing import do_bench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))  # the tlc package (python/), used in place
import tlc  # noqa: E402



# Tile configurations each path tries at every shape (the table keeps the
# fastest, like a library's per-shape choice). sm_90a kernels are
# warp-specialized (one producer warpgroup more than `threads`) and
# persistent (the runtime launches at most SMs x blocks-per-SM blocks).
CANDIDATES = {
    "sm_90a": [dict(threads=256, block_M=256, block_N=128, block_K=64, num_stages=4),
               dict(threads=256, block_M=256, block_N=128, block_K=64, num_stages=4, panel_size=8),
               dict(threads=256, block_M=128, block_N=256, block_K=64, num_stages=4, panel_size=8),
               dict(threads=256, block_M=128, block_N=256, block_K=64, num_stages=4, panel_size=16),
               dict(threads=256, block_M=256, block_N=128, block_K=64, num_stages=4, panel_size=16),
               dict(threads=128, block_M=128, block_N=128, block_K=64, num_stages=3)],
    "sm_80": [dict(threads=256, block_M=256, block_N=128, block_K=32, num_stages=3),
              dict(threads=256, block_M=128, block_N=128, block_K=32, num_stages=4),
              dict(threads=256, block_M=128, block_N=256, block_K=32, num_stages=3),
              dict(threads=256, block_M=128, block_N=256, block_K=64, num_stages=3),
              dict(threads=256, block_M=128, block_N=128, block_K=64, num_stages=3)],
}
PATH_LABEL = {"sm_90a": "sm_90a wgmma+TMA (WS)", "sm_80": "sm_80 mma.sync+cp.async"}
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048)]


def cfg_name(d):
    p = f" p{d['panel_size']}" if "panel_size" in d else ""
    return f"{d['block_M']}x{d['block_N']}x{d['block_K']} t{d['threads']} s{d['num_stages']}{p}"


def check(C, ref, K):
    """Elements outside |c - ref| <= 2e-2 |ref| + 5e-3 sqrt(K/3), plus NaNs."""
    err = (C.float() - ref.float()).abs() > 2e-2 * ref.float().abs() + 5e-3 * (K / 3) ** 0.5
    return int(err.sum().item()) + int(torch.isnan(C).sum().item())


def interleaved(fns, calls, flush=True):
    """Times fns in turn, call by call: for each of `calls` rounds, every fn
    once (L2 cleared before each call when `flush`, like do_bench), each
    call between two CUDA events. Returns per fn the list of times (ms).
    Neighbouring calls of different kernels see the same clock and
    temperature, which separate do_bench runs do not."""
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for f in fns:  # warm-up
        f()
    ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
          for _ in fns]
    for c in range(calls):
        for i, f in enumerate(fns):
            if flush:
                cache.zero_()
            ev[i][c][0].record()
            f()
            ev[i][c][1].record()
    torch.cuda.synchronize()
    return [[s.elapsed_time(e) for s, e in row] for row in ev]


def med(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def check_config(tlc, src, arch, defs, A, B, ref, log):
    """Compiles one configuration and checks it once; (bad elements, launcher), or None."""
    M, K = A.shape
    N = B.shape[1]
    try:
        k = tlc.compile(src, kernel="matmul", defines=defs, arch=arch, name="gemm.tl").load()
    except RuntimeError as e:
        log(f"  {arch} {defs}: {str(e).splitlines()[0]}")
        return None
    C = torch.full((M, N), float("nan"), device="cuda", dtype=A.dtype)
    run = k.bind(A, B, C)
    run()
    torch.cuda.synchronize()
    return check(C, ref, K), run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    ap.add_argument("--src", default=os.path.join(ROOT, "dsl-examples/gemm.tl"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--static", action="store_true",
                    help="also time each configuration compiled for the exact shape (-D M=.. N=.. K=..)")
    ap.add_argument("--calls", type=int, default=300,
                    help="interleaved calls of cuBLAS and of each kept kernel per shape")
    ap.add_argument("--screen-calls", type=int, default=40,
                    help="interleaved calls per candidate when choosing each path's tile configuration")
    ap.add_argument("--rounds", type=int, default=7, help="alone-timing rounds (and chunks of the interleaved calls)")
    ap.add_argument("--paths", default="sm_90a,sm_80")
    a = ap.parse_args()
    tlc.load_library(a.lib)
    src = open(a.src).read()
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"tlc's PTX: {tlc.ptx_generator()}")
    rows = []
    log = lambda m: print(m, flush=True)
    shapes = SHAPES[:1] if a.quick else SHAPES
    paths = a.paths.split(",")
    alone = lambda f: do_bench(f, warmup=25, rep=100, return_mode="median")
    for dtype in (torch.float16, torch.bfloat16):
        for (M, N, K) in shapes:
            g = torch.Generator(device="cuda").manual_seed(M + N + K)
            A = torch.empty(M, K, device="cuda").uniform_(-1, 1, generator=g).to(dtype)
            B = torch.empty(K, N, device="cuda").uniform_(-1, 1, generator=g).to(dtype)
            ref = torch.matmul(A, B)
            cublas = lambda: torch.matmul(A, B)
            flops = 2.0 * M * N * K
            shape = f"{M}x{N}x{K}"
            tag = f"{tlc.dtype_name(dtype)} {shape}"
            # Choosing: per path and kind (dynamic / shape-specialized), every
            # candidate is checked, then all of them are timed interleaved
            # with cuBLAS; the fastest by median goes on.
            chosen = []  # (arch, name, run)
            for arch in paths:
                for static in ((False, True) if a.static else (False,)):
                    cands = []
                    for cand in CANDIDATES[arch]:
                        d = dict(cand, dtype=tlc.dtype_name(dtype))
                        if static:
                            d.update(M=M, N=N, K=K)
                        name = cfg_name(cand) + (" static" if static else "")
                        r = check_config(tlc, src, arch, d, A, B, ref, log)
                        if r is None:
                            continue
                        nbad, run = r
                        if nbad:
                            log(f"  {tag} {arch} {name}: WRONG ({nbad})")
                            rows.append((tlc.dtype_name(dtype), shape, PATH_LABEL[arch], name) + (0.0,) * 9 + (nbad,))
                        else:
                            cands.append((name, run))
                    if not cands:
                        continue
                    t = interleaved([cublas] + [c[1] for c in cands], a.screen_calls)
                    for n, (name, _) in enumerate(cands, start=1):
                        log(f"  screen {tag} {arch} {name}: {flops / med(t[n]) / 1e9:.1f} TFLOP/s "
                            f"({med(t[0]) / med(t[n]):.1%} of cuBLAS)")
                    best = min(range(1, len(t)), key=lambda n: med(t[n]))
                    chosen.append((arch, cands[best - 1][0], cands[best - 1][1]))
            if not chosen:
                continue
            fns = [cublas] + [c[2] for c in chosen]
            # 1. Interleaved: call by call in turn, L2 cleared before each call
            # (cold) and not (hot); the same clock for every kernel.
            cold = interleaved(fns, a.calls)
            hot = interleaved(fns, a.calls, flush=False)
            # 2. Alone: each kernel by do_bench on its own (~100 ms), so at
            # the clock its own power draw allows; `rounds` rounds, the
            # order reversed every other round; per-round ratios.
            solo = [[] for _ in fns]
            for rnd in range(a.rounds):
                order = range(len(fns)) if rnd % 2 == 0 else reversed(range(len(fns)))
                for n in order:
                    solo[n].append(alone(fns[n]))
            k = max(1, a.calls // a.rounds)
            for n, (arch, name, _) in enumerate(chosen, start=1):
                chunks = [med(cold[0][c:c + k]) / med(cold[n][c:c + k]) for c in range(0, a.calls - k + 1, k)]
                rounds = [r / t for r, t in zip(solo[0], solo[n])]
                log(f"  {tag} {arch} {name}: interleaved chunks " + " ".join(f"{r:.1%}" for r in chunks) +
                    "; alone rounds " + " ".join(f"{r:.1%}" for r in rounds))
                rows.append((tlc.dtype_name(dtype), shape, PATH_LABEL[arch], name,
                             flops / med(cold[n]) / 1e9, flops / med(cold[0]) / 1e9, med(cold[0]) / med(cold[n]),
                             min(chunks), max(chunks), flops / med(hot[n]) / 1e9, med(hot[0]) / med(hot[n]),
                             flops / med(solo[n]) / 1e9, med(rounds), 0))
            del A, B, ref
    print(f"\ninterleaved: {a.calls} calls of cuBLAS and of each kernel in turn, L2 cleared before each call; "
          f"TFLOP/s and ratio from the medians; (min-max): the ratio over {a.rounds} chunks of the calls. "
          f"hot: the same without clearing L2. alone: do_bench of each kernel on its own, median of {a.rounds} "
          "rounds' ratios (each kernel at the clock its own power draw allows)")
    print("\n| dtype | M x N x K | tlc path | tile (M x N x K, threads, stages) | tlc TFLOP/s | cuBLAS TFLOP/s "
          "| tlc / cuBLAS interleaved (min-max) | hot: tlc TFLOP/s, / cuBLAS | alone: tlc TFLOP/s, / cuBLAS | check |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.1f} | {r[5]:.1f} | {r[6]:.1%} ({r[7]:.1%}-{r[8]:.1%}) | "
              f"{r[9]:.1f}, {r[10]:.1%} | {r[11]:.1f}, {r[12]:.1%} | {'ok' if r[13] == 0 else f'WRONG ({r[13]})'} |")
    return 0 if all(r[13] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
