#!/usr/bin/env python3
"""Kernels side by side under Nsight Compute (clocks locked): cycles, instructions, pipe use and
warp stalls of one launch each, as a table (docs/benchmarks.md, twenty-first session).

    python3 tools/bench/ncu_compare.py mla [--shape 128x4096x128x2] [--sources SRC,...]
    python3 tools/bench/ncu_compare.py attention [--shape 0:64:16384] [--variants direct,llvm@num_stages=4,...]

mla: tlc's split kernel (dsl-examples/mla_decode.tl, or each .tl of --sources) and FlashMLA's
(when gpu-build/flashmla is there) on mla_bench.py's tensors for one row bxtxh_qxs_q, bf16.
attention: flash_attention.tl for one row causal:dim:seq of attention_bench.py's shapes (2048 /
dim heads, 16384 / seq sequences), bf16, one column per variant BACKEND[@D=V;D=V...] (BACKEND direct:
tlc's PTX generator, llvm: LLVM's NVPTX backend).

Each column is its own process under ncu, which profiles the kernel's second launch (the first
loads it). The kernels' outputs are not checked here: variant_ab.py and mla_bench.py check them.
Needs ncu (default /usr/local/cuda/bin/ncu, or --ncu) and the rights to read the GPU's counters.
"""
import argparse
import csv
import io
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (label, metric): a metric ending in `_per_issue_active.ratio` is warps stalled per issued instruction
ROWS = [
    ("cycles", "sm__cycles_elapsed.avg"),
    ("warp instructions", "smsp__inst_executed.sum"),
    ("tensor pipe active %", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("issue slots used %", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
    ("ALU pipe", "smsp__inst_executed_pipe_alu.sum"),
    ("FMA pipe, heavy", "smsp__inst_executed_pipe_fmaheavy.sum"),
    ("FMA pipe, lite", "smsp__inst_executed_pipe_fmalite.sum"),
    ("uniform pipe", "smsp__inst_executed_pipe_uniform.sum"),
    ("XU pipe", "smsp__inst_executed_pipe_xu.sum"),
    ("LSU pipe", "smsp__inst_executed_pipe_lsu.sum"),
    ("branches", "smsp__sass_inst_executed_op_branch.sum"),
] + [(f"stall: {r.replace('_', ' ')}", f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio")
     for r in ("barrier", "gmma", "long_scoreboard", "short_scoreboard", "wait", "mio_throttle", "math_pipe_throttle",
               "dispatch_stall", "no_instruction", "not_selected", "selected")]


def launch(kind, variant, shape, lib):
    """In the child under ncu: launch the kernel twice."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "tools/bench"))
    import tlc
    import variant_ab as va
    tlc.load_library(lib)
    if kind == "mla":
        import mla_bench as mb
        b, t, h_q, s_q = (int(x) for x in shape.split("x"))
        torch.manual_seed(0)
        q, kcache, block_table, seqlens = mb.make_inputs(b, t, h_q, s_q, torch.bfloat16)
        scale = mb.D ** -0.5
        if variant == "FlashMLA":
            sys.path.insert(0, os.path.join(ROOT, "gpu-build/flashmla"))
            import flash_mla as fm
            md, ns = fm.get_mla_metadata(seqlens, s_q * h_q, 1)

            def run():
                fm.flash_mla_with_kvcache(q, kcache, block_table, seqlens, mb.DV, md, ns, softmax_scale=scale,
                                          causal=False)
        else:
            _, src, _ = va.parse_variant("v=" + variant)
            ks = {n: va.build(src, n, "mla_decode.tl", {"dtype": "bfloat16", "causal": "False"}, "sm_90a")
                  for n in ("mla_decode_schedule", "mla_decode_split", "mla_decode_combine")}
            sms = torch.cuda.get_device_properties(0).multi_processor_count
            schedule, run, _, keep = mb.tlc_launches(ks, q, kcache, block_table, seqlens, scale, sms)
            schedule()
    else:
        causal, d, s = shape.split(":")
        causal, d, s = causal in ("1", "True"), int(d), int(s)
        backend, _, defs = variant.partition("@")
        defines = {"dim": d, "causal": causal, "dtype": "bfloat16"}
        defines.update(kv.split("=", 1) for kv in defs.split(";") if kv)
        text = open(os.path.join(ROOT, "dsl-examples/flash_attention.tl")).read()
        kern = va.build((backend, text), "flash_attention", "flash_attention.tl", defines)
        h, b = 2048 // d, 16384 // s
        torch.manual_seed(0)
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        out = torch.empty_like(q)
        lse = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
        run = kern.bind(q, k, v, out, lse, d ** -0.5)
    for _ in range(2):
        run()
    torch.cuda.synchronize()


def profile(a, variant):
    regex = {"mla": "mla_decode_split|splitkv_mla", "attention": "flash_attention"}[a.kind]
    cmd = [a.ncu, "--kernel-name", f"regex:{regex}", "--launch-skip", "1", "--launch-count", "1", "--csv",
           "--metrics", ",".join(m for _, m in ROWS), sys.executable, os.path.abspath(__file__), "_launch", a.kind,
           variant, a.shape, "--lib", a.lib]
    r = subprocess.run(cmd, capture_output=True, text=True)
    text = r.stdout[r.stdout.find('"ID"'):] if '"ID"' in r.stdout else ""
    values = {row["Metric Name"]: row["Metric Value"] for row in csv.DictReader(io.StringIO(text))}
    if r.returncode != 0 or not values:
        raise SystemExit(f"{variant}: ncu failed (exit {r.returncode})\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["mla", "attention", "_launch"])
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--shape", default="")
    ap.add_argument("--sources", default="dsl-examples/mla_decode.tl", help="mla: tlc's sources, ','-separated")
    ap.add_argument("--variants", default="direct,direct@num_stages=4,llvm@num_stages=4",
                    help="attention: BACKEND[@D=V;D=V], ','-separated")
    ap.add_argument("--ncu", default="/usr/local/cuda/bin/ncu")
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    a = ap.parse_args()
    if a.kind == "_launch":
        launch(a.rest[0], a.rest[1], a.rest[2], a.lib)
        return 0
    a.shape = a.shape or {"mla": "128x4096x128x2", "attention": "0:64:16384"}[a.kind]
    if a.kind == "mla":
        variants = a.sources.split(",")
        if os.path.isdir(os.path.join(ROOT, "gpu-build/flashmla")):
            variants.append("FlashMLA")
    else:
        variants = a.variants.split(",")
    cols = [profile(a, v) for v in variants]
    print(f"# ncu_compare {a.kind} {a.shape}, bf16, one launch each under Nsight Compute\n")
    print("| | " + " | ".join(variants) + " |\n| --- |" + " --- |" * len(variants))
    for label, metric in ROWS:
        print(f"| {label} | " + " | ".join(c.get(metric, "-") for c in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
