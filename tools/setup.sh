#!/usr/bin/env bash
# Installs what tlc needs to build and test, from Debian 12's packages.
# Fast when nothing is missing: only absent packages are installed, and
# apt-get update runs only when something has to be installed.
set -euo pipefail

packages=(
  cmake flex bison      # build, lexer and parser generators
  libcmocka-dev         # unit tests
  clang                 # compiler of the test build (ASan/UBSan, libFuzzer)
  llvm-22-dev           # LLVM 22: NVPTX backend through the LLVM-C API
  pkg-config            # the package tests build a program with tlc.pc
  python3-numpy         # the Python package's interpreter tests (python/tests)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all dependencies are installed"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
