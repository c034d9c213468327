#!/usr/bin/env bash
# Runs the Python package's unittest files matching PATTERN in TESTS_DIR with
# the first of $TLC_PYTHON, python3, /usr/bin/python3 that has NumPy
# (tools/setup.sh installs Debian's python3-numpy), and torch with --gpu,
# which exits 77 (skipped) where torch or a CUDA device is missing.
# usage: run_python_tests.sh TESTS_DIR PATTERN [--gpu]
set -euo pipefail
dir=$1 pattern=$2 gpu=${3:-}
needs="import numpy"
[[ $gpu == --gpu ]] && needs="import numpy, torch"
py=""
for cand in ${TLC_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c "$needs" 2>/dev/null; then py=$cand; break; fi
done
if [[ -z $py && $gpu == --gpu ]]; then
  echo "skipped: no Python with NumPy and torch"
  exit 77
elif [[ -z $py ]]; then
  echo "FAIL: no Python 3 with NumPy (install python3-numpy: bash tools/setup.sh)" >&2
  exit 1
fi
if [[ $gpu == --gpu ]] && ! "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "skipped: no torch with a CUDA device"
  exit 77
fi
echo "python: $py ($("$py" --version 2>&1))"
LD_PRELOAD=${TLC_PYTHON_PRELOAD:-${LD_PRELOAD:-}} exec "$py" -m unittest discover -s "$dir" -p "$pattern" -v
