#!/usr/bin/env bash
# Compiles every kernel of every TileLang file (*.py) in DIR that has a
# `# PTX: ARGS` line to PTX for sm_90a and sm_80, with ARGS (its -D values)
# on the command line, and assembles the PTX with ptxas for that arch.
# Files without the line (the diagnostics' tests) are not compiled.
# usage: check_tilelang_files.sh TLC DIR [PTXAS]; exit 77 without ptxas.
set -u
tlc=$1 dir=$2 ptxas=${3:-}
[[ -x $ptxas ]] || ptxas=$(command -v ptxas || true)
[[ -x ${ptxas:-} ]] || ptxas=/usr/local/cuda/bin/ptxas
if [[ ! -x $ptxas ]]; then echo "skipped: ptxas not found"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf -- "$tmp"' EXIT
fail=0 assembled=0
for f in "$dir"/*.py; do
  line=$(grep -m1 '^# PTX:' "$f") || continue
  read -r -a args <<< "${line#"# PTX:"}"
  kernels=$("$tlc" --emit=summary "${args[@]}" "$f" | sed -E 's/^[^:]+: ([^:]+):.*/\1/') || {
    echo "FAIL: $f does not check"; fail=1; continue; }
  for k in $kernels; do
    for arch in sm_90a sm_80; do
      what="$(basename "$f") $k $arch"
      if ! "$tlc" --emit=ptx --arch=$arch "${args[@]}" --kernel="$k" -o "$tmp/k.ptx" "$f" 2>"$tmp/err"; then
        echo "FAIL: $what: $(grep -m1 'error' "$tmp/err")"; fail=1
      elif ! "$ptxas" -arch=$arch -o "$tmp/k.cubin" "$tmp/k.ptx" 2>"$tmp/ptxas.err"; then
        echo "FAIL: $what: ptxas: $(head -3 "$tmp/ptxas.err")"; fail=1
      else
        echo "ok: $what"; assembled=$((assembled + 1))
      fi
    done
  done
done
echo "TileLang files: $assembled kernels assembled by ptxas"
[[ $assembled -gt 0 ]] || fail=1
exit $fail
