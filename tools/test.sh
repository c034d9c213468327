#!/usr/bin/env bash
# Installs dependencies, builds tlc from scratch with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer and -Werror, and runs the
# whole test suite. Exit status: ctest's.
# TLC_TEST_BUILD_DIR overrides the build directory (default: build-test).
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=${TLC_TEST_BUILD_DIR:-$root/build-test}
jobs=$(nproc 2>/dev/null || echo 2)

bash "$root/tools/setup.sh"
rm -rf -- "$build"
CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
  -DTLC_SANITIZE=ON -DTLC_WERROR=ON
cmake --build "$build" -j "$jobs"
cd -- "$build"
ctest --output-on-failure -j "$jobs"
