#!/usr/bin/env python3
"""float8 GEMM: tlc's kernel (dsl-examples/gemm_fp8.tl, C = (A @ B^T) *
scale_a * scale_b, float8_e4m3 inputs, bfloat16 output) against torch's
scaled fp8 matmul (torch._scaled_mm: cuBLASLt) in one process, on the same
tensors and scales, on the same GPU. sm_90a only. cuBLAS runs twice: as
torch calls it by default (partial sums promoted to float32 now and then)
and with use_fast_accum=True (the tensor cores' own float8 accumulation,
what tlc's kernel does); each one's error against the float32 product of
the same float8 values is printed.

    python3 tools/bench/fp8_gemm_bench.py [--lib gpu-build/carry/libtlc.so] [--quick]

Each tile configuration in CANDIDATES is checked against the float32
product of the same float8 values (C poisoned with NaN first), then all of
them are timed interleaved with cuBLAS (gemm_bench.py's `interleaved`: call
by call in turn, L2 cleared before each call) and the fastest is kept; the
kept kernel and both cuBLAS calls are then timed interleaved (--calls) and alone
(triton's do_bench, --rounds rounds in alternating order). TFLOP/s counts
2*M*N*K."""
import argparse
import os
import sys

import torch
from triton.testing import do_bench

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
import tlc  # noqa: E402
from gemm_bench import interleaved, med  # noqa: E402

CANDIDATES = [dict(threads=256, block_M=128, block_N=256, block_K=128, num_stages=4),
              dict(threads=256, block_M=128, block_N=128, block_K=128, num_stages=4),
              dict(threads=256, block_M=256, block_N=128, block_K=128, num_stages=4),
              dict(threads=256, block_M=128, block_N=256, block_K=128, num_stages=3, panel_size=16),
              dict(threads=256, block_M=256, block_N=128, block_K=128, num_stages=3, panel_size=16)]
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 7168, 16384)]


def cfg_name(d):
    p = f" p{d['panel_size']}" if "panel_size" in d else ""
    return f"{d['block_M']}x{d['block_N']}x{d['block_K']} t{d['threads']} s{d['num_stages']}{p}"


def bad_elements(C, ref):
    """Outside one bfloat16 rounding (2^-7 relative) plus the tensor cores' float8
    accumulation (fewer mantissa bits than float32: 8e-3 of the largest value), or NaN."""
    err = (C.float() - ref).abs() > 2 ** -7 * ref.abs() + 8e-3 * ref.abs().max()
    return int(err.sum().item()) + int(torch.isnan(C).sum().item())


def rel_error(C, ref):
    return ((C.float() - ref).norm() / ref.norm()).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    ap.add_argument("--quick", action="store_true", help="4096^3 only")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--screen-calls", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    tlc.load_library(a.lib)
    src = open(os.path.join(ROOT, "dsl-examples/gemm_fp8.tl")).read()
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"tlc's PTX: {tlc.ptx_generator()}", flush=True)
    alone = lambda f: do_bench(f, warmup=25, rep=100, return_mode="median")
    rows = []
    for (M, N, K) in (SHAPES[:1] if a.quick else SHAPES):
        g = torch.Generator(device="cuda").manual_seed(M + N + K)
        A = torch.randn(M, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
        B = torch.randn(N, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
        sa = torch.tensor(0.5, device="cuda")
        sb = torch.tensor(0.25, device="cuda")
        ref = (A.float() @ B.float().T) * 0.125
        scaled = lambda fast: torch._scaled_mm(A, B.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                               use_fast_accum=fast)
        cublas, cublas_fast = (lambda: scaled(False)), (lambda: scaled(True))
        flops = 2.0 * M * N * K
        shape = f"{M}x{N}x{K}"
        errs = [rel_error(f(), ref) for f in (cublas, cublas_fast)]
        print(f"{shape}: relative error (norm) cuBLAS {errs[0]:.2e}, cuBLAS fast accumulation {errs[1]:.2e}",
              flush=True)
        cands = []
        for cand in CANDIDATES:
            try:
                k = tlc.compile(src, kernel="matmul_fp8", defines=cand, name="gemm_fp8.tl").load()
            except RuntimeError as e:
                print(f"  {cfg_name(cand)}: {str(e).splitlines()[0]}", flush=True)
                continue
            C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            run = k.bind(A, B, C, 0.5, 0.25)
            run()
            torch.cuda.synchronize()
            bad = bad_elements(C, ref)
            if bad:
                print(f"  {shape} {cfg_name(cand)}: WRONG ({bad} elements)", flush=True)
                rows.append((shape, cfg_name(cand), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, bad))
                continue
            cands.append((cfg_name(cand), run, rel_error(C, ref)))
        if not cands:
            continue
        t = interleaved([cublas_fast] + [c[1] for c in cands], a.screen_calls)
        for n, (name, _, err) in enumerate(cands, start=1):
            print(f"  screen {shape} {name}: {flops / med(t[n]) / 1e9:.1f} TFLOP/s "
                  f"({med(t[0]) / med(t[n]):.1%} of cuBLAS fast accumulation), relative error {err:.2e}",
                  flush=True)
        best = min(range(1, len(t)), key=lambda n: med(t[n]))
        name, run, err = cands[best - 1]
        fns = [cublas, cublas_fast, run]
        cold = interleaved(fns, a.calls)
        solo = [[] for _ in fns]
        for rnd in range(a.rounds):
            for n in (range(3) if rnd % 2 == 0 else reversed(range(3))):
                solo[n].append(alone(fns[n]))
        alone_ratio = lambda i: med([r / t for r, t in zip(solo[i], solo[2])])
        rows.append((shape, name, flops / med(cold[2]) / 1e9, flops / med(cold[0]) / 1e9, flops / med(cold[1]) / 1e9,
                     med(cold[0]) / med(cold[2]), med(cold[1]) / med(cold[2]), alone_ratio(0), alone_ratio(1), 0))
    print("\n| shape (M x N x K) | tlc tile | tlc TFLOP/s | cuBLAS | cuBLAS fast acc. | tlc / cuBLAS | "
          "tlc / fast acc. | alone: tlc / cuBLAS | alone: tlc / fast acc. | wrong |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.0f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]:.3f} | {r[6]:.3f} | {r[7]:.3f} "
              f"| {r[8]:.3f} | {r[9]} |")

if __name__ == "__main__":
    main()
