#!/usr/bin/env bash
# Writes the PTX, Thread IR and layout dumps of every shipped kernel for every
# arch, plus the benchmark and GPU-test configurations, into DIR. Two
# snapshots taken before and after a refactoring are compared with
# `diff -r` to show that generated code did not change.
# usage: tools/dev/ptx_snapshot.sh TLC DIR
set -u
tlc=$1 out=$2
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
ex=$root/dsl-examples
mkdir -p "$out"
one() {  # name file arch kernel [-D ...]
  local name=$1 f=$2 arch=$3 k=$4; shift 4
  for emit in ptx thread layout; do
    "$tlc" --emit=$emit --arch=$arch --kernel="$k" "$@" "$f" >"$out/$name.$arch.$emit" 2>&1
    echo "exit $?" >>"$out/$name.$arch.$emit"
  done
}
for arch in sm_80 sm_86 sm_89 sm_90 sm_90a; do
  for k in matmul; do
    one gemm "$ex/gemm.tl" $arch $k
    one gemm_bf16_relu "$ex/gemm.tl" $arch $k -D dtype=bfloat16 -D relu=True
    one gemm_4096 "$ex/gemm.tl" $arch $k -D M=4096 -D N=4096 -D K=4096
    one gemm_fp8 "$ex/gemm_fp8.tl" $arch matmul_fp8
  done
  for k in rmsnorm rmsnorm_silu; do
    one $k "$ex/rmsnorm.tl" $arch $k
    one ${k}_c4096 "$ex/rmsnorm.tl" $arch $k -D C=4096 -D BLOCK_M=1 -D threads=256 -D dtype=bfloat16
    one ${k}_c640 "$ex/rmsnorm.tl" $arch $k -D C=640 -D BLOCK_M=2 -D threads=64
  done
  for k in mla_decode_schedule mla_decode_split mla_decode_combine; do
    one $k "$ex/mla_decode.tl" $arch $k
    one ${k}_bf16_nc "$ex/mla_decode.tl" $arch $k -D dtype=bfloat16 -D causal=False
    one ${k}_st1 "$ex/mla_decode.tl" $arch $k -D num_stages=1
  done
  one flash_attention "$ex/flash_attention.tl" $arch flash_attention
  one flash_attention_causal_d64 "$ex/flash_attention.tl" $arch flash_attention -D causal=True -D dim=64 -D dtype=float16
  one flash_attention_overlap "$ex/flash_attention.tl" $arch flash_attention -D num_stages=3 -D block_N=64
  one flash_attention_t384 "$ex/flash_attention.tl" $arch flash_attention -D threads=384 -D block_M=192 -D block_N=64
  one flash_attention_varlen "$ex/flash_attention.tl" $arch flash_attention_varlen
done
i=0
for cfg in "threads=256 block_M=256 block_N=128 block_K=64 num_stages=4" \
           "threads=256 block_M=128 block_N=256 block_K=64 num_stages=4 panel_size=8" \
           "threads=256 block_M=256 block_N=128 block_K=32 num_stages=3" \
           "threads=256 block_M=128 block_N=128 block_K=32 num_stages=4" \
           "threads=256 block_M=128 block_N=256 block_K=32 num_stages=3" \
           "threads=256 block_M=128 block_N=256 block_K=64 num_stages=3 dtype=bfloat16"; do
  defs=(); for d in $cfg; do defs+=(-D "$d"); done
  for arch in sm_80 sm_90a; do one gemm_cfg$i "$ex/gemm.tl" $arch matmul "${defs[@]}"; done
  i=$((i + 1))
done
for f in "$root"/tests/golden/*/*.tl; do
  n=golden_$(basename "$(dirname "$f")")_$(basename "$f" .tl)
  for arch in sm_80 sm_90a; do
    for emit in ptx layout plan; do
      "$tlc" --emit=$emit --arch=$arch "$f" >"$out/$n.$arch.$emit" 2>&1; echo "exit $?" >>"$out/$n.$arch.$emit"
    done
  done
done
