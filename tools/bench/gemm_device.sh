#!/usr/bin/env bash
# GEMM on the GPU machine, from the repository root, with gpu-build/carry
# (tools/gpu/build.sh, plus gemm_*.cubin made by `tlc --emit=cubin`; TLC_CARRY
# names another folder)
# carried: correctness on both paths (test_gemm_gpu --quick), the HGMMA check
# of the sm_90a SASS, and the benchmark against cuBLAS. Logs go to $OUT (or
# gpu-build/logs); the benchmark's table is printed last.
#
#   tools/bench/gemm_device.sh [gemm_bench.py options]
set -uo pipefail
cd "$(dirname "$0")/../.."
carry=${TLC_CARRY:-gpu-build/carry}
logs=${OUT:-gpu-build/logs}
mkdir -p "$logs"
export TLC_CACHE_DIR=${TLC_CACHE_DIR:-/tmp/tlc-cache}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$logs/gpu.txt"
t0=$SECONDS
timeout 240 "$carry/test_gemm_gpu" dsl-examples/gemm.tl --quick >"$logs/test_gemm_gpu.log" 2>&1
echo "test_gemm_gpu --quick: rc=$? $((SECONDS - t0))s"
grep -E "^FAIL|^perf|^test_gemm:" "$logs/test_gemm_gpu.log" | tail -n 14
for c in "$carry"/gemm_*.cubin; do
    [ -f "$c" ] || continue
    cuobjdump -sass "$c" >"$logs/$(basename "$c" .cubin).sass" 2>&1
    echo "$(basename "$c"): HGMMA $(grep -c HGMMA "$logs/$(basename "$c" .cubin).sass")," \
         "HMMA $(grep -c 'HMMA\.' "$logs/$(basename "$c" .cubin).sass")," \
         "LDL/STL $(grep -cE 'LDL|STL' "$logs/$(basename "$c" .cubin).sass")"
done
t0=$SECONDS
# SM clock, power and temperature every 500 ms while the benchmark runs (read
# only: the card's settings are left as they are), summarised after it.
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 500 \
    >"$logs/gpu_clocks.csv" 2>/dev/null &
smi=$!
timeout "${BENCH_TIMEOUT:-420}" python3 tools/bench/gemm_bench.py --lib "$carry/libtlc.so" "$@" >"$logs/gemm_bench.log" 2>&1
echo "gemm_bench: rc=$? $((SECONDS - t0))s"
kill $smi 2>/dev/null
python3 - "$logs/gpu_clocks.csv" <<'PY'
import sys
rows = [[float(x) for x in l.split(",")] for l in open(sys.argv[1]) if l.count(",") == 2 and "N/A" not in l]
busy = sorted(r for r in rows if r[0] > 1000)
if busy:
    c = [r[0] for r in busy]
    print(f"while busy (SM clock > 1000 MHz, {len(busy)} samples): SM clock min {c[0]:.0f} / median "
          f"{c[len(c) // 2]:.0f} / max {c[-1]:.0f} MHz, power mean {sum(r[1] for r in busy) / len(busy):.0f} / "
          f"max {max(r[1] for r in busy):.0f} W, max {max(r[2] for r in busy):.0f} C")
PY
grep -E "^device|WRONG|Error|error" "$logs/gemm_bench.log" | head -n 8
sed -n '/^| dtype/,$p' "$logs/gemm_bench.log"
