#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with gpu-build/carry
# (made by tools/gpu/build.sh) carried along: the GPU tests, the JIT example,
# the JIT latency benchmark and the RMSNorm benchmark against torch. Logs go
# to $OUT (if set) or gpu-build/logs; a summary table is printed last.
#
#   tools/gpu/run.sh [--quick]     (--quick: shorter benchmark, no bfloat16 grid)
set -uo pipefail
cd "$(dirname "$0")/../.."
carry=gpu-build/carry
logs=${OUT:-gpu-build/logs}
mkdir -p "$logs"
export TLC_CACHE_DIR=${TLC_CACHE_DIR:-/tmp/tlc-cache}
export PYTHONUNBUFFERED=1
quick=${1:-}
declare -a names results

step() { # step NAME TIMEOUT_S COMMAND... : runs it, logs it, records PASS/FAIL/SKIP
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    echo "=== $name: $*"
    timeout "$limit" "$@" >"$logs/$name.log" 2>&1
    local rc=$?
    tail -n 40 "$logs/$name.log"
    local r=FAIL
    case $rc in 0) r=PASS ;; 77) r=SKIP ;; 124) r="TIMEOUT(${limit}s)" ;; esac
    names+=("$name")
    results+=("$r rc=$rc $((SECONDS - t0))s")
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$logs/gpu.txt"
step jit_example 60 "$carry/jit_example" dsl-examples/rmsnorm.tl
for t in "$carry"/test_*; do # every GPU test program but test_rmsnorm (below)
    n=$(basename "$t")
    [ "$n" = test_rmsnorm ] || step "${n#test_}" 120 "$t"
done
step jit_bench 60 taskset -c 0 "$carry/jit_bench" dsl-examples/rmsnorm.tl --cold 20 --hits 2000
# The benchmark's --sweep picks a (BLOCK_M, threads) per C (rmsnorm_configs.txt);
# the correctness test then runs exactly those configs.
step rmsnorm_bench 300 python3 tools/bench/rmsnorm_bench.py --lib "$carry/libtlc.so" --sweep --out "$logs" $quick
export TLC_RMSNORM_CONFIGS=$(cat "$logs/rmsnorm_configs.txt" 2>/dev/null)
step test_rmsnorm 180 "$carry/test_rmsnorm" dsl-examples/rmsnorm.tl

echo
echo "| step | result |"
echo "| --- | --- |"
for i in "${!names[@]}"; do echo "| ${names[$i]} | ${results[$i]} |"; done
grep -h "^| " "$logs/jit_bench.log" 2>/dev/null
grep -h "test_rmsnorm:\|^FAIL" "$logs/test_rmsnorm.log" 2>/dev/null | head -20
grep -h "^best:\|^rmsnorm_bench:\|^device" "$logs/rmsnorm_bench.log" 2>/dev/null
