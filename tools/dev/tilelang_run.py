#!/usr/bin/env python3
"""Run TileLang's example scripts whole, their kernels compiled by tlc (`python -m tlc.tilelang`), and
tally how each ends: exit 0 (the script's own checks passed, where it makes any: some only print
their differences, which --out keeps), or its first compile error, else the last line it printed to
stderr.

usage: tilelang_run.py EXAMPLES_DIR [--jobs=N] [--timeout=S] [--only=SUBSTR,...] [--out=FILE]

Needs a GPU, torch, and tlc's Python package on PYTHONPATH (TLC_LIBRARY naming libtlc). A script
counts when it holds a kernel and a `__main__` block; tests (test_*.py) and regression files are
left out. TLC_TILELANG_QUICK_BENCH=1 is set: the scripts' do_bench calls run a few iterations, so
their timings mean nothing here."""
import concurrent.futures
import os
import subprocess
import sys
import time


def scripts(root, only):
    for d, _, fs in sorted(os.walk(root)):
        for f in sorted(fs):
            if not f.endswith(".py") or f.startswith(("test_", "regression_")):
                continue
            p = os.path.join(d, f)
            text = open(p, encoding="utf-8", errors="replace").read()
            if "__main__" not in text or ("prim_func" not in text and "tilelang.jit" not in text):
                continue
            if only and not any(s in p for s in only):
                continue
            yield p


def run(path, timeout):
    env = dict(os.environ, TLC_TILELANG_QUICK_BENCH="1")
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, "-m", "tlc.tilelang", os.path.basename(path)], cwd=os.path.dirname(path),
                           capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return path, "timeout", time.time() - t0, ""
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    errors = [ln.split(": error: ", 1)[1] for ln in lines if ": error: " in ln]
    why = "ok" if r.returncode == 0 else (errors[0] if errors else lines[-1] if lines else f"exit {r.returncode}")
    return path, why, time.time() - t0, "-- stdout\n" + r.stdout[-4000:] + "\n-- stderr\n" + r.stderr[-4000:]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    root = args[0]
    jobs, timeout = int(opts.get("jobs", 4)), float(opts.get("timeout", 300))
    only = [s for s in opts.get("only", "").split(",") if s]
    todo = list(scripts(root, only))
    results = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for path, why, secs, tail in pool.map(lambda p: run(p, timeout), todo):
            rel = os.path.relpath(path, root)
            results.append((rel, why, secs, tail))
            print(f"{'PASS' if why == 'ok' else 'FAIL'} {rel} ({secs:.0f} s){'' if why == 'ok' else ': ' + why[:300]}",
                  flush=True)
    ok = sum(1 for r in results if r[1] == "ok")
    print(f"\n{ok} of {len(results)} scripts ran to the end")
    if "out" in opts:
        with open(opts["out"], "w") as f:
            for rel, why, secs, tail in results:
                f.write(f"==== {rel}: {why}\n{tail}\n")


if __name__ == "__main__":
    main()
