#!/usr/bin/env bash
# Builds tests/package/parent, a project that takes the repository in with
# add_subdirectory and links its consumer to tlc::tlc, and runs the consumer.
# usage: check_add_subdirectory.sh SOURCE_DIR VERSION CC [JOBS]
set -euo pipefail
src=$1 version=$2 cc=$3 jobs=${4:-2}
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
# No build type: -O0, which builds the library fastest.
cmake -S "$src/tests/package/parent" -B "$work/build" -DTLC_SOURCE_DIR="$src" -DCMAKE_C_COMPILER="$cc" \
      >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "FAIL: configuring the parent project"; exit 1; }
cmake --build "$work/build" -j "$jobs" --target consumer >"$work/build.log" 2>&1 \
  || { tail -50 "$work/build.log"; echo "FAIL: building the parent project"; exit 1; }
"$work/build/consumer" "$version" || { echo "FAIL: the consumer of the parent project"; exit 1; }
echo "add_subdirectory: ok"
