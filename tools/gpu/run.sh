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
step runtime_smoke 60 "$carry/test_runtime_smoke"
step jit_bench 60 taskset -c 0 "$carry/jit_bench" dsl-examples/rmsnorm.tl --cold 20 --hits 2000
step test_rmsnorm 220 "$carry/test_rmsnorm" dsl-examples/rmsnorm.tl
step rmsnorm_bench 300 python3 tools/bench/rmsnorm_bench.py --lib "$carry/libtlc.so" --sweep --out "$logs" $quick

echo
echo "| step | result |"
echo "| --- | --- |"
for i in "${!names[@]}"; do echo "| ${names[$i]} | ${results[$i]} |"; done
grep -h "^| " "$logs/jit_bench.log" 2>/dev/null
grep -h "test_rmsnorm:\|^FAIL" "$logs/test_rmsnorm.log" 2>/dev/null | head -20
