#!/usr/bin/env bash
# Compiles the kernels of TileLang files (*.py) in DIR to PTX for sm_90a and
# sm_80 and assembles the PTX with ptxas for that arch. Each configuration
# is a file with its -D values: a file's own `# PTX: ARGS` line, and the
# lines `FILE ARGS...` of DIR/ptx_defines.txt (several lines may name one
# file). Files with neither (the diagnostics' tests) are not compiled. A
# configuration with --arch=ARCH among its values is compiled for ARCH only
# (a kernel whose shared memory only sm_90's limit holds).
# A fourth argument is passed to every tlc command (e.g. --backend=direct).
# usage: check_tilelang_files.sh TLC DIR [PTXAS [TLC_OPTION]]; exit 77 without ptxas.
set -u
tlc=$1 dir=$2 ptxas=${3:-} extra=${4:-}
[[ -x $ptxas ]] || ptxas=$(command -v ptxas || true)
[[ -x ${ptxas:-} ]] || ptxas=/usr/local/cuda/bin/ptxas
if [[ ! -x $ptxas ]]; then echo "skipped: ptxas not found"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf -- "$tmp"' EXIT
configs=()
for f in "$dir"/*.py; do
  line=$(grep -m1 '^# PTX:' "$f") && configs+=("$(basename "$f") ${line#"# PTX:"}")
done
if [[ -f $dir/ptx_defines.txt ]]; then
  while read -r line; do
    [[ -z $line || $line == \#* ]] || configs+=("$line")
  done < "$dir/ptx_defines.txt"
fi
fail=0 assembled=0
for config in "${configs[@]}"; do
  read -r -a words <<< "$config"
  f=$dir/${words[0]} args=() archs=(sm_90a sm_80)
  for w in "${words[@]:1}"; do
    if [[ $w == --arch=* ]]; then archs=("${w#--arch=}"); else args+=("$w"); fi
  done
  kernels=$("$tlc" --emit=summary "${args[@]}" "$f" | sed -E 's/^[^:]+: ([^:]+):.*/\1/') || {
    echo "FAIL: $config does not check"; fail=1; continue; }
  for k in $kernels; do
    for arch in "${archs[@]}"; do
      what="$config: $k $arch"
      if ! "$tlc" --emit=ptx --arch=$arch ${extra:+"$extra"} "${args[@]}" --kernel="$k" -o "$tmp/k.ptx" "$f" 2>"$tmp/err"; then
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
