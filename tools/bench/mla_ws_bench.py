#!/usr/bin/env python3
"""TileLang's hand-pipelined MLA decodes, compiled by tlc with their branches
run as written (tests/ports/example_mla_decode_ws.py: two consumer
warpgroups and a cp.async producer on mbarriers; "pairs":
tests/ports/example_warp_specialize_flashmla.py, FlashMLA's schedule of two
warpgroups taking pages in pairs) against FlashMLA and tlc's own
dsl-examples/mla_decode.tl, in one process, on the same values.

    python3 tools/bench/mla_ws_bench.py [--lib gpu-build/carry/libtlc.so]
        [--flashmla DIR] [--rounds 3] [--out DIR]

h_q = 128, s_q = 1, float16 (TileLang's kernel is float16), t a multiple of
128 (its loop takes pages in pairs). FlashMLA and mla_decode.tl read the
cache in FlashMLA's paged layout ([pages, 64, 1, 576], pages shuffled
through the block table, as tools/bench/mla_bench.py makes it); TileLang's
kernel reads the same values as its contiguous [b, t, 1, 512] and
[b, t, 1, 64] tensors. Every output is checked against the float32
reference first (max |out - ref| / max |ref| below 1e-2). TileLang's
kernel takes num_split from its caller: each of 1, 2 and 4 is timed and
the best reported beside them (the user's choice, as in the example).
Times are triton.testing.do_bench medians, --rounds rounds in alternating
order, median per kernel; TFLOP/s counts 2 * b * t * h_q * (576 + 512).
"""
import argparse
import math
import os
import sys

import torch
from triton.testing import do_bench

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
import tlc  # noqa: E402
from mla_bench import D, DV, PAGE, make_inputs, median, reference, rel_err, tlc_launches  # noqa: E402

ROWS = [(64, 1024), (64, 4096), (128, 4096), (128, 8192), (132, 4096)]
SPLITS = (1, 2, 4)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "gpu-build/carry/libtlc.so"))
    ap.add_argument("--flashmla", default=os.path.join(ROOT, "gpu-build/flashmla"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None, help="folder for mla_ws_bench.md")
    a = ap.parse_args()
    fm = None
    if os.path.isdir(a.flashmla):
        sys.path.insert(0, a.flashmla)
        import flash_mla as fm
    tlc.load_library(a.lib)
    h_q, dtype = 128, torch.float16
    sm_scale = D ** -0.5
    src = open(os.path.join(ROOT, "dsl-examples/mla_decode.tl")).read()
    ks = {n: tlc.compile(src, kernel=n, defines={"dtype": "float16", "causal": "False"}, arch="sm_90a",
                         name="mla_decode.tl").load()
          for n in ("mla_decode_schedule", "mla_decode_split", "mla_decode_combine")}
    port = os.path.join(ROOT, "tests/ports/example_mla_decode_ws.py")
    ws = {n: tlc.compile(port, defines={"heads": h_q, "kv_head_num": 1, "dim": DV, "pe_dim": D - DV,
                                        "block_N": 64, "block_H": 64, "num_split": n, "softmax_scale": sm_scale},
                         arch="sm_90a")
          for n in SPLITS}
    pairs = tlc.compile(os.path.join(ROOT, "tests/ports/example_warp_specialize_flashmla.py"),
                        defines={"heads": h_q, "kv_head_num": 1, "dim": DV, "pe_dim": D - DV, "block_N": 64,
                                 "block_H": 64, "num_split": 1}, arch="sm_90a")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    lines = [f"# MLA decode, float16, h_q {h_q}, s_q 1, {torch.cuda.get_device_name(0)} ({sms} SMs): TileLang's "
             f"hand-pipelined kernel compiled by tlc, tlc's mla_decode.tl, FlashMLA", "",
             "| b | t | FlashMLA us | mla_decode.tl us | TileLang ws us (num_split) | ws us at 1 / 2 / 4 "
             "| ws / FlashMLA speed | ws TFLOP/s | pairs us | pairs / FlashMLA speed | ws err | pairs err | mla_decode.tl err |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for ln in lines:
        print(ln, flush=True)
    torch.manual_seed(0)
    ratios, bad = [], 0
    for b, t in ROWS:
        q, kcache, block_table, seqlens = make_inputs(b, t, h_q, 1, dtype)
        ref = reference(q, kcache, block_table, seqlens, sm_scale, False)
        flat = kcache[block_table.long()].reshape(b, t, 1, D)  # each sequence's tokens in order
        kv, k_pe = flat[..., :DV].contiguous(), flat[..., DV:].contiguous()
        qn, qp = q[:, 0, :, :DV].contiguous(), q[:, 0, :, DV:].contiguous()
        fns, errs = {}, {}
        schedule, run_tlc, out_tlc, _bufs = tlc_launches(ks, q, kcache, block_table, seqlens, sm_scale, sms)
        schedule()
        run_tlc()
        fns["tlc"] = run_tlc
        keep = []
        for n in SPLITS:
            glse = torch.empty(b, h_q, n, dtype=dtype, device="cuda")
            part = torch.empty(b, h_q, n, DV, dtype=dtype, device="cuda")
            o = torch.full((b, h_q, DV), float("nan"), dtype=dtype, device="cuda")
            run = ws[n].bind(qn, qp, kv, k_pe, glse, part, o)
            run()
            keep.append((glse, part, o))
            fns[f"ws{n}"] = run
        glse1 = torch.empty(b, h_q, 1, dtype=dtype, device="cuda")
        part1 = torch.empty(b, h_q, 1, DV, dtype=dtype, device="cuda")
        o_pairs = torch.full((b, h_q, DV), float("nan"), dtype=dtype, device="cuda")
        run_pairs = pairs.bind(qn, qp, kv, k_pe, glse1, part1, o_pairs)
        run_pairs()
        fns["pairs"] = run_pairs
        if fm:
            md, nsplits = fm.get_mla_metadata(seqlens, h_q, 1)

            def run_fm():
                return fm.flash_mla_with_kvcache(q, kcache, block_table, seqlens, DV, md, nsplits,
                                                 softmax_scale=sm_scale, causal=False)
            o_fm, _ = run_fm()
            fns["fm"] = run_fm
        torch.cuda.synchronize()
        errs["tlc"] = rel_err(out_tlc.view(b, h_q, DV), ref.view(b, h_q, DV))
        for n, (_, _, o) in zip(SPLITS, keep):
            errs[f"ws{n}"] = rel_err(o, ref.view(b, h_q, DV))
        errs["pairs"] = rel_err(o_pairs, ref.view(b, h_q, DV))
        if max(errs.values()) >= 1e-2:
            bad += 1
            print(f"| {b} | {t} | WRONG: errors {errs} |", flush=True)
            continue
        times = {k: [] for k in fns}
        names = list(fns)
        for r in range(a.rounds):
            for k in (names if r % 2 == 0 else names[::-1]):
                times[k].append(do_bench(fns[k], warmup=10, rep=60, return_mode="median"))
        us = {k: median(v) * 1e3 for k, v in times.items()}
        best = min(SPLITS, key=lambda n: us[f"ws{n}"])
        ws_us = us[f"ws{best}"]
        fm_us = us.get("fm", float("nan"))
        ratio = fm_us / ws_us
        if fm:
            ratios.append(ratio)
        flops = 2 * b * t * h_q * (D + DV)
        line = (f"| {b} | {t} | {fm_us:.1f} | {us['tlc']:.1f} | {ws_us:.1f} ({best}) | "
                f"{' / '.join('%.1f' % us['ws%d' % n] for n in SPLITS)} | {ratio:.2f} | {flops / ws_us / 1e6:.0f} | "
                f"{us['pairs']:.1f} | {fm_us / us['pairs']:.2f} | "
                f"{errs['ws%d' % best]:.1e} | {errs['pairs']:.1e} | {errs['tlc']:.1e} |")
        lines.append(line)
        print(line, flush=True)
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        tail = f"geometric mean of TileLang ws (tlc) / FlashMLA speed over {len(ratios)} rows: {g:.3f}"
        print(tail)
        lines += ["", tail]
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "mla_ws_bench.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
