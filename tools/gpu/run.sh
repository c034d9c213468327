#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with the carry made by
# tools/gpu/build.sh (gpu-build/carry, or $CARRY) carried along: the GPU
# tests, the Python package's tests, the JIT example, the JIT latency benchmark, the launch host-cost
# benchmark and the RMSNorm benchmark against torch. Logs go to $OUT (if set)
# or gpu-build/logs; a summary table is printed last.
#
#   tools/gpu/run.sh [--quick] [--no-sweep] [--tests-only | --bench-only]
#
# --quick: shorter benchmark, no bfloat16 item-6 grid. --no-sweep: the
# benchmark and test_rmsnorm use the rule of tools/bench/rmsnorm_config.h
# (else the benchmark's --sweep picks configs, and test_rmsnorm runs its
# many-rows picks through $TLC_RMSNORM_CONFIGS; the benchmark also reads its
# few-rows picks, $TLC_RMSNORM_SMALL_CONFIGS).
# --tests-only: the GPU test programs (test_rmsnorm with the configs of an
# earlier sweep in the log folder, if any). --bench-only: jit_bench,
# launch_bench and rmsnorm_bench.
set -uo pipefail
cd "$(dirname "$0")/../.."
carry=${CARRY:-gpu-build/carry}
logs=${OUT:-gpu-build/logs}
mkdir -p "$logs"
export TLC_CACHE_DIR=${TLC_CACHE_DIR:-/tmp/tlc-cache}
export PYTHONUNBUFFERED=1
quick="" sweep=--sweep tests=1 bench=1
for arg in "$@"; do
    case $arg in
    --quick) quick=--quick ;;
    --no-sweep) sweep="" ;;
    --tests-only) bench=0 ;;
    --bench-only) tests=0 ;;
    *) echo "run.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done
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

# The sweep's picks, when there are any, for both tables (else the header's).
export_configs() {
    unset TLC_RMSNORM_CONFIGS TLC_RMSNORM_SMALL_CONFIGS
    if [ -s "$logs/rmsnorm_configs.txt" ]; then export TLC_RMSNORM_CONFIGS=$(cat "$logs/rmsnorm_configs.txt"); fi
    if [ -s "$logs/rmsnorm_small_configs.txt" ]; then export TLC_RMSNORM_SMALL_CONFIGS=$(cat "$logs/rmsnorm_small_configs.txt"); fi
    echo "configs: TLC_RMSNORM_CONFIGS=${TLC_RMSNORM_CONFIGS:-(header)} TLC_RMSNORM_SMALL_CONFIGS=${TLC_RMSNORM_SMALL_CONFIGS:-(header)}"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$logs/gpu.txt"
test_rmsnorm() {
    export_configs
    step test_rmsnorm 300 "$carry/test_rmsnorm" dsl-examples/rmsnorm.tl
}
if [ $tests = 1 ]; then
    step jit_example 60 "$carry/jit_example" dsl-examples/rmsnorm.tl
    for t in "$carry"/test_*; do # every GPU test program but test_rmsnorm (below)
        n=$(basename "$t")
        [ "$n" = test_rmsnorm ] || step "${n#test_}" 120 "$t"
    done
    # The Python package (python/) on torch tensors, and its tests that need no GPU.
    step python 300 env TLC_LIBRARY="$carry/libtlc.so" PYTHONPATH=python PYTHONDONTWRITEBYTECODE=1 \
        python3 -m unittest discover -s python/tests -p 'test_*.py' -v
    # Without a sweep the configs are known now: test them before the long benchmark.
    if [ -z "$sweep" ] || [ $bench = 0 ]; then test_rmsnorm; fi
fi
if [ $bench = 1 ]; then
    step jit_bench 60 taskset -c 0 "$carry/jit_bench" dsl-examples/rmsnorm.tl --cold 20 --hits 2000
    step launch_bench 60 taskset -c 0 "$carry/launch_bench"
    rm -f "$logs/rmsnorm_configs.txt" "$logs/rmsnorm_small_configs.txt" # a stale sweep must not reach the test
    step rmsnorm_bench 540 python3 tools/bench/rmsnorm_bench.py --lib "$carry/libtlc.so" $sweep --out "$logs" $quick
    if [ $tests = 1 ] && [ -n "$sweep" ]; then test_rmsnorm; fi
fi

echo
echo "| step | result |"
echo "| --- | --- |"
for i in "${!names[@]}"; do echo "| ${names[$i]} | ${results[$i]} |"; done
grep -h "^| " "$logs/jit_bench.log" "$logs/launch_bench.log" 2>/dev/null
grep -h "test_rmsnorm:\|^FAIL" "$logs/test_rmsnorm.log" 2>/dev/null | head -20
grep -h "^best\|^rmsnorm_bench:\|^device\|^L2 cache\|^slower\|^host time" "$logs/rmsnorm_bench.log" 2>/dev/null
# The status: 1 if a step failed or timed out, else 0 (the greps above
# return 2 when a log is absent).
for r in "${results[@]}"; do
    case $r in PASS* | SKIP*) ;; *) exit 1 ;; esac
done
exit 0
