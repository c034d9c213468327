#!/usr/bin/env bash
# tlc's main job: install dependencies, build tlc (release), then compile
# every shipped kernel in dsl-examples/ to checked Tile IR and print a
# one-line summary per kernel. Exit status 1 if any kernel fails.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=${TLC_RELEASE_BUILD_DIR:-$root/build-release}
jobs=$(nproc 2>/dev/null || echo 2)

bash "$root/tools/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTLC_BUILD_TESTS=OFF
cmake --build "$build" -j "$jobs"
tlc=$build/compiler/tlc

status=0
cd -- "$root/dsl-examples"
shopt -s nullglob
kernels=(*.tl)
if [[ ${#kernels[@]} -eq 0 ]]; then
  echo "main-job: no kernels in dsl-examples/" >&2
  exit 1
fi
for f in "${kernels[@]}"; do
  "$tlc" --emit=summary "$f" || status=1
done
if [[ $status -eq 0 ]]; then
  echo "main-job: ${#kernels[@]} kernel files compiled to checked Tile IR"
else
  echo "main-job: some kernel files failed (see above)" >&2
fi
exit $status
