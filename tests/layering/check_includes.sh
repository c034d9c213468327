#!/usr/bin/env bash
# Folders of compiler/ depend downward only (docs/architecture.md, "Folders"):
# every #include "..." of a file in compiler/ must name a header of its own
# folder or of a folder listed below for it. Fails, naming each offending
# include, when a file includes a header from a folder above its own (or
# from a folder beside it that it may not use).
# usage: check_includes.sh COMPILER_DIR
set -u
root=${1:?usage: check_includes.sh COMPILER_DIR}
declare -A may=(
  [support]=""
  [target]="support"
  [ir]="target support"
  [layout]="target ir support"
  [frontend]="ops lowerkit layout interp target ir support"
  [codegen]="target ir support"
  [interp]="target ir support"
  [lowerkit]="layout target ir support"
  [ops]="lowerkit layout interp target ir support"
  [transform]="ops lowerkit layout target ir support"
  [api]="transform ops lowerkit layout target frontend codegen interp ir support"
  [driver]="api transform ops lowerkit layout target frontend codegen interp ir support"
)
fail=0 checked=0
for dir in "$root"/*/; do
  folder=$(basename "$dir")
  if [[ -z ${may[$folder]+set} ]]; then
    echo "FAIL: compiler/$folder is not in the layer table of $0"; fail=1; continue
  fi
  for f in "$dir"*.[chly]; do
    [[ -e $f ]] || continue
    while IFS= read -r line; do
      inc=${line#*\"}; inc=${inc%%\"*}
      case $inc in
        ../*) target=${inc#../}; target=${target%%/*} ;;
        */*) target=${inc%%/*} ;;
        *) continue ;; # a header of the file's own folder (or generated beside it)
      esac
      [[ $target == "$folder" || $target == tlc ]] && continue
      checked=$((checked + 1))
      if [[ " ${may[$folder]} " != *" $target "* ]]; then
        echo "FAIL: compiler/$folder/$(basename "$f") includes \"$inc\": $folder may use only: ${may[$folder]:-nothing}"
        fail=1
      fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
  done
done
echo "layering: $checked cross-folder includes checked"
exit $fail
