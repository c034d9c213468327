#!/usr/bin/env python3
"""Compile every Python file under a folder of TileLang examples with tlc,
guessing the -D values its diagnostics ask for, and tally what stops each.

usage: tilelang_sweep.py TLC EXAMPLES_DIR [--arch=sm_90a] [--verbose] [--own-values]

A file counts as compiled when `tlc --emit=ptx` exits 0. The guesses are
one value per parameter name: the file's own module-level `NAME = integer`
where it has one (with --own-values), else GUESSES, then by pattern, then
64: they make a file compile where its kernels take any reasonable size,
and a file whose own configuration matters may still fail at the guess."""
import os, re, subprocess, sys, collections

GUESSES = {
    "batch": 2, "batch_size": 2, "b": 2, "bs": 2, "heads": 64, "head": 64, "h": 64, "nheads": 64,
    "num_heads": 64, "kv_head_num": 1, "kv_heads": 1, "head_kv": 1, "groups": 1, "group": 1,
    "dim": 128, "d": 128, "head_dim": 128, "dim_v": 128, "pe_dim": 64, "dimv": 128, "dim_qk": 128,
    "seqlen": 1024, "seq_len": 1024, "seqlen_q": 1024, "seqlen_kv": 1024, "seq_q": 1024, "seq_kv": 1024,
    "kv_ctx": 1024, "ctx": 1024, "max_seqlen": 1024, "num_split": 4, "num_splits": 4, "threads": 128,
    "num_stages": 2, "stages": 2, "m": 1024, "n": 1024, "k": 1024, "block_m": 128, "block_n": 128,
    "block_k": 32, "block_h": 64, "block_size": 64, "page_block_size": 64, "softmax_scale": 0.125,
    "sm_scale": 0.125, "scale": 0.125, "is_causal": 0, "causal": 0, "topk": 64, "chunk_size": 64,
    "split_k": 4, "splitk": 4, "dtype": "float16", "hc": 4, "hc_mult": 4,
}

def guess(name):
    low = name.lower()
    if low in GUESSES: return GUESSES[low]
    if low.endswith("_list") or low.endswith("_sizes"): return "[64,128]"
    if "dtype" in low: return "float32" if ("accum" in low or "acc" in low) else "float16"
    if low.startswith("block") or low.endswith("_block") or "tile" in low: return 64
    if "seq" in low or "len" in low or "ctx" in low: return 1024
    if "scale" in low or "eps" in low: return 0.125
    if "stage" in low: return 2
    if "thread" in low: return 128
    if "split" in low: return 4
    if "head" in low: return 16
    if "dim" in low: return 128
    if low.startswith("is_") or low.startswith("use_") or low.startswith("enable"): return 0
    return 64

ASK = re.compile(r"-D ([A-Za-z_][A-Za-z0-9_]*)=VALUE")

def own_values(path):
    """The file's module-level integer constants (NAME = 16)."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return {}
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^([A-Za-z_]\w*)\s*=\s*(-?\d+)\s*$", text, re.M)}

def sweep_file(tlc, path, arch, verbose, own=False):
    defs = {}
    mine = own_values(path) if own else {}
    for _ in range(12):
        cmd = [tlc, path, "--emit=ptx", "-o", os.devnull, "--arch=" + arch]
        cmd += ["-D%s=%s" % (k, v) for k, v in defs.items()]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return "timeout", defs
        if r.returncode == 0:
            return None, defs
        asked = [n for n in ASK.findall(r.stderr) if n not in defs]
        if not asked:
            err = [l for l in r.stderr.splitlines() if ": error: " in l or "internal error" in l]
            first = err[0] if err else (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0]
            if r.returncode not in (0, 1): first = "EXIT %d: %s" % (r.returncode, first)
            return first, defs
        for n in asked: defs[n] = mine.get(n, guess(n))
    return "too many rounds of -D", defs

def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    arch = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--arch=")), "sm_90a")
    verbose = "--verbose" in sys.argv
    own = "--own-values" in sys.argv
    tlc, root = args[0], args[1]
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
    ok, fails = 0, []
    for p in files:
        err, defs = sweep_file(tlc, p, arch, verbose, own)
        rel = os.path.relpath(p, root)
        if err is None:
            ok += 1
            if verbose: print("OK   %s" % rel)
        else:
            msg = err.split(": error: ", 1)[-1] if ": error: " in err else err
            fails.append((rel, msg))
            print("FAIL %s: %s" % (rel, msg[:200]))
    print("\n%d of %d files compile" % (ok, len(files)))
    causes = collections.Counter(re.sub(r"'[^']*'", "'_'", m)[:90] for _, m in fails)
    for c, n in causes.most_common(40): print("%4d  %s" % (n, c))

if __name__ == "__main__":
    main()
