#!/usr/bin/env bash
# tlc's main job on the shipped kernels in dsl-examples/:
#   1. install dependencies, build tlc (release);
#   2. compile every kernel to checked Tile IR and print a one-line summary;
#   3. compile every kernel that lowers to PTX for sm_80 and sm_90a and
#      assemble it with ptxas where present (kernels whose tile ops are not
#      lowered yet are reported as such, with the compiler's reason);
#   4. run each shipped kernel on small shapes through the Tile IR
#      interpreter and compare with the plain C references (no GPU needed).
# Exit status 1 if a kernel fails to check, a produced PTX fails to
# assemble, or an interpreter result does not match its reference.
set -euo pipefail
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build=${TLC_RELEASE_BUILD_DIR:-$root/build-release}
jobs=$(nproc 2>/dev/null || echo 2)

bash "$root/tools/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTLC_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "$jobs" --target tlc_cli interp_check
tlc=$build/compiler/tlc
ptxas=${TLC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
[[ -x $ptxas ]] || ptxas=""

status=0
cd -- "$root/dsl-examples"
shopt -s nullglob
files=(*.tl)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "main-job: no kernels in dsl-examples/" >&2
  exit 1
fi

echo "== Tile IR =="
summaries=()
for f in "${files[@]}"; do
  if out=$("$tlc" --emit=summary "$f"); then
    echo "$out"
    while IFS= read -r line; do summaries+=("$line"); done <<<"$out"
  else
    status=1
  fi
done

echo "== PTX =="
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
for line in "${summaries[@]}"; do
  f=${line%%:*}
  rest=${line#*: }
  k=${rest%%:*}
  for arch in sm_80 sm_90a; do
    if "$tlc" --emit=ptx --arch=$arch --kernel="$k" -o "$tmp/$k.ptx" "$f" 2>"$tmp/err"; then
      msg="$(wc -c <"$tmp/$k.ptx") bytes of PTX"
      if [[ -n $ptxas ]]; then
        if "$ptxas" -arch=$arch -o "$tmp/$k.cubin" "$tmp/$k.ptx" 2>"$tmp/ptxas.err"; then
          msg="$msg, ptxas ok"
        else
          msg="$msg, PTXAS FAILED: $(head -1 "$tmp/ptxas.err")"
          status=1
        fi
      fi
      echo "$f: $k ($arch): $msg"
    else
      echo "$f: $k ($arch): not lowered yet: $(grep -m1 'error:' "$tmp/err" | sed 's/^[^ ]* error: //')"
    fi
  done
done

echo "== interpreter vs C references =="
"$build/tlc-interp-check" "$root/dsl-examples" || status=1

if [[ $status -eq 0 ]]; then
  echo "main-job: ok"
else
  echo "main-job: some kernels failed (see above)" >&2
fi
exit $status
