#!/usr/bin/env bash
# Compiles every kernel of every shipped .tl file in dsl-examples/ to PTX for
# each supported arch (with tlc's own PTX generator, the default, and for
# sm_80 and sm_90a also with LLVM's at -O3 and at -O0: unoptimized code must
# assemble too) and assembles the PTX with ptxas for that arch.
# A kernel may fail to lower on an arch for exactly two reasons: it needs
# more shared memory than that arch has (mla_decode_split on sm_80..sm_89),
# or float8 work an older arch has no instructions for (float8 gemms and
# conversions before sm_89); any other
# failure, and any ptxas failure, fails the test. On sm_90a, the
# primary target, every shipped kernel must lower, and from the direct
# generator (and LLVM's at -O3) ptxas must
# not serialize its wgmma instructions (its C75xx notes: a wgmma group left
# in flight where ptxas cannot follow it costs every wgmma of the kernel;
# unoptimized code may).
# usage: check_shipped_ptx.sh TLC EXAMPLES_DIR [PTXAS]; exit 77 without ptxas.
set -u
tlc=$1 examples=$2 ptxas=${3:-}
[[ -x $ptxas ]] || ptxas=$(command -v ptxas || true)
[[ -x ${ptxas:-} ]] || ptxas=/usr/local/cuda/bin/ptxas
if [[ ! -x $ptxas ]]; then echo "skipped: ptxas not found"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf -- "$tmp"' EXIT
fail=0 assembled=0 too_big=0 no_fp8=0
for f in "$examples"/*.tl; do
  kernels=$("$tlc" --emit=summary "$f" | sed -E 's/^[^:]+: ([^:]+):.*/\1/') || { echo "FAIL: $f does not check"; fail=1; continue; }
  for k in $kernels; do
    for config in sm_80 sm_86 sm_89 sm_90 sm_90a "sm_80 --backend=llvm" "sm_90a --backend=llvm" "sm_80 --backend=llvm -O0" "sm_90a --backend=llvm -O0"; do
      read -r arch level <<< "$config"
      what="$(basename "$f") $k $config"
      # shellcheck disable=SC2086 # $level: zero or more options
      if "$tlc" --emit=ptx --arch=$arch $level --kernel="$k" -o "$tmp/k.ptx" "$f" 2>"$tmp/err"; then
        # ptxas (CUDA 13.0, -O1 and up) has dropped the upper half of such a
        # constant when it folded the add into an IMAD.WIDE (wgmma descriptors:
        # docs/architecture.md, JIT); lowering builds none.
        wide_add=$(grep -Em1 'add\.s64[[:space:]]+%rd[0-9]+, %rd[0-9]+, -?[0-9]{10,}' "$tmp/k.ptx" |
                   awk '{ v = $NF; if (v + 0 >= 4294967296 || v + 0 < -4294967296) print }')
        if [[ -n $wide_add ]]; then
          echo "FAIL: $what: a 64-bit add of a constant beyond 32 bits: $wide_add"; fail=1
        elif "$ptxas" -arch=$arch -v -o "$tmp/k.cubin" "$tmp/k.ptx" >"$tmp/ptxas.out" 2>"$tmp/ptxas.err"; then
          serialized=
          [[ $arch == sm_90a && ( -z $level || $level == --backend=llvm ) ]] && serialized=$(grep -hEm1 'C75[0-9][0-9].*serializ' "$tmp/ptxas.out" "$tmp/ptxas.err")
          if [[ -n $serialized ]]; then
            echo "FAIL: $what: ptxas serializes the wgmmas: $serialized"; fail=1
          else
            echo "ok: $what"; assembled=$((assembled + 1))
          fi
        else
          echo "FAIL: $what: ptxas: $(head -3 "$tmp/ptxas.err")"; fail=1
        fi
      elif [[ $arch != sm_90a ]] && grep -Eq "bytes of shared memory.*(allows|limit of)" "$tmp/err" && ! grep -q "internal error" "$tmp/err"; then
        echo "ok (does not fit): $what: $(grep -m1 -o 'needs.*' "$tmp/err")"; too_big=$((too_big + 1))
      elif [[ $arch != sm_90a ]] && grep -Eq "float8 gemms need sm_89|converts float8_e4m3 values, which needs sm_89" "$tmp/err" &&
           ! grep -q "internal error" "$tmp/err"; then
        echo "ok (no float8 instructions): $what"; no_fp8=$((no_fp8 + 1))
      else
        echo "FAIL: $what: $(grep -m1 'error' "$tmp/err")"; fail=1
      fi
    done
  done
done
echo "shipped kernels: $assembled assembled by ptxas, $too_big over an arch's shared memory, $no_fp8 without float8 instructions"
[[ $assembled -gt 0 ]] || fail=1
exit $fail
