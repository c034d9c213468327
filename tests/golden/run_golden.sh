#!/usr/bin/env bash
# One golden test: run_golden.sh TLC DIR/NAME.tl (or DIR/NAME.py, a TileLang file)
#
# Runs `TLC <args> NAME.tl` in DIR with NAME.tl also on standard input.
# <args> comes from an optional first line `# RUN: <args>` (default
# `--emit=tir`), split at whitespace with no quoting (so `-D order="col"`
# passes the quotes to tlc). In <args>, `%s` stands for the file name (then
# it is not appended) and `%nofile` means: append no file name.
#
# NAME.expected must hold tlc's standard output, then its standard error,
# then a line `# exit: N`. Output mentioning "internal error" or a sanitizer
# report always fails (it is a compiler bug, never an expected result). On a mismatch the test prints a unified diff and
# fails. With TLC_UPDATE_GOLDEN=1 in the environment it rewrites
# NAME.expected instead (then review the change with `git diff`).
set -u
tlc=$1
tl=$2
dir=$(dirname -- "$tl")
file=$(basename -- "$tl")
name=${file%.tl}
name=${name%.py}
cd -- "$dir" || exit 1

args="--emit=tir"
first=$(head -n 1 -- "$file")
if [[ $first == "# RUN:"* ]]; then
  args=${first#"# RUN:"}
fi
read -r -a words <<< "$args"
argv=()
append=1
for w in "${words[@]}"; do
  case $w in
    %s) argv+=("$file"); append=0 ;;
    %nofile) append=0 ;;
    *) argv+=("$w") ;;
  esac
done
if [[ $append == 1 ]]; then argv+=("$file"); fi

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
"$tlc" "${argv[@]}" < "$file" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
{
  cat "$tmp/stdout" "$tmp/stderr"
  echo "# exit: $rc"
} > "$tmp/actual"

# Never accept a compiler bug or a sanitizer report as expected output.
if grep -qE "internal error|AddressSanitizer|LeakSanitizer|runtime error:" "$tmp/actual"; then
  echo "tlc ${argv[*]} in $dir reported a compiler bug or a sanitizer error:"
  cat "$tmp/actual"
  exit 1
fi

if [[ ${TLC_UPDATE_GOLDEN:-0} == 1 ]]; then
  if ! cmp -s "$tmp/actual" "$name.expected"; then
    cp -- "$tmp/actual" "$name.expected"
    echo "updated $dir/$name.expected"
  fi
  exit 0
fi
if [[ ! -f $name.expected ]]; then
  echo "missing $dir/$name.expected; create it with TLC_UPDATE_GOLDEN=1 (see README.md). Output was:"
  cat "$tmp/actual"
  exit 1
fi
if ! diff -u --label "$name.expected" --label "actual: tlc ${argv[*]}" "$name.expected" "$tmp/actual"; then
  echo "golden mismatch for $dir/$file (rerun with TLC_UPDATE_GOLDEN=1 to accept the new output)"
  exit 1
fi
